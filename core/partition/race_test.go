package partition_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/store"
)

// shared is a writer that adds one to a count kept in a row no head
// covers ("total"), through a head of its own: many such writers share
// the row, each writing it conditional on the ETag its attempt read (an
// insert when it read none), as indexentity's list rows are written. A
// refusal of that row is a race with another head's writer, which only
// RunOptions.Race can tell the commit loop.
type shared struct {
	t     *testing.T
	tbl   store.Table
	h     *partition.Head
	race  bool       // declare the shared row's refusals a race
	n     int64      // the count the attempt read
	etag  store.ETag // the row's ETag the attempt read ("" for none)
	calls int        // how many times fn ran
	asked []string   // the labels Race was asked about
	// during, when set, runs inside fn call n (from 0), before it builds.
	during func(n int)
}

func newShared(t *testing.T, tbl store.Table, head string, race bool, opts *partition.Options) *shared {
	t.Helper()
	h, err := partition.NewHead(tbl, "p", head, opts)
	must(t, err)
	return &shared{t: t, tbl: tbl, h: h, race: race}
}

func (s *shared) opts() *partition.RunOptions {
	o := &partition.RunOptions{Read: func(ctx context.Context) (partition.Fence, error) {
		f, err := s.h.Fence(ctx)
		if err != nil {
			return f, err
		}
		e, err := s.tbl.Get(ctx, "p", "total", nil)
		switch {
		case store.EntityNotFound(err):
			s.n, s.etag = 0, ""
		case err != nil:
			return f, err
		default:
			s.n, _ = e.Properties["N"].(int64)
			s.etag = e.ETag
		}
		return f, nil
	}}
	if s.race {
		o.Race = func(row partition.Row, err error) bool {
			s.asked = append(s.asked, row.Label)
			return row.Label == "total"
		}
	}
	return o
}

func (s *shared) fn(_ context.Context, tx *partition.Txn) error {
	n := s.calls
	s.calls++
	if s.during != nil {
		s.during(n)
	}
	e := row("total", "N", s.n+1)
	if s.etag == "" {
		return tx.Insert("total", e)
	}
	return tx.Update("total", e, store.Replace, s.etag)
}

func (s *shared) add(ctx context.Context) (*partition.Result, error) {
	return s.h.Run(ctx, s.fn, s.opts())
}

// total is the count as stored.
func total(t *testing.T, tbl store.Table) int64 {
	t.Helper()
	e, err := tbl.Get(context.Background(), "p", "total", nil)
	if store.EntityNotFound(err) {
		return 0
	}
	must(t, err)
	n, _ := e.Properties["N"].(int64)
	return n
}

// TestRunRetriesADeclaredRace: another head's writer changes (412) or
// creates (409) the shared row between an attempt's read and its
// commit. With RunOptions.Race declaring the row's refusals a race, the
// Run pauses, reads again and applies on its second attempt, adding to
// what the other writer left; without it (the control) the refusal comes
// back as Commit reported it, a ChangedError or a DuplicateError, after
// one attempt.
func TestRunRetriesADeclaredRace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exists bool   // the shared row exists before the Run
		want   error  // what the control returns
		code   string // the row's refusal
	}{
		{name: "the row changed (412)", exists: true, want: partition.ErrChanged, code: store.CodeUpdateConditionNotSatisfied},
		{name: "the row appeared (409)", exists: false, want: partition.ErrDuplicate, code: store.CodeEntityAlreadyExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				ctx := t.Context()
				for _, race := range []bool{true, false} {
					tbl := newTable(t, b)
					var pauses atomic.Int32
					opts := &partition.Options{Backoff: func(int) time.Duration { return time.Millisecond },
						Sleep: func(ctx context.Context, _ time.Duration) error { pauses.Add(1); return ctx.Err() }}
					if tc.exists {
						_, err := newShared(t, tbl, "other", false, nil).add(ctx)
						must(t, err)
					}
					before := total(t, tbl)
					s := newShared(t, tbl, "mine", race, opts)
					s.during = func(n int) {
						if n == 0 {
							if _, err := newShared(t, tbl, "other", false, nil).add(ctx); err != nil {
								t.Errorf("the other head's writer: %v", err)
							}
						}
					}
					res, err := s.add(ctx)
					if !race {
						if !errors.Is(err, tc.want) || store.Code(err) != tc.code || s.calls != 1 {
							t.Fatalf("without Race: %v (code %q) after %d calls, want %v with %s after 1", err, store.Code(err), s.calls, tc.want, tc.code)
						}
						if got := total(t, tbl); got != before+1 {
							t.Fatalf("without Race: total %d, want %d (the other writer's only)", got, before+1)
						}
						continue
					}
					if err != nil {
						t.Fatalf("with Race: %v", err)
					}
					if s.calls != 2 || pauses.Load() != 1 || res.Recovered {
						t.Fatalf("with Race: %d calls, %d pauses, %+v; want 2 calls after 1 pause, applied", s.calls, pauses.Load(), res)
					}
					if len(s.asked) != 1 || s.asked[0] != "total" {
						t.Fatalf("Race was asked about %q, want the shared row once", s.asked)
					}
					if got := total(t, tbl); got != before+2 {
						t.Fatalf("with Race: total %d, want %d: the retry adds to what the other writer left", got, before+2)
					}
				}
			})
		})
	}
}

// TestRunDeclaredRaceUsesUpAttempts: when the shared row changes under
// every attempt, the Run gives up after Options.Attempts with an
// AttemptsError that is a race (Raced, partition.ErrConflict) carrying
// the row's *store.Error, and never a changed row; a refusal Race does
// not declare (another row of the same transaction) comes back at once
// as Commit reported it.
func TestRunDeclaredRaceUsesUpAttempts(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		tbl := newTable(t, b)
		opts := fast()
		opts.Attempts = 3
		s := newShared(t, tbl, "mine", true, opts)
		s.during = func(int) {
			if _, err := newShared(t, tbl, "other", false, nil).add(ctx); err != nil {
				t.Errorf("the other head's writer: %v", err)
			}
		}
		_, err := s.add(ctx)
		var ae *partition.AttemptsError
		if !errors.As(err, &ae) || !ae.Raced || ae.Attempts != 3 || s.calls != 3 {
			t.Fatalf("%v after %d calls: want an AttemptsError of 3 attempts, Raced", err, s.calls)
		}
		errvocab.Check(t, err, errvocab.Race, store.ErrPreconditionFailed)
		if !strings.Contains(err.Error(), `"total"`) {
			t.Errorf("%v: the error does not name the row", err)
		}

		// A row Race does not declare: a duplicate, returned as it is.
		taken := row("taken", "X", int64(1))
		taken.PartitionKey = "p"
		_, err = tbl.Upsert(ctx, taken, store.Replace)
		must(t, err)
		s = newShared(t, tbl, "mine", true, opts)
		_, err = s.h.Run(ctx, func(ctx context.Context, tx *partition.Txn) error {
			s.calls++
			return tx.Insert("taken", row("taken", "X", int64(2)))
		}, s.opts())
		var de *partition.DuplicateError
		if !errors.As(err, &de) || de.Label != "taken" || s.calls != 1 || len(s.asked) != 1 {
			t.Fatalf("%v after %d calls (Race asked about %q): want the DuplicateError of row taken after 1", err, s.calls, s.asked)
		}
	})
}

// TestRunDeclaredRacesLoseNoUpdate: writers on heads of their own add to
// one shared row at once, each through Run with the row's refusals
// declared a race: the count ends at the number of Runs, none lost, none
// doubled; the races retried are counted (without Race each of them
// would have failed the Run with a ChangedError or a DuplicateError).
func TestRunDeclaredRacesLoseNoUpdate(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := newTable(t, b)
		const writers, each = 5, 4
		opts := fast()
		opts.Attempts = 200
		var (
			wg    sync.WaitGroup
			races atomic.Int64
		)
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				s := newShared(t, tbl, "w"+string(rune('a'+w)), true, opts)
				for range each {
					s.calls = 0
					if _, err := s.add(t.Context()); err != nil {
						errs <- err
					}
					races.Add(int64(s.calls - 1))
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := total(t, tbl); got != writers*each {
			t.Fatalf("total %d, want %d: an update was lost or doubled", got, writers*each)
		}
		t.Logf("%s: %d writers x %d adds, %d races retried: total %d, lost 0, duplicated 0", b.Name, writers, each, races.Load(), writers*each)
	})
}
