package wide

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// marked is the value writer w writes in generation g: every property
// carries the mark "g/w", so a value assembled from two writes shows it,
// and its size (and so its rows) depends on the mark.
func marked(g, w int) Properties {
	mark := fmt.Sprintf("%d/%d", g, w)
	n := 100 + 250*((g+w)%4) // 1 to 4 rows
	v := make(Properties, n+2)
	for i := range n {
		v[fmt.Sprintf("P%04d", i)] = mark
	}
	v["Mark"] = mark
	v["Body"] = strings.Repeat(mark+" ", 40_000/len(mark)) // split in pieces
	return v
}

// checkWhole reports whether v is exactly one writer's value, and whose.
func checkWhole(v Properties) (string, error) {
	mark, _ := v["Mark"].(string)
	var g, w int
	if _, err := fmt.Sscanf(mark, "%d/%d", &g, &w); err != nil {
		return "", fmt.Errorf("no mark: %v", err)
	}
	if err := sameProps(v, marked(g, w)); err != nil {
		return mark, fmt.Errorf("value marked %s is not that write's value: %v", mark, err)
	}
	return mark, nil
}

// Writers that read the same version and write at once: exactly one
// wins, the others get a ConditionError, and the stored value is the
// winner's, whole.
func TestConcurrentWritersOneWins(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		rounds, writers := 15, 4
		if b.Short() {
			rounds = 4
		}
		name := freshTable(t, b)
		var etag store.ETag
		wins, conflicts := 0, 0
		for g := range rounds {
			var wg sync.WaitGroup
			etags := make([]store.ETag, writers)
			errs := make([]error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Each writer has its own Wide, as separate processes would.
					wd := newWide[Properties](t, b.Store, name, nil)
					v := marked(g, w)
					etags[w], errs[w] = wd.Put(t.Context(), "p", "v", &v, etag)
				}()
			}
			wg.Wait()
			winner := -1
			for w, err := range errs {
				switch {
				case err == nil && winner < 0:
					winner = w
				case err == nil:
					t.Fatalf("round %d: writers %d and %d both won", g, winner, w)
				case etag != "" && errors.Is(err, partition.ErrChanged) && errors.Is(err, store.ErrPreconditionFailed) && !errors.Is(err, partition.ErrConflict),
					etag == "" && errors.Is(err, partition.ErrDuplicate) && errors.Is(err, store.ErrAlreadyExists) && !errors.Is(err, partition.ErrConflict):
					conflicts++
				default:
					t.Fatalf("round %d, writer %d: %v", g, w, err)
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: nobody won", g)
			}
			wins++
			s, err := newWide[Properties](t, b.Store, name, nil).Read(t.Context(), "p", "v")
			if err != nil {
				t.Fatal(err)
			}
			mark, err := checkWhole(s.Value)
			if err != nil || mark != fmt.Sprintf("%d/%d", g, winner) || s.ETag != etags[winner] || s.Version != int64(g+1) {
				t.Fatalf("round %d: stored %s at version %d, want the winner %d/%d: %v", g, mark, s.Version, g, winner, err)
			}
			etag = s.ETag
		}
		t.Logf("%s: %d rounds of %d writers on one version: %d won, %d got a conflict, the stored value always one winner's whole value", b.Name, rounds, writers, wins, conflicts)
	})
}

// Unconditional writers all land, one after another: the version counts
// every write and the value is the last one's, whole.
func TestConcurrentUnconditionalWriters(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		writers, each := 4, 10
		if b.Short() {
			each = 3
		}
		name := freshTable(t, b)
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wd := newWide[Properties](t, b.Store, name, &Options{Attempts: 1000,
					Backoff: func(int) time.Duration { return time.Millisecond }})
				for g := range each {
					v := marked(g, w)
					if _, err := wd.Put(t.Context(), "p", "v", &v, store.ETagAny); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		s, err := newWide[Properties](t, b.Store, name, nil).Read(t.Context(), "p", "v")
		if err != nil {
			t.Fatal(err)
		}
		mark, err := checkWhole(s.Value)
		t.Logf("%s: %d writers x %d unconditional writes: version %d, stored value %s in %d rows", b.Name, writers, each, s.Version, mark, s.Rows)
		if err != nil || s.Version != int64(writers*each) {
			t.Fatalf("version %d after %d writes: %v", s.Version, writers*each, err)
		}
		if n := len(rows(t, newWide[Properties](t, b.Store, name, nil).Table(), "p")); n != s.Rows {
			t.Fatalf("%d rows stored for a value of %d rows", n, s.Rows)
		}
	})
}

// Readers that read a row at a time (so every read spans several pages)
// while writers keep rewriting the value with one of several sizes: no
// read ever returns a value assembled from two writes.
func TestReadsNeverMixVersions(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		writes, readers := 80, 2
		if b.Short() {
			writes = 12
		}
		name := freshTable(t, b)
		first := marked(0, 0)
		if _, err := newWide[Properties](t, b.Store, name, nil).Put(t.Context(), "p", "v", &first, ""); err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(t.Context())
		var reads, retried, gaveUp atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, readers+1)
		for range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := newWide[Properties](t, b.Store, name, &Options{PageSize: 1, Attempts: 20})
				for ctx.Err() == nil {
					s, err := r.Read(ctx, "p", "v")
					switch {
					case errors.Is(err, ErrInconsistentRead):
						gaveUp.Add(1)
						continue
					case ctx.Err() != nil:
						return
					case err != nil:
						errs <- err
						return
					}
					reads.Add(1)
					if s.Attempts > 1 {
						retried.Add(1)
					}
					if _, err := checkWhole(s.Value); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		w := newWide[Properties](t, b.Store, name, nil)
		for g := 1; g <= writes; g++ {
			v := marked(g, 0)
			if _, err := w.Put(t.Context(), "p", "v", &v, store.ETagAny); err != nil {
				errs <- err
				break
			}
		}
		stop()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		t.Logf("%s: %d writes of 1 to 4 rows while %d readers read a row per page: %d whole reads (%d of them read again after a write landed mid-read), %d gave up after 20 attempts, 0 mixed",
			b.Name, writes, readers, reads.Load(), retried.Load(), gaveUp.Load())
		if reads.Load() == 0 {
			t.Fatal("no read completed")
		}
	})
}

// racingTable lands a write between the first and the second page of a
// read, once.
type racingTable struct {
	store.Table
	once  sync.Once
	write func()
}

func (r *racingTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if q.Continuation != "" {
		r.once.Do(r.write)
	}
	return r.Table.Query(ctx, q)
}

// racingTypedTable is racingTable over a table's typed lane, which a read
// takes when the table has one.
type racingTypedTable struct {
	store.TypedTable
	once  sync.Once
	write func()
}

func (r *racingTypedTable) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	if q.Continuation != "" {
		r.once.Do(r.write)
	}
	return r.TypedTable.QueryInto(ctx, q, next)
}

// racing wraps the tables of st to land write between the first and the
// second page of a read, once: through the typed lane, or (typed false)
// through Query with the typed lane hidden.
func racing(st store.Store, typed bool, write func()) store.Store {
	return wrapped{st, func(tb store.Table) store.Table {
		if typed {
			return &racingTypedTable{TypedTable: tb.(store.TypedTable), write: write}
		}
		return &racingTable{Table: tb, write: write}
	}}
}

// A write that lands between the pages of a read makes the read start
// again: it returns the new version whole, or not found after a delete.
func TestReadAcrossAWrite(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to int // rows before and after (0: deleted)
	}{
		{"the value grows", 2, 4},
		{"the value shrinks", 4, 1},
		{"the value keeps its rows", 3, 3},
		{"the value is deleted", 3, 0},
	} {
		for _, typed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/typed=%v", tc.name, typed), func(t *testing.T) {
				backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
					name := freshTable(t, b)
					w := newWide[Properties](t, b.Store, name, nil)
					v := counters(248+251*(tc.from-1), 0)
					etag, err := w.Put(t.Context(), "p", "v", &v, "")
					if err != nil {
						t.Fatal(err)
					}
					after := counters(248+251*(tc.to-1), 1000)
					write := func() {
						if tc.to == 0 {
							err = w.Delete(t.Context(), "p", "v", etag)
						} else {
							_, err = w.Put(t.Context(), "p", "v", &after, etag)
						}
						if err != nil {
							t.Error(err)
						}
					}
					r := newWide[Properties](t, racing(b.Store, typed, write), name, &Options{PageSize: 1})
					s, err := r.Read(t.Context(), "p", "v")
					if tc.to == 0 {
						if !errors.Is(err, store.ErrNotFound) {
							t.Fatalf("read across a delete: %v", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("%s: %d rows to %d: read in %d attempts, %d requests", b.Name, tc.from, tc.to, s.Attempts, s.Requests)
					if s.Attempts != 2 || s.Version != 2 || s.Rows != tc.to || sameProps(s.Value, after) != nil {
						t.Fatalf("%d attempts, version %d, %d rows: want the second version whole after 2 attempts", s.Attempts, s.Version, s.Rows)
					}
				})
			})
		}
	}
}
