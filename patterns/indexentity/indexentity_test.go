package indexentity_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// Employee is the tests' entity.
type Employee struct {
	Dept     string     `table:",pk"`
	ID       string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	LastName string
	N        int
}

func lastName(e *Employee) string { return e.LastName }

// fixture is a model of Employee with a List ("family", in the
// partition) and a GlobalIndex ("lastname", across partitions) over one
// table, its engine, and a view.
type fixture struct {
	e     eventualtest.Env
	st    store.Store
	table string
	o     eventualtest.Options
	eng   *eventual.Engine
	m     *model.Model[Employee]
	v     *indexentity.View[Employee]
}

// newFixture builds the fixture over wrap(the backend's store), or the
// store itself for a nil wrap.
func newFixture(t *testing.T, e eventualtest.Env, wrap func(store.Store) store.Store, opts *indexentity.Options) *fixture {
	t.Helper()
	f := &fixture{e: e, st: e.B.Store, o: e.Opts("ie")}
	if wrap != nil {
		f.st = wrap(f.st)
	}
	f.table = e.B.NewTable(t, "IE")
	f.eng = eventualtest.NewEngine(t, f.st, f.o)
	var err error
	f.m, err = model.Define(f.st, f.table, &model.Options{Engine: f.eng, Now: e.Now, ListSegmentUnits: 16},
		model.List("family", lastName), model.GlobalIndex("lastname", lastName))
	if err != nil {
		t.Fatal(err)
	}
	if f.v, err = indexentity.New(f.m, opts); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) drain(t *testing.T) {
	t.Helper()
	eventualtest.Drain(t, f.e, &f.eng, f.o, f.e.B.Store, f.table)
}

func (f *fixture) insert(t *testing.T, es ...Employee) {
	t.Helper()
	for _, e := range es {
		if err := f.m.Insert(context.Background(), &e); err != nil {
			t.Fatal(err)
		}
	}
}

// collect runs a FindAll to its end: "dept/id" of each entity.
func collect(t *testing.T, seq func(func(*Employee, error) bool)) []string {
	t.Helper()
	var out []string
	for e, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Dept+"/"+e.ID)
	}
	return out
}

func keyStrings(ks []store.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.PartitionKey + "/" + k.RowKey
	}
	return out
}

// TestLookups: Keys and FindAll through a List (one partition) and a
// global index (every partition), right after the writes, across pages
// and list segments; a value nobody holds and the empty value are empty.
func TestLookups(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, &indexentity.Options{PageSize: 3, Concurrency: 2})
		var sales []string
		for i := range 10 {
			id := fmt.Sprintf("e%02d", 9-i)
			f.insert(t, Employee{Dept: "Sales", ID: id, LastName: "Jones"})
			sales = append(sales, "Sales/"+id)
		}
		slices.Sort(sales)
		f.insert(t, Employee{Dept: "Ops", ID: "e01", LastName: "Jones"}, Employee{Dept: "Sales", ID: "x", LastName: "Smith"})
		ks, err := f.v.Keys(ctx, "Sales", "family", "Jones")
		if err != nil || !slices.Equal(keyStrings(ks), sales) {
			t.Fatalf("Keys family: %v, %v", ks, err)
		}
		if got := collect(t, f.v.FindAll(ctx, "Sales", "family", "Jones")); !slices.Equal(got, sales) {
			t.Fatalf("FindAll family: %v, want %v", got, sales)
		}
		all := append([]string{"Ops/e01"}, sales...)
		if got := collect(t, f.v.FindAll(ctx, "", "lastname", "Jones")); !slices.Equal(got, all) {
			t.Fatalf("FindAll lastname before the engine ran: %v, want %v", got, all)
		}
		f.drain(t)
		if ks, err := f.v.Keys(ctx, "", "lastname", "Jones"); err != nil || !slices.Equal(keyStrings(ks), all) {
			t.Fatalf("Keys lastname: %v, %v", ks, err)
		}
		for _, c := range []struct{ pk, list, value string }{
			{"Sales", "family", "Nobody"}, {"Sales", "family", ""}, {"", "lastname", "Nobody"}, {"", "lastname", ""}, {"HR", "family", "Jones"},
		} {
			if got := collect(t, f.v.FindAll(ctx, c.pk, c.list, c.value)); len(got) != 0 {
				t.Errorf("%v: %v", c, got)
			}
		}
		// Stopping early stops reading.
		n := 0
		for range f.v.FindAll(ctx, "Sales", "family", "Jones") {
			n++
			if n == 4 {
				break
			}
		}
		if n != 4 {
			t.Fatalf("stopped after %d", n)
		}
	})
}

// TestLeftBetweenReads: an entity that leaves the value (or is deleted)
// after FindAll read the keys and before it reads the entity is left out,
// through a List and through a global index whose copy the engine has
// not removed yet.
func TestLeftBetweenReads(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		var once atomic.Bool
		var f *fixture
		var hookErr error
		wrap := func(s store.Store) store.Store {
			return storetest.WrapStore(s, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
				// The first entity read: b changes its name and c goes.
				if c.Op == "Table.Get" && once.CompareAndSwap(false, true) {
					hookErr = errors.Join(
						f.m.Update(ctx, &Employee{Dept: "Sales", ID: "b", LastName: "Smith"}, store.Replace),
						f.m.Delete(ctx, "Sales", "c", ""))
				}
				return do(ctx)
			})
		}
		for _, c := range []struct{ pk, list string }{{"Sales", "family"}, {"", "lastname"}} {
			once.Store(true)
			f = newFixture(t, e, wrap, &indexentity.Options{PageSize: 1, Concurrency: 1})
			f.insert(t, Employee{Dept: "Sales", ID: "a", LastName: "Jones"}, Employee{Dept: "Sales", ID: "b", LastName: "Jones"},
				Employee{Dept: "Sales", ID: "c", LastName: "Jones"})
			once.Store(false)
			got := collect(t, f.v.FindAll(ctx, c.pk, c.list, "Jones"))
			if hookErr != nil {
				t.Fatal(hookErr)
			}
			if !once.Load() || !slices.Equal(got, []string{"Sales/a"}) {
				t.Fatalf("%s: %v", c.list, got)
			}
			if c.list == "lastname" {
				// The index still names b and c: the engine has not run.
				if ks, err := f.v.Keys(ctx, "", "lastname", "Jones"); err != nil || len(ks) != 3 {
					t.Fatalf("the index before the engine ran: %v, %v", ks, err)
				}
			}
		}
	})
}

// TestConcurrency: FindAll reads Options.Concurrency entities at once,
// never more.
func TestConcurrency(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	const conc = 4
	var mu sync.Mutex
	var inFlight, peak int
	gate := make(chan struct{})
	var opened sync.Once
	var counting atomic.Bool
	wrap := func(s store.Store) store.Store {
		return storetest.WrapStore(s, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			if c.Op != "Table.Get" || !counting.Load() {
				return do(ctx)
			}
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			if inFlight == conc {
				opened.Do(func() { close(gate) }) // the first time conc reads are in flight
			}
			mu.Unlock()
			select {
			case <-gate:
			case <-time.After(30 * time.Second): // a guard against a hang, not a measure
				return fmt.Errorf("fewer than %d reads at once", conc)
			}
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			return do(ctx)
		})
	}
	f := newFixture(t, e, wrap, &indexentity.Options{Concurrency: conc, PageSize: 10})
	for i := range 20 {
		f.insert(t, Employee{Dept: "Sales", ID: fmt.Sprintf("e%02d", i), LastName: "Jones"})
	}
	counting.Store(true)
	if got := collect(t, f.v.FindAll(ctx, "Sales", "family", "Jones")); len(got) != 20 {
		t.Fatalf("found %d", len(got))
	}
	if peak != conc {
		t.Fatalf("at most %d reads at once, want %d", peak, conc)
	}
}

// TestBadInput: New refuses a nil model, a model without a List or a
// global index, and options out of range; a lookup refuses an unknown
// list, a partition for a global index, a nil context and a value no key
// can hold, each naming what is wrong and matching store.ErrInvalidInput.
func TestBadInput(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	f := newFixture(t, e, nil, nil)
	bare, err := model.Define(f.st, e.B.NewTable(t, "Bare"), &model.Options{Engine: f.eng},
		model.Index("family", lastName), model.Log[Employee]())
	if err != nil {
		t.Fatal(err)
	}
	var nilModel *model.Model[Employee]
	var nilCtx context.Context
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil model", second(indexentity.New(nilModel, nil)), "the model is nil"},
		{"no list", second(indexentity.New(bare, nil)), "declares no List (model.List) nor global index"},
		{"concurrency", second(indexentity.New(f.m, &indexentity.Options{Concurrency: -1})), "Options.Concurrency -1"},
		{"page size", second(indexentity.New(f.m, &indexentity.Options{PageSize: 1001})), "Options.PageSize 1001"},
		{"unknown list", second(f.v.Keys(ctx, "Sales", "nosuch", "x")), `no List nor global index named "nosuch"`},
		{"partition of a global index", second(f.v.Keys(ctx, "Sales", "lastname", "x")), `pass the partition "", not "Sales"`},
		{"nil context", second(f.v.Keys(nilCtx, "Sales", "family", "x")), "the context is nil"},
		{"long value", second(f.v.Keys(ctx, "Sales", "family", strings.Repeat("x", 1100))), "list family"},
		{"long global value", second(f.v.Keys(ctx, "", "lastname", strings.Repeat("x", 1100))), "index lastname"},
		{"FindAll", func() error {
			for _, err := range f.v.FindAll(ctx, "Sales", "nosuch", "x") {
				return err
			}
			return nil
		}(), `no List nor global index named "nosuch"`},
	} {
		if !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}

func second[A any](_ A, err error) error { return err }
