package series

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/storetest"
)

// noWait is a backoff of no pause: tests that contend on nothing need none.
func noWait(int) time.Duration { return 0 }

// backoffUpTo is a full-jitter backoff from base doubling up to max, for
// tests whose writers contend and must spread out.
func backoffUpTo(base, max time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		d := max
		if n-1 < 30 {
			d = min(d, base<<(n-1))
		}
		return rand.N(d)
	}
}

// newSeries makes a series on tbl, with no pause between tries unless
// opts give a Backoff.
func newSeries(t *testing.T, tbl store.Table, pk, id string, l Layout, opts ...Options) *Series {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Backoff == nil {
		o.Backoff = noWait
	}
	s, err := New(tbl, pk, id, l, &o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func freshTable(t *testing.T, b backendtest.Backend) store.Table {
	t.Helper()
	return b.Store.Table(b.NewTable(t, "series"))
}

// rows returns every entity of partition pk.
func rows(t *testing.T, tbl store.Table, pk string) []store.Entity {
	t.Helper()
	var out []store.Entity
	q := store.Query{Filter: filter.PK.Eq(pk).String()}
	for {
		p, err := tbl.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Entities...)
		if p.Continuation == "" {
			return out
		}
		q.Continuation = p.Continuation
	}
}

// mustRead reads a series, failing the test on an error.
func mustRead(t *testing.T, s *Series) Snapshot {
	t.Helper()
	sn, err := s.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sn
}

// faultTable holds the faults of a table: before each write it asks
// plan what to do, and it counts requests by kind. wrap returns the table
// that obeys it (storetest's kit, which keeps the typed lane of Table).
type faultTable struct {
	// Table is the table wrapped; a test reads it directly, unseen.
	Table  store.Table
	mu     sync.Mutex
	writes int
	counts map[string]int
	// actions counts the actions of the transactions sent.
	actions int
	plan    func(write int) fault
	// between runs after a write applied and before its answer is lost.
	between func()
}

type fault int

const (
	pass          fault = iota
	applyThenLose       // the write lands, the answer is lost
	loseBefore          // the request is lost before the service sees it
)

var errLost = &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "injected: answer lost"}

func (f *faultTable) count(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[op]++
}

func (f *faultTable) n(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

func (f *faultTable) next() fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.writes
	f.writes++
	if f.plan == nil {
		return pass
	}
	return f.plan(w)
}

// wrap returns f.Table with its requests counted and its inserts,
// updates and transactions (in either lane) faulted as plan says.
func (f *faultTable) wrap() store.Table { return storetest.WrapTable(f.Table, f.hook) }

func (f *faultTable) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	op := strings.ToLower(strings.TrimPrefix(c.EntityOp(), "Table."))
	f.count(op)
	f.mu.Lock()
	f.actions += len(c.Actions)
	f.mu.Unlock()
	switch op {
	case "insert", "update", "transact":
		return f.write(func() error { return do(ctx) })
	}
	return do(ctx)
}

func (f *faultTable) write(op func() error) error {
	switch f.next() {
	case applyThenLose:
		if err := op(); err != nil {
			return err
		}
		if f.between != nil {
			f.between()
		}
		return errLost
	case loseBefore:
		if f.between != nil {
			f.between()
		}
		return errLost
	}
	return op()
}
