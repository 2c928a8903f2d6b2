package memstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

func newLoaded(t *testing.T, opts []Option, partitions, rows int) (*Store, store.Table) {
	t.Helper()
	ctx := context.Background()
	s := New(opts...)
	if err := s.CreateTable(ctx, "Engine"); err != nil {
		t.Fatal(err)
	}
	tb := s.Table("Engine")
	for p := range partitions {
		var actions []store.Action
		for r := range rows {
			actions = append(actions, store.Action{Kind: store.ActionInsert, Entity: store.Entity{
				PartitionKey: fmt.Sprintf("p%02d", p), RowKey: fmt.Sprintf("r%04d", r),
				Properties: map[string]any{"N": int32(p*rows + r)},
			}})
			if len(actions) == 100 {
				if _, err := tb.Transact(ctx, actions); err != nil {
					t.Fatal(err)
				}
				actions = nil
			}
		}
		if len(actions) > 0 {
			if _, err := tb.Transact(ctx, actions); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s, tb
}

// TestQueryVisitsOnlyThePlannedRange proves the engine does not scan the
// table when the filter bounds the keys.
func TestQueryVisitsOnlyThePlannedRange(t *testing.T) {
	s, tb := newLoaded(t, nil, 20, 100) // 2,000 entities
	var visits atomic.Int64
	s.visits = func() { visits.Add(1) }
	cases := []struct {
		filter    string
		want      int
		maxVisits int64
	}{
		{"PartitionKey eq 'p05' and RowKey eq 'r0042'", 1, 2},
		{"PartitionKey eq 'p05' and RowKey ge 'r0010' and RowKey lt 'r0020'", 10, 11},
		{"PartitionKey eq 'p05'", 100, 101},
		{"PartitionKey ge 'p05' and PartitionKey lt 'p07'", 200, 201},
		{"(PartitionKey eq 'p01' and RowKey eq 'r0001') or (PartitionKey eq 'p09' and RowKey eq 'r0009')", 2, 4},
		{"N eq 1999", 1, 2000},
		// RowKey bounds over many partitions: a few rows outside the bounds
		// per partition, then a seek, never the whole table.
		{"RowKey ge 'r0010' and RowKey lt 'r0020'", 200, 20 * (10 + 2*(seekAfter+1))},
		{"RowKey eq 'r0042'", 20, 20 * (1 + 2*(seekAfter+1))},
		{"PartitionKey ge 'p05' and RowKey gt 'r0097'", 30, 15 * (2 + 2*(seekAfter+1))},
	}
	for _, c := range cases {
		visits.Store(0)
		page, err := tb.Query(context.Background(), store.Query{Filter: c.filter})
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if len(page.Entities) != c.want || page.Continuation != "" {
			t.Fatalf("%s: %d entities (token %q), want %d", c.filter, len(page.Entities), page.Continuation, c.want)
		}
		if v := visits.Load(); v > c.maxVisits {
			t.Errorf("%s: visited %d records, want at most %d", c.filter, v, c.maxVisits)
		}
	}
}

// drain follows continuation tokens and returns every entity's RowKey and
// the number of pages.
func drain(t *testing.T, tb store.Table, q store.Query) ([]string, int) {
	t.Helper()
	var keys []string
	pages := 0
	for {
		page, err := tb.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, e := range page.Entities {
			keys = append(keys, e.PartitionKey+"/"+e.RowKey)
		}
		if page.Continuation == "" {
			return keys, pages
		}
		q.Continuation = page.Continuation
		if pages > 10000 {
			t.Fatal("no end to the pages")
		}
	}
}

func TestShortPagesStillReturnEverythingOnce(t *testing.T) {
	_, plain := newLoaded(t, nil, 3, 150)
	_, short := newLoaded(t, []Option{WithShortPages(42)}, 3, 150)
	q := store.Query{Filter: "N ge 10", Top: 50}
	want, wantPages := drain(t, plain, q)
	got, gotPages := drain(t, short, q)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("short pages returned %d keys, plain %d: sequences differ", len(got), len(want))
	}
	if gotPages <= wantPages {
		t.Fatalf("short pages took %d pages, plain %d: the option changed nothing", gotPages, wantPages)
	}
	// With short pages, a caller that reads only the first page misses data.
	empty := 0
	for range 50 {
		page, err := short.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) == 0 && page.Continuation != "" {
			empty++
		}
	}
	if empty == 0 {
		t.Fatal("WithShortPages never returned an empty page with a continuation token")
	}
}

func TestContinuationSurvivesConcurrentWrites(t *testing.T) {
	_, tb := newLoaded(t, nil, 1, 300)
	ctx := context.Background()
	page, err := tb.Query(ctx, store.Query{Top: 100})
	if err != nil {
		t.Fatal(err)
	}
	last := page.Entities[len(page.Entities)-1].RowKey
	// Delete the next entity and insert one before and one after the token.
	if err := tb.Delete(ctx, "p00", "r0100", store.ETagAny); err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"r0050x", "r0150x"} {
		if _, err := tb.Insert(ctx, store.Entity{PartitionKey: "p00", RowKey: rk}); err != nil {
			t.Fatal(err)
		}
	}
	rest, _ := drain(t, tb, store.Query{Continuation: page.Continuation})
	if len(rest) != 200 { // 199 old ones after r0099 plus r0150x
		t.Fatalf("resumed query returned %d entities, want 200", len(rest))
	}
	if rest[0] != "p00/r0101" || rest[0] <= "p00/"+last {
		t.Fatalf("resumed at %s after %s", rest[0], last)
	}
}

func TestBadContinuationToken(t *testing.T) {
	_, tb := newLoaded(t, nil, 1, 3)
	for _, tok := range []string{"garbage", "tkm1.!!!", encodeTableToken("", "x"), "tkm1." + "AAAA"} {
		_, err := tb.Query(context.Background(), store.Query{Continuation: tok})
		var se *store.Error
		if !errors.As(err, &se) || se.Code != store.CodeInvalidInput || se.Status != 400 {
			t.Fatalf("token %q: got %v, want InvalidInput 400", tok, err)
		}
	}
}

func TestTableBeingDeleted(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := New(WithClock(clock), WithTableDeleteDelay(40*time.Second))
	ctx := context.Background()
	if err := s.CreateTable(ctx, "Gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(ctx, "Gone"); err != nil {
		t.Fatal(err)
	}
	err := s.CreateTable(ctx, "GONE")
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeTableBeingDeleted || se.Status != 409 {
		t.Fatalf("re-create inside the window: got %v, want TableBeingDeleted 409", err)
	}
	mu.Lock()
	now = now.Add(40 * time.Second)
	mu.Unlock()
	if err := s.CreateTable(ctx, "Gone"); err != nil {
		t.Fatalf("re-create after the window: %v", err)
	}
	// The default delay is zero: a plain store reclaims the name at once.
	plain := New()
	if err := plain.CreateTable(ctx, "Gone"); err != nil {
		t.Fatal(err)
	}
	if err := plain.DeleteTable(ctx, "Gone"); err != nil {
		t.Fatal(err)
	}
	if err := plain.CreateTable(ctx, "Gone"); err != nil {
		t.Errorf("re-create with the default delay: %v, want success", err)
	}
}

func TestTimestampsMoveForwardWithAStalledClock(t *testing.T) {
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(WithClock(func() time.Time { return fixed }))
	ctx := context.Background()
	_ = s.CreateTable(ctx, "Clock")
	tb := s.Table("Clock")
	var last time.Time
	seen := map[store.ETag]bool{}
	for i := range 5 {
		tag, err := tb.Upsert(ctx, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"I": int32(i)}}, store.Replace)
		if err != nil {
			t.Fatal(err)
		}
		e, err := tb.Get(ctx, "p", "r", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Timestamp.After(last) || e.ETag != tag || seen[tag] {
			t.Fatalf("write %d: timestamp %v after %v, etag %s (seen %v)", i, e.Timestamp, last, tag, seen[tag])
		}
		last = e.Timestamp
		seen[tag] = true
	}
}

func TestFaultInjection(t *testing.T) {
	busy := store.Errorf(store.CodeServerBusy, 503, "injected")
	calls := 0
	s := New(WithFaults(func(op Operation, table string) error {
		if op == OpInsert {
			calls++
			if calls == 1 {
				return busy
			}
		}
		return nil
	}))
	ctx := context.Background()
	_ = s.CreateTable(ctx, "Faults")
	tb := s.Table("Faults")
	_, err := tb.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r"})
	if !errors.Is(err, store.ErrThrottled) {
		t.Fatalf("first insert: %v, want throttled", err)
	}
	if _, err := tb.Get(ctx, "p", "r", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a failed insert wrote data: %v", err)
	}
	if _, err := tb.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatalf("second insert: %v", err)
	}
}

// TestConcurrentWritersAndReaders runs writers, transactions and pagers at
// once under -race; every entity inserted must be read back exactly once.
func TestConcurrentWritersAndReaders(t *testing.T) {
	s := New()
	ctx := context.Background()
	_ = s.CreateTable(ctx, "Busy")
	tb := s.Table("Busy")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				pk := fmt.Sprintf("w%d", w)
				if i%10 == 0 {
					var acts []store.Action
					for j := range 5 {
						acts = append(acts, store.Action{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("t%03d-%d", i, j)}})
					}
					if _, err := tb.Transact(ctx, acts); err != nil {
						t.Error(err)
					}
					continue
				}
				if _, err := tb.Insert(ctx, store.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("i%03d", i)}); err != nil {
					t.Error(err)
				}
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				q := store.Query{Top: 7}
				for {
					page, err := tb.Query(ctx, q)
					if err != nil {
						t.Error(err)
						return
					}
					if page.Continuation == "" {
						break
					}
					q.Continuation = page.Continuation
				}
			}
		}()
	}
	wg.Wait()
	keys, _ := drain(t, tb, store.Query{})
	if len(keys) != 4*(45+5*5) {
		t.Fatalf("read %d entities, want %d", len(keys), 4*(45+25))
	}
}

func TestContextCanceled(t *testing.T) {
	s := New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.CreateTable(ctx, "Never"); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateTable with a canceled context: %v", err)
	}
}
