package storetest_test

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/storetest"
)

// opLog is a hook that records the Op of every request and passes it.
type opLog struct {
	mu  sync.Mutex
	ops []string
}

func (l *opLog) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	l.mu.Lock()
	l.ops = append(l.ops, c.Op)
	l.mu.Unlock()
	return do(ctx)
}

func (l *opLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ops
	l.ops = nil
	return out
}

// hidden hides the typed lane of a table, as a wrapper embedding
// store.Table does.
type hidden struct{ store.Table }

func memTable(t *testing.T) (store.Store, store.Table) {
	t.Helper()
	st := memstore.New()
	if err := st.CreateTable(t.Context(), "Things"); err != nil {
		t.Fatal(err)
	}
	return st, st.Table("Things")
}

type row struct{ n int32 }

func (r row) WriteProperties(w store.PropertyWriter) error {
	n, _ := store.NewPropertyName("N")
	return w.Int32(n, r.n)
}

func TestWrapKeepsTheTypedLane(t *testing.T) {
	st, tbl := memTable(t)
	if _, ok := driver.Typed(tbl); !ok {
		t.Fatal("memstore's table is not a TypedTable")
	}
	if _, ok := driver.Typed(storetest.WrapTable(tbl, storetest.Pass)); !ok {
		t.Error("WrapTable over a typed table: not a TypedTable")
	}
	if _, ok := driver.Typed(storetest.WrapStore(st, storetest.Pass).Table("T")); !ok {
		t.Error("WrapStore(...).Table over a typed table: not a TypedTable")
	}
	if _, ok := driver.Typed(storetest.WrapTable(hidden{tbl}, storetest.Pass)); ok {
		t.Error("WrapTable over a table without the typed lane claims one")
	}
	// A wrapper of a wrapper keeps it too.
	twice := storetest.WrapTable(storetest.WrapTable(tbl, storetest.Pass), storetest.Pass)
	if _, ok := driver.Typed(twice); !ok {
		t.Error("a wrapped wrapper lost the typed lane")
	}
}

func TestTypedRequestsReachTheHook(t *testing.T) {
	ctx := t.Context()
	_, tbl := memTable(t)
	var log opLog
	var calls []storetest.Call
	var mu sync.Mutex
	h := storetest.Chain(log.hook, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
		return do(ctx)
	})
	tt := storetest.WrapTable(tbl, h).(store.TypedTable)

	a := store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "r"}, Source: row{7}}
	if _, err := tt.Write(ctx, a); err != nil {
		t.Fatal(err)
	}
	var b driver.EntityBuilder
	if err := tt.GetInto(ctx, "p", "r", nil, &b); err != nil {
		t.Fatal(err)
	}
	if b.Entity.RowKey != "r" || b.Entity.Properties["N"] != int32(7) || b.Entity.ETag == "" {
		t.Errorf("GetInto read %+v", b.Entity)
	}
	var got []*driver.EntityBuilder
	_, n, err := tt.QueryInto(ctx, store.Query{}, func() store.EntityReader {
		got = append(got, new(driver.EntityBuilder))
		return got[len(got)-1]
	})
	if err != nil || n != 1 || len(got) != 1 || got[0].Entity.Properties["N"] != int32(7) {
		t.Errorf("QueryInto: n %d, err %v, %d readers", n, err, len(got))
	}
	if ops := log.take(); !slices.Equal(ops, []string{"Table.Write", "Table.GetInto", "Table.QueryInto"}) {
		t.Errorf("ops %q", ops)
	}
	w := calls[0]
	if k, ok := w.Kind(); !ok || k != store.ActionInsert || !w.Write || w.Name != "Things" || w.PartitionKey != "p" || w.RowKey != "r" {
		t.Errorf("Write's call: %+v", w)
	}
	if w.EntityOp() != "Table.Insert" || calls[1].EntityOp() != "Table.Get" || calls[2].EntityOp() != "Table.Query" {
		t.Errorf("EntityOp: %q, %q, %q", w.EntityOp(), calls[1].EntityOp(), calls[2].EntityOp())
	}
	if e, err := w.Entity(); err != nil || e.Properties["N"] != int32(7) {
		t.Errorf("Write's call: Entity() = %+v, %v", e, err)
	}
	if calls[1].Write || calls[2].Write {
		t.Error("a read is marked Write")
	}
}

func TestHookFates(t *testing.T) {
	ctx := t.Context()
	_, tbl := memTable(t)
	lose := errors.New("lost")
	var fate string
	h := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		switch fate {
		case "before":
			return lose
		case "after":
			if err := do(ctx); err != nil {
				return err
			}
			return lose
		case "crash":
			panic("crash")
		}
		return do(ctx)
	}
	tt := storetest.WrapTable(tbl, h).(store.TypedTable)

	fate = "before"
	if tag, err := tt.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "a"}); err != lose || tag != "" {
		t.Errorf("fail before: %q, %v", tag, err)
	}
	if _, err := tbl.Get(ctx, "p", "a", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("fail before: the insert landed (%v)", err)
	}
	fate = "after"
	if tag, err := tt.Write(ctx, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "b"}, Source: row{1}}); err != lose || tag != "" {
		t.Errorf("apply then lose: %q, %v", tag, err)
	}
	if _, err := tbl.Get(ctx, "p", "b", nil); err != nil {
		t.Errorf("apply then lose: the write did not land: %v", err)
	}
	var b driver.EntityBuilder
	if err := tt.GetInto(ctx, "p", "b", nil, &b); err != lose || b.Entity.RowKey != "" || b.Entity.Properties != nil {
		t.Errorf("a lost GetInto handed the reader %+v (err %v)", b.Entity, err)
	}
	fate = "pass"
	if _, err := tt.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "b"}); !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("the store's own error: %v", err)
	}
	fate = "crash"
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no crash")
			}
		}()
		tt.Query(ctx, store.Query{})
	}()
}

func TestFaultsAsTheClientSeesThem(t *testing.T) {
	ctx := t.Context()
	_, tbl := memTable(t)
	var f storetest.Fault
	tt := storetest.WrapTable(tbl, storetest.Faults(func(storetest.Call) storetest.Fault { return f })).(store.TypedTable)
	for i, c := range []struct {
		f       storetest.Fault
		unknown bool
	}{
		{storetest.FaultBusy, false},
		{storetest.FaultInternalBefore, true},
		{storetest.FaultLostBefore, true},
		{storetest.FaultInternalAfter, true},
		{storetest.FaultLostAfter, true},
		{storetest.FaultNone, false},
	} {
		f = c.f
		rk := string(rune('a' + i))
		_, err := tt.Write(ctx, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: rk}, Source: row{1}})
		if (err != nil) != (c.f != storetest.FaultNone) || errors.Is(err, store.ErrUnknownOutcome) != c.unknown {
			t.Errorf("%v: %v", c.f, err)
		}
		_, gerr := tbl.Get(ctx, "p", rk, nil)
		if landed := gerr == nil; landed != c.f.Applied() {
			t.Errorf("%v: landed %v", c.f, landed)
		}
		// A read's error is never an unknown outcome.
		if _, err := tt.Get(ctx, "p", rk, nil); errors.Is(err, store.ErrUnknownOutcome) {
			t.Errorf("%v: a read's error: %v", c.f, err)
		}
	}
}

// TestEveryMethodIsRouted calls every method of every interface a wrapper
// stands for, through reflection, and checks that each one that does I/O
// reaches the hook as "Interface.Method" and then the wrapped value.
func TestEveryMethodIsRouted(t *testing.T) {
	var log opLog
	inner := &stub{}
	st := storetest.WrapStore(inner, log.hook)
	handles := []struct {
		iface string
		typ   reflect.Type
		v     any
	}{
		{"Store", reflect.TypeFor[store.Store](), st},
		{"Store", reflect.TypeFor[store.ACLStore](), st},
		{"Table", reflect.TypeFor[store.TypedTable](), st.Table("t")},
		{"Queue", reflect.TypeFor[store.Queue](), st.Queue("q")},
		{"Container", reflect.TypeFor[store.Container](), st.Container("c")},
	}
	noIO := map[string]bool{"Name": true, "Table": true, "Queue": true, "Container": true}
	routed := 0
	for _, h := range handles {
		v := reflect.ValueOf(h.v)
		if !v.Type().Implements(h.typ) {
			t.Fatalf("the %s wrapper does not implement %v", h.iface, h.typ)
		}
		for i := range h.typ.NumMethod() {
			m := h.typ.Method(i)
			args := make([]reflect.Value, m.Type.NumIn())
			for j := range args {
				args[j] = argFor(t, m.Type.In(j))
			}
			inner.take()
			v.MethodByName(m.Name).Call(args)
			ops, reached := log.take(), inner.take()
			if noIO[m.Name] {
				if len(ops) != 0 {
					t.Errorf("%s.%s does no I/O but reached the hook: %q", h.iface, m.Name, ops)
				}
				continue
			}
			want := h.iface + "." + m.Name
			if !slices.Equal(ops, []string{want}) {
				t.Errorf("%s: the hook saw %q", want, ops)
			}
			if !slices.Equal(reached, []string{m.Name}) {
				t.Errorf("%s: the wrapped value got %q", want, reached)
			}
			routed++
		}
	}
	// The handles a wrapped store hands out are wrapped.
	if _, err := st.Table("t").Get(context.Background(), "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	if ops := log.take(); !slices.Equal(ops, []string{"Table.Get"}) {
		t.Errorf("a table of a wrapped store: %q", ops)
	}
	if routed < 30 {
		t.Errorf("only %d methods routed", routed)
	}
}

func argFor(t *testing.T, typ reflect.Type) reflect.Value {
	switch typ {
	case reflect.TypeFor[context.Context]():
		return reflect.ValueOf(t.Context())
	case reflect.TypeFor[store.EntityReader]():
		return reflect.ValueOf(store.EntityReader(new(driver.EntityBuilder)))
	case reflect.TypeFor[func() store.EntityReader]():
		return reflect.ValueOf(func() store.EntityReader { return new(driver.EntityBuilder) })
	}
	return reflect.Zero(typ)
}

// stub is a store whose every handle records the methods called on it and
// answers with zero values.
type stub struct {
	mu    sync.Mutex
	calls []string
}

func (s *stub) rec() {
	pc := make([]uintptr, 1)
	if runtime.Callers(2, pc) == 0 {
		return
	}
	// The caller's name ends in ".Method".
	name := runtime.FuncForPC(pc[0]).Name()
	s.mu.Lock()
	s.calls = append(s.calls, name[strings.LastIndexByte(name, '.')+1:])
	s.mu.Unlock()
}

func (s *stub) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

func (s *stub) CreateTable(context.Context, string) error { s.rec(); return nil }
func (s *stub) CreateTableIfNotExists(context.Context, string) (bool, error) {
	s.rec()
	return false, nil
}
func (s *stub) DeleteTable(context.Context, string) error { s.rec(); return nil }
func (s *stub) ListTables(context.Context, store.ListTablesOptions) (store.TablePage, error) {
	s.rec()
	return store.TablePage{}, nil
}
func (s *stub) GetAccessPolicy(context.Context, string) ([]store.SignedIdentifier, error) {
	s.rec()
	return nil, nil
}
func (s *stub) SetAccessPolicy(context.Context, string, []store.SignedIdentifier) error {
	s.rec()
	return nil
}
func (s *stub) Table(name string) store.Table         { return &stubTable{s} }
func (s *stub) Queue(name string) store.Queue         { return &stubQueue{s} }
func (s *stub) Container(name string) store.Container { return &stubContainer{s} }

type stubTable struct{ s *stub }

func (t *stubTable) Name() string { return "t" }
func (t *stubTable) Get(context.Context, string, string, *store.GetOptions) (store.Entity, error) {
	t.s.rec()
	return store.Entity{}, nil
}
func (t *stubTable) Insert(context.Context, store.Entity) (store.ETag, error) {
	t.s.rec()
	return "", nil
}
func (t *stubTable) Update(context.Context, store.Entity, store.UpdateMode, store.ETag) (store.ETag, error) {
	t.s.rec()
	return "", nil
}
func (t *stubTable) Upsert(context.Context, store.Entity, store.UpdateMode) (store.ETag, error) {
	t.s.rec()
	return "", nil
}
func (t *stubTable) Delete(context.Context, string, string, store.ETag) error { t.s.rec(); return nil }
func (t *stubTable) Query(context.Context, store.Query) (store.Page, error) {
	t.s.rec()
	return store.Page{}, nil
}
func (t *stubTable) Transact(context.Context, []store.Action) ([]store.ActionResult, error) {
	t.s.rec()
	return nil, nil
}
func (t *stubTable) Write(context.Context, store.Action) (store.ETag, error) {
	t.s.rec()
	return "", nil
}
func (t *stubTable) GetInto(context.Context, string, string, *store.GetOptions, store.EntityReader) error {
	t.s.rec()
	return nil
}
func (t *stubTable) QueryInto(context.Context, store.Query, func() store.EntityReader) (string, int, error) {
	t.s.rec()
	return "", 0, nil
}

type stubQueue struct{ s *stub }

func (q *stubQueue) Name() string                 { return "q" }
func (q *stubQueue) Create(context.Context) error { q.s.rec(); return nil }
func (q *stubQueue) Delete(context.Context) error { q.s.rec(); return nil }
func (q *stubQueue) Put(context.Context, []byte, *store.PutOptions) (store.Message, error) {
	q.s.rec()
	return store.Message{}, nil
}
func (q *stubQueue) Get(context.Context, int, time.Duration) ([]store.Message, error) {
	q.s.rec()
	return nil, nil
}
func (q *stubQueue) Peek(context.Context, int) ([]store.Message, error) { q.s.rec(); return nil, nil }
func (q *stubQueue) Update(context.Context, string, string, []byte, time.Duration) (store.Message, error) {
	q.s.rec()
	return store.Message{}, nil
}
func (q *stubQueue) DeleteMessage(context.Context, string, string) error { q.s.rec(); return nil }

type stubContainer struct{ s *stub }

func (c *stubContainer) Name() string                 { return "c" }
func (c *stubContainer) Create(context.Context) error { c.s.rec(); return nil }
func (c *stubContainer) Delete(context.Context) error { c.s.rec(); return nil }
func (c *stubContainer) Put(context.Context, string, []byte, *store.BlobPutOptions) (store.BlobProps, error) {
	c.s.rec()
	return store.BlobProps{}, nil
}
func (c *stubContainer) Get(context.Context, string) ([]byte, store.BlobProps, error) {
	c.s.rec()
	return nil, store.BlobProps{}, nil
}
func (c *stubContainer) DeleteBlob(context.Context, string, store.ETag) error { c.s.rec(); return nil }
func (c *stubContainer) List(context.Context, store.BlobListOptions) (store.BlobPage, error) {
	c.s.rec()
	return store.BlobPage{}, nil
}
func (c *stubContainer) CreateAppend(context.Context, string, *store.BlobPutOptions) (store.BlobProps, error) {
	c.s.rec()
	return store.BlobProps{}, nil
}
func (c *stubContainer) AppendBlock(context.Context, string, []byte, *store.AppendOptions) (store.AppendResult, error) {
	c.s.rec()
	return store.AppendResult{}, nil
}
func (c *stubContainer) GetRange(context.Context, string, int64, int64) ([]byte, store.BlobProps, error) {
	c.s.rec()
	return nil, store.BlobProps{}, nil
}
