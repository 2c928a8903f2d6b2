package logtail

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/storetest"
)

// claim is the event type of the tests: an expense claim of an employee.
type claim struct {
	Employee string     `table:",pk"`
	Key      string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	Amount   float64
	Note     string `table:",omitempty"`
}

// t0 is the time of the tests' first event.
var t0 = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

func noSleep(context.Context, time.Duration) error { return nil }

// quiet is the first of opts (or the defaults) with no sleeping.
func quiet(opts []Options) *Options {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Sleep == nil {
		o.Sleep = noSleep
	}
	return &o
}

// newStream makes a stream on a fresh table of b.
func newStream(t *testing.T, b backendtest.Backend, pk string, opts ...Options) (*Stream[claim], store.Table) {
	t.Helper()
	tbl := b.Store.Table(b.NewTable(t, "logtail"))
	s, err := New[claim](tbl, pk, quiet(opts))
	if err != nil {
		t.Fatal(err)
	}
	return s, tbl
}

// collect drains a sequence, failing the test on an error.
func collect[T any](t *testing.T, seq func(func(Event[T], error) bool)) []Event[T] {
	t.Helper()
	var out []Event[T]
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// countRows counts every row of partition pk.
func countRows(t *testing.T, tbl store.Table, pk string) int {
	t.Helper()
	n := 0
	q := store.Query{Filter: filter.PK.Eq(pk).String()}
	for {
		p, err := tbl.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Entities)
		if p.Continuation == "" {
			return n
		}
		q.Continuation = p.Continuation
	}
}

// faultTable wraps a table and lets a test decide, per insert (Insert,
// or a typed Write of an insert), to apply it and lose the answer, to
// fail it before it is applied, or to pass it through. Its faults are a
// storetest hook; it has the typed lane, which every table the tests wrap
// has, and routes it through the hook (storetest's kit), so a read takes
// the lane it takes in production.
type faultTable struct {
	store.Table
	once   sync.Once
	kit    store.Table
	mu     sync.Mutex
	calls  int
	plan   func(call int) fault
	counts map[fault]int
}

type fault int

const (
	pass          fault = iota
	applyThenLose       // the insert lands, the answer is lost
	loseBefore          // the request is lost before the service sees it (outcome unknown to the client)
	busy                // 503 ServerBusy: nothing applied
)

// table returns Table wrapped with the faults.
func (f *faultTable) table() store.Table {
	f.once.Do(func() { f.kit = storetest.WrapTable(f.Table, f.hook) })
	return f.kit
}

// typed is the typed lane of table; the tests wrap only tables that have
// one.
func (f *faultTable) typed() store.TypedTable {
	tt, ok := driver.Typed(f.table())
	if !ok {
		panic("logtail test: faultTable over a table without the typed lane")
	}
	return tt
}

func (f *faultTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	return f.table().Insert(ctx, e)
}

func (f *faultTable) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	return f.typed().Write(ctx, a)
}

func (f *faultTable) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, r store.EntityReader) error {
	return f.typed().GetInto(ctx, pk, rk, opts, r)
}

func (f *faultTable) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	return f.typed().QueryInto(ctx, q, next)
}

// hook meets each insert, in either lane, with plan's fault.
func (f *faultTable) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	if c.EntityOp() != "Table.Insert" {
		return do(ctx)
	}
	f.mu.Lock()
	call := f.calls
	f.calls++
	what := f.plan(call)
	if f.counts == nil {
		f.counts = map[fault]int{}
	}
	f.counts[what]++
	f.mu.Unlock()
	lost := &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "injected: answer lost"}
	switch what {
	case applyThenLose:
		if err := do(ctx); err != nil {
			return err
		}
		return lost
	case loseBefore:
		return lost
	case busy:
		return store.Errorf(store.CodeServerBusy, 503, "injected: server busy")
	}
	return do(ctx)
}

func (f fault) String() string {
	return [...]string{"pass", "applied-then-lost", "lost-before", "busy"}[f]
}
