package wide

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/storetest"
)

// Doc is a mapped struct whose values pass an entity's limits: a long
// body, a large attachment, and as many counters as its extra map holds.
type Doc struct {
	Tenant  string         `table:",pk"`
	ID      string         `table:",rk"`
	ETag    store.ETag     `table:",etag"`
	Title   string         `table:"Title"`
	Body    string         `table:"Body,omitempty"`
	Scan    []byte         `table:"Scan,omitempty"`
	Tags    []string       `table:"Tags,json,omitempty"`
	Edited  time.Time      `table:"Edited,omitempty"`
	Counts  map[string]any `table:",extra"`
	Private string         `table:"-"`
}

// seeded is a concurrency-safe seeded random source.
func seeded(seed uint64) func() uint64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed+1))
	return func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Uint64()
	}
}

var seeds atomic.Uint64

// options gives each Wide its own seed (two writers with one seed would
// make the same write ids, as no two real writers do) and no pauses.
func options(o *Options) *Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Random == nil {
		c.Random = seeded(1000 + seeds.Add(1))
	}
	if c.Backoff == nil {
		c.Backoff = func(int) time.Duration { return 0 }
	}
	return &c
}

// newWide makes a Wide[T] on table name of st.
func newWide[T any](t testing.TB, st store.Store, name string, o *Options) *Wide[T] {
	t.Helper()
	w, err := New[T](st, name, options(o))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// wrapped is a store whose tables are wrapped, for fault injection on any
// backend.
type wrapped struct {
	store.Store
	wrap func(store.Table) store.Table
}

// Table wraps the table; a faultTable comes back as its storetest
// wrapper, which keeps the typed lane of the store's table.
func (w wrapped) Table(name string) store.Table {
	t := w.wrap(w.Store.Table(name))
	if f, ok := t.(*faultTable); ok {
		return f.table()
	}
	return t
}

// faultTable wraps a table: before each transaction it asks plan what to
// do, and it counts requests by kind. Its faults are a storetest hook:
// table returns the wrapper that keeps the typed lane of Table (wrapped
// hands it out), and its own Query, Get and Transact go through the same
// hook.
type faultTable struct {
	store.Table
	once   sync.Once
	kit    store.Table
	mu     sync.Mutex
	sends  int
	counts map[string]int
	plan   func(send int) fault
	// between runs after a send applied (or was held back) and before its
	// answer is lost.
	between func()
	held    []store.Action // a send held back, to land later (landLater)
}

type fault int

const (
	pass          fault = iota
	applyThenLose       // the transaction lands, the answer is lost
	loseBefore          // the request is lost before the service sees it
	landLater           // the answer is lost and the request lands just before the next one
	busy                // 503 ServerBusy: refused before any work
)

func (f fault) String() string {
	return [...]string{"pass", "apply then lose", "lose before", "land later", "busy"}[f]
}

func errLost() *store.Error {
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "injected: answer lost"}
}

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

func (f *faultTable) next() (fault, []store.Action) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sends
	f.sends++
	held := f.held
	f.held = nil
	if f.plan == nil {
		return pass, held
	}
	return f.plan(s), held
}

// table returns Table wrapped with the faults, in both lanes.
func (f *faultTable) table() store.Table {
	f.once.Do(func() { f.kit = storetest.WrapTable(f.Table, f.hook) })
	return f.kit
}

func (f *faultTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	return f.table().Query(ctx, q)
}

func (f *faultTable) Get(ctx context.Context, pk, rk string, o *store.GetOptions) (store.Entity, error) {
	return f.table().Get(ctx, pk, rk, o)
}

func (f *faultTable) Transact(ctx context.Context, a []store.Action) ([]store.ActionResult, error) {
	return f.table().Transact(ctx, a)
}

// hook counts queries and gets (in either lane) and transactions, and
// meets each transaction with plan's fault.
func (f *faultTable) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	switch c.EntityOp() {
	case "Table.Query":
		f.count("query")
	case "Table.Get":
		f.count("get")
	case "Table.Transact":
		f.count("transact")
		return f.transact(ctx, c.Actions, do)
	}
	return do(ctx)
}

func (f *faultTable) transact(ctx context.Context, a []store.Action, do func(context.Context) error) error {
	fate, held := f.next()
	if held != nil {
		// The request held back by the network arrives now; its own
		// answer went nowhere.
		_, _ = f.Table.Transact(ctx, held)
	}
	switch fate {
	case applyThenLose:
		if err := do(ctx); err != nil {
			return err
		}
		if f.between != nil {
			f.between()
		}
		return errLost()
	case loseBefore:
		if f.between != nil {
			f.between()
		}
		return errLost()
	case landLater:
		f.mu.Lock()
		f.held = cloneActions(a)
		f.mu.Unlock()
		if f.between != nil {
			f.between()
		}
		return errLost()
	case busy:
		return store.Errorf(store.CodeServerBusy, 503, "injected: server busy")
	}
	return do(ctx)
}

func cloneActions(a []store.Action) []store.Action {
	out := make([]store.Action, len(a))
	for i := range a {
		out[i] = a[i]
		out[i].Entity = a[i].Entity.Clone()
	}
	return out
}

// rows returns every entity of partition pk.
func rows(t testing.TB, tbl store.Table, pk string) []store.Entity {
	t.Helper()
	var out []store.Entity
	for e, err := range store.All(context.Background(), tbl, store.Query{Filter: filter.PK.Eq(pk).String()}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// counters returns a map of n Int32 properties C0000, C0001, ... holding
// base+i.
func counters(n, base int) Properties {
	m := make(Properties, n)
	for i := range n {
		m[fmt.Sprintf("C%04d", i)] = int32(base + i)
	}
	return m
}

// sameProps compares two property maps value by value.
func sameProps(a, b Properties) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d properties, want %d", len(a), len(b))
	}
	for k, v := range b {
		if !store.SameValue(a[k], v) {
			return fmt.Errorf("property %s differs (%T of %d bytes, want %T of %d)", k, a[k], approxLen(a[k]), v, approxLen(v))
		}
	}
	return nil
}

func approxLen(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return 0
}

func freshTable(t testing.TB, b backendtest.Backend) string {
	t.Helper()
	return b.NewTable(t, "wide")
}
