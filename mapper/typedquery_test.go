package mapper

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/faultproxy"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// The query half of the typed lane: over a store.TypedTable a page is
// read straight into values of T (store.TypedTable.QueryInto, ReadPage).
// These tests hold it to the store.Entity route, which a Repository takes
// over a table without the lane (entityRoute), on both backends: the same
// values, the same errors, the same tokens.

// entityRoute wraps a store so that its tables lack the typed lane: a
// Repository over it reads store.Entity pages and decodes them.
type entityRoute struct{ store.Store }

func (s entityRoute) Table(name string) store.Table { return plainTable{s.Store.Table(name)} }

// plainTable is a store.Table and nothing more.
type plainTable struct{ store.Table }

// runShortPages runs body on memstore with short and empty pages at
// random (memstore.WithShortPages), and on Azurite.
func runShortPages(t *testing.T, seed uint64, body func(t *testing.T, b backendtest.Backend)) {
	t.Helper()
	t.Run("memstore", func(t *testing.T) { body(t, backendtest.Memstore(memstore.WithShortPages(seed))) })
	t.Run("azurite", func(t *testing.T) { body(t, backendtest.Azurite(t)) })
}

// tqRow is the struct of the differential tests: every property type, a
// pointer field, the system fields.
type tqRow struct {
	P    string     `table:",pk"`
	R    string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	TS   time.Time  `table:",timestamp"`
	S    string
	I    int32
	L    int64
	D    float64
	B    bool
	T    time.Time
	Bin  []byte
	G    store.GUID
	Ptr  *int64
}

// tqRowExtra is tqRow with an extra field: every property it does not map
// lands there.
type tqRowExtra struct {
	P    string     `table:",pk"`
	R    string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	S    string
	I    int32
	More map[string]any `table:",extra"`
}

// canon renders a decoded value for comparison: struct fields by name,
// times as UTC instants, pointers by what they point to, maps sorted with
// each value's type.
func canon(v any) string {
	var b strings.Builder
	canonValue(&b, reflect.ValueOf(v))
	return b.String()
}

func canonValue(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("<nil>")
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		t := v.Interface().(time.Time)
		b.WriteString(t.UTC().Format(time.RFC3339Nano))
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Interface {
			fmt.Fprintf(b, "%T:", v.Interface())
		} else {
			b.WriteString("&")
		}
		canonValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString("{")
		for i := range v.NumField() {
			fmt.Fprintf(b, "%s:", v.Type().Field(i).Name)
			canonValue(b, v.Field(i))
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("map(nil)")
			return
		}
		ks := v.MapKeys()
		sort.Slice(ks, func(i, j int) bool { return ks[i].String() < ks[j].String() })
		b.WriteString("map[")
		for _, k := range ks {
			fmt.Fprintf(b, "%s=", k.String())
			canonValue(b, v.MapIndex(k))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("[]nil")
			return
		}
		fmt.Fprintf(b, "%x", v.Bytes())
	default:
		fmt.Fprintf(b, "%#v", v.Interface())
	}
}

// item is one element of a query's sequence, rendered for comparison.
type item struct {
	value string
	err   string
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// collect renders a query's sequence.
func collectSeq[T any](seq func(func(T, error) bool)) []item {
	var out []item
	for v, err := range seq {
		out = append(out, item{canon(v), errString(err)})
	}
	return out
}

// diffItems describes the first difference between two sequences.
func diffItems(got, want []item) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("element %d:\n typed:  %v %q\n entity: %v %q", i, got[i].value, got[i].err, want[i].value, want[i].err)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d elements through the typed lane, %d through store.Entity", len(got), len(want))
	}
	return ""
}

// rawRows writes n random entities over three partitions, raw: each
// property present or not, a few of another type than tqRow's field (I as
// a string: that entity does not decode), a property X tqRow lacks.
func rawRows(t *testing.T, tbl store.Table, g *gen, n int) {
	t.Helper()
	byPK := map[string][]store.Action{}
	for i := range n {
		pk := fmt.Sprintf("p%d", g.r.IntN(3))
		rk := fmt.Sprintf("%s%03d", g.key(), i)
		props := map[string]any{}
		maybe := func(name string, v func() any) {
			if g.r.IntN(5) != 0 {
				props[name] = v()
			}
		}
		maybe("S", func() any { return g.str(12) })
		maybe("I", func() any {
			if g.r.IntN(12) == 0 {
				return "not an int"
			}
			return int32(g.r.IntN(100))
		})
		maybe("L", func() any { return g.i64() })
		maybe("D", func() any { return g.f64() })
		maybe("B", func() any { return g.coin() })
		maybe("T", func() any { return g.when() })
		maybe("Bin", func() any { return append([]byte{}, g.bytes(24)...) })
		maybe("G", func() any { return g.guid() })
		maybe("Ptr", func() any { return g.i64() })
		maybe("X", func() any { return int32(g.r.IntN(10)) })
		byPK[pk] = append(byPK[pk], store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: rk, Properties: props}})
	}
	for pk, acts := range byPK {
		for len(acts) > 0 {
			k := min(len(acts), store.MaxBatchActions)
			if _, err := tbl.Transact(context.Background(), acts[:k]); err != nil {
				t.Fatalf("write partition %s: %v", pk, err)
			}
			acts = acts[k:]
		}
	}
}

// randomCond draws a condition on tqRow of one to three comparisons,
// with and, or and not.
func randomCond(g *gen) Cond[tqRow] {
	one := func() Cond[tqRow] {
		switch g.r.IntN(11) {
		case 0:
			return Where[tqRow]("I").Gt(g.r.IntN(100))
		case 1:
			return Where[tqRow]("S").Ge(g.str(3))
		case 2:
			return Where[tqRow]("B").Eq(g.coin())
		case 3:
			return Where[tqRow]("L").Lt(g.i64())
		case 4:
			return Where[tqRow]("D").Ge(g.f64())
		case 5:
			return Where[tqRow]("T").Gt(g.when())
		case 6:
			return Where[tqRow]("PartitionKey").Eq(fmt.Sprintf("p%d", g.r.IntN(3)))
		case 7:
			return Where[tqRow]("RowKey").Ge(g.key())
		case 8:
			return ParseCond[tqRow](fmt.Sprintf("X ge %d", g.r.IntN(10))) // a property tqRow lacks
		case 9:
			return Where[tqRow]("Timestamp").Gt(time.Now().Add(-time.Hour))
		}
		return Where[tqRow]("G").Ne(g.guid())
	}
	c := one()
	for range g.r.IntN(3) {
		switch g.r.IntN(3) {
		case 0:
			c = c.And(one())
		case 1:
			c = c.Or(one())
		default:
			c = Not(c).And(one())
		}
	}
	return c
}

// pagesOf walks QueryPage from token "" to the end and renders each page.
func pagesOf[T any](ctx context.Context, query func(ctx context.Context, token string, size int, where ...Cond[T]) (Page[T], error), size int, where Cond[T]) (pages []string, tokens []string, err error) {
	token := ""
	for range 10000 {
		p, err := query(ctx, token, size, where)
		if err != nil {
			return pages, tokens, err
		}
		var b strings.Builder
		for _, v := range p.Items {
			b.WriteString(canon(v))
			b.WriteString("\n")
		}
		pages = append(pages, b.String())
		tokens = append(tokens, p.Next)
		if p.Next == "" {
			return pages, tokens, nil
		}
		token = p.Next
	}
	return pages, tokens, errors.New("QueryPage never ended")
}

// Random data, random filters, every page size: Repository.Query,
// Partition.Query and QueryPage return the same values, errors and tokens
// through the typed lane as through store.Entity, with projections
// ($select of T's fields) and without (WithoutSelect, an extra field).
func TestTypedQueryMatchesEntityRoute(t *testing.T) {
	runShortPages(t, 7, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		rows, cases := 240, 120
		if b.Short() {
			rows, cases = 80, 30
		}
		name := b.NewTable(t, "TypedQ")
		g := newGen(11)
		rawRows(t, b.Store.Table(name), g, rows)
		var values, errs, pages int
		for c := range cases {
			size := []int{0, 1, 2, 3, 5, 10, 1000}[g.r.IntN(7)]
			var opts []Option
			if size > 0 {
				opts = append(opts, WithPageSize(size))
			}
			if g.r.IntN(4) == 0 {
				opts = append(opts, WithoutSelect())
			}
			typed := NewRepository[tqRow](b.Store, name, opts...)
			plain := NewRepository[tqRow](entityRoute{b.Store}, name, opts...)
			if typed.typed == nil || plain.typed != nil {
				t.Fatalf("%s: the typed repository has no lane, or the plain one has", b.Name)
			}
			where := randomCond(g)
			got, want := collectSeq(typed.Query(ctx, where)), collectSeq(plain.Query(ctx, where))
			if d := diffItems(got, want); d != "" {
				t.Fatalf("case %d: Query(%s) with %d-entity pages: %s", c, where, size, d)
			}
			for _, it := range got {
				if it.err != "" {
					errs++
				} else {
					values++
				}
			}
			pk := fmt.Sprintf("p%d", g.r.IntN(3))
			got, want = collectSeq(typed.Partition(pk).Query(ctx, where)), collectSeq(plain.Partition(pk).Query(ctx, where))
			if d := diffItems(got, want); d != "" {
				t.Fatalf("case %d: Partition(%s).Query(%s): %s", c, pk, where, d)
			}
			extra := NewRepository[tqRowExtra](b.Store, name, opts...)
			extraPlain := NewRepository[tqRowExtra](entityRoute{b.Store}, name, opts...)
			xw := ParseCond[tqRowExtra](where.String())
			got, want = collectSeq(extra.Query(ctx, xw)), collectSeq(extraPlain.Query(ctx, xw))
			if d := diffItems(got, want); d != "" {
				t.Fatalf("case %d: Query(%s) into a struct with an extra field: %s", c, where, d)
			}
			psize := []int{1, 2, 3, 7, 50, 1000}[g.r.IntN(6)]
			tp, tt, terr := pagesOf(ctx, typed.QueryPage, psize, where)
			ep, et, eerr := pagesOf(ctx, plain.QueryPage, psize, where)
			if errString(terr) != errString(eerr) || !slices.Equal(tp, ep) || !slices.Equal(tt, et) {
				t.Fatalf("case %d: QueryPage(%s) of %d: typed %d pages (%v), entity %d pages (%v); tokens equal %v",
					c, where, psize, len(tp), terr, len(ep), eerr, slices.Equal(tt, et))
			}
			pages += len(tp)
			// A token of either route continues on the other.
			if terr == nil && len(tt) > 1 {
				a, _ := typed.QueryPage(ctx, tt[0], psize, where)
				z, _ := plain.QueryPage(ctx, tt[0], psize, where)
				if len(a.Items) != len(z.Items) || a.Next != z.Next {
					t.Fatalf("case %d: the typed route's token continued to %d items (%q) on it, %d (%q) on the entity route", c, len(a.Items), a.Next, len(z.Items), z.Next)
				}
			}
		}
		t.Logf("%s: %d rows, %d random queries: %d values and %d entity errors alike on both routes, %d QueryPage pages alike", b.Name, rows, cases, values, errs, pages)
		if values == 0 || errs == 0 {
			t.Fatalf("the random queries returned %d values and %d errors: the test proves little", values, errs)
		}
	})
}

// Kinds for the kind tests: a customer (prefix), an order (prefix and a
// discriminator field), its second version (the marker "order@2"), an
// event (a discriminator alone) and an event with an extra field.
type tqCustomer struct {
	P    string `table:",pk"`
	R    string `table:",rk"`
	Name string
}

func (tqCustomer) TableKind() Kind { return Kind{Prefix: "c_"} }

type tqOrder struct {
	P     string `table:",pk"`
	R     string `table:",rk"`
	Kind  string
	Total int64
}

func (tqOrder) TableKind() Kind { return Kind{Prefix: "o_", Property: "Kind", Value: "order"} }

type tqOrderV2 struct {
	P     string `table:",pk"`
	R     string `table:",rk"`
	Total int64
	Note  string
}

func (tqOrderV2) TableKind() Kind {
	return Kind{Prefix: "o_", Property: "Kind", Value: "order", Version: 2}
}

type tqEvent struct {
	P    string `table:",pk"`
	R    string `table:",rk"`
	What string
}

func (tqEvent) TableKind() Kind { return Kind{Property: "Kind", Value: "event"} }

type tqEventExtra struct {
	P    string `table:",pk"`
	R    string `table:",rk"`
	What string
	More map[string]any `table:",extra"`
}

func (tqEventExtra) TableKind() Kind { return Kind{Property: "Kind", Value: "event"} }

// kindCheck reads the mixed table as K through both routes: Query and
// Partition.Query (the kind's own rows), ReadPage of whole partitions
// (every row: another kind's refused with ErrWrongKind) and Get of every
// row. It returns the rows of K, the refusals and the reads compared.
func kindCheck[K any](t *testing.T, st store.Store, name string, all []store.Entity) (own, refused, reads int) {
	t.Helper()
	ctx := context.Background()
	typed, plain := NewRepository[K](st, name), NewRepository[K](entityRoute{st}, name)
	got, want := collectSeq(typed.Query(ctx)), collectSeq(plain.Query(ctx))
	if d := diffItems(got, want); d != "" {
		t.Fatalf("%s: Query: %s", reflect.TypeFor[K](), d)
	}
	for _, it := range got {
		if it.err != "" {
			t.Fatalf("%s: Query of the kind's own rows failed: %s", reflect.TypeFor[K](), it.err)
		}
	}
	own = len(got)
	for _, pk := range []string{"a", "b"} {
		got, want := collectSeq(typed.Partition(pk).Query(ctx)), collectSeq(plain.Partition(pk).Query(ctx))
		if d := diffItems(got, want); d != "" {
			t.Fatalf("%s: Partition(%s).Query: %s", reflect.TypeFor[K](), pk, d)
		}
		q := store.Query{Filter: "PartitionKey eq '" + pk + "'"}
		var tr, er []Row[K]
		for tok, first := "", true; first || tok != ""; first = false {
			q.Continuation = tok
			var err error
			if tr, tok, err = ReadPage(ctx, st.Table(name), q, tr); err != nil {
				t.Fatal(err)
			}
		}
		for tok, first := "", true; first || tok != ""; first = false {
			q.Continuation = tok
			var err error
			if er, tok, err = ReadPage(ctx, plainTable{st.Table(name)}, q, er); err != nil {
				t.Fatal(err)
			}
		}
		if len(tr) != len(er) {
			t.Fatalf("%s: ReadPage of partition %s: %d rows typed, %d through store.Entity", reflect.TypeFor[K](), pk, len(tr), len(er))
		}
		var zero K
		for i := range tr {
			a, z := tr[i], er[i]
			if a.PartitionKey != z.PartitionKey || a.RowKey != z.RowKey || canon(a.Value) != canon(z.Value) || errString(a.Err) != errString(z.Err) {
				t.Fatalf("%s: ReadPage row %d:\n typed:  %s %s %s %v\n entity: %s %s %s %v", reflect.TypeFor[K](), i,
					a.PartitionKey, a.RowKey, canon(a.Value), a.Err, z.PartitionKey, z.RowKey, canon(z.Value), z.Err)
			}
			if a.Err != nil {
				if !errors.Is(a.Err, ErrWrongKind) || canon(a.Value) != canon(zero) {
					t.Fatalf("%s: row (%s, %s): %v with value %s; want ErrWrongKind and the zero value", reflect.TypeFor[K](), a.PartitionKey, a.RowKey, a.Err, canon(a.Value))
				}
				refused++
			}
		}
	}
	for _, e := range all {
		a, aerr := typed.Get(ctx, e.PartitionKey, e.RowKey)
		z, zerr := plain.Get(ctx, e.PartitionKey, e.RowKey)
		if canon(a) != canon(z) || errString(aerr) != errString(zerr) {
			t.Fatalf("%s: Get(%s, %s):\n typed:  %s %v\n entity: %s %v", reflect.TypeFor[K](), e.PartitionKey, e.RowKey, canon(a), aerr, canon(z), zerr)
		}
		if aerr != nil && !errors.Is(aerr, ErrWrongKind) {
			t.Fatalf("%s: Get(%s, %s): %v", reflect.TypeFor[K](), e.PartitionKey, e.RowKey, aerr)
		}
		reads++
	}
	return own, refused, reads
}

// Kinds side by side in two partitions, with rows that are almost a kind
// (the prefix without the discriminator, the discriminator of another
// type or version): every kinded type reads its own rows alike through
// both routes, refuses the others with ErrWrongKind (the same message),
// and honours the versioned marker.
func TestTypedQueryKinds(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "TypedKinds")
		tbl := b.Store.Table(name)
		var all []store.Entity
		put := func(e store.Entity) {
			if _, err := tbl.Insert(ctx, e); err != nil {
				t.Fatalf("insert (%s, %s): %v", e.PartitionKey, e.RowKey, err)
			}
			all = append(all, e)
		}
		for _, pk := range []string{"a", "b"} {
			for i := range 3 {
				n := fmt.Sprint(i)
				put(store.Entity{PartitionKey: pk, RowKey: "c_" + n, Properties: map[string]any{"Name": "customer " + n}})
				put(store.Entity{PartitionKey: pk, RowKey: "o_1_" + n, Properties: map[string]any{"Kind": "order", "Total": int64(i)}})
				put(store.Entity{PartitionKey: pk, RowKey: "o_2_" + n, Properties: map[string]any{"Kind": "order@2", "Total": int64(10 + i), "Note": "v2"}})
				put(store.Entity{PartitionKey: pk, RowKey: "e_" + n, Properties: map[string]any{"Kind": "event", "What": "clicked", "Where": int32(i)}})
			}
			// Almost a kind.
			put(store.Entity{PartitionKey: pk, RowKey: "o_9_nokind", Properties: map[string]any{"Total": int64(1)}})
			put(store.Entity{PartitionKey: pk, RowKey: "o_9_int", Properties: map[string]any{"Kind": int32(7), "Total": int64(1)}})
			put(store.Entity{PartitionKey: pk, RowKey: "o_9_v3", Properties: map[string]any{"Kind": "order@3", "Total": int64(1)}})
			put(store.Entity{PartitionKey: pk, RowKey: "x_event", Properties: map[string]any{"Kind": "event", "What": "elsewhere"}})
			put(store.Entity{PartitionKey: pk, RowKey: "c_bad", Properties: map[string]any{"Name": int64(5)}}) // a customer that does not decode
		}
		report := func(what string, own, refused, reads, wantOwn int) {
			t.Logf("%s: %s: %d rows of the kind, %d rows refused with ErrWrongKind, %d Gets alike", b.Name, what, own, refused, reads)
			if own != wantOwn {
				t.Errorf("%s: Query returned %d rows, want %d", what, own, wantOwn)
			}
		}
		// The customer query reads c_bad too, whose Name does not decode:
		// checked apart below.
		own, refused, reads := kindCheck[tqOrder](t, b.Store, name, all)
		report("order v1", own, refused, reads, 6)
		own, refused, reads = kindCheck[tqOrderV2](t, b.Store, name, all)
		report("order v2", own, refused, reads, 6)
		own, refused, reads = kindCheck[tqEvent](t, b.Store, name, all)
		report("event", own, refused, reads, 8)
		own, refused, reads = kindCheck[tqEventExtra](t, b.Store, name, all)
		report("event with extra", own, refused, reads, 8)

		typed, plain := NewRepository[tqCustomer](b.Store, name), NewRepository[tqCustomer](entityRoute{b.Store}, name)
		got, want := collectSeq(typed.Query(ctx)), collectSeq(plain.Query(ctx))
		if d := diffItems(got, want); d != "" {
			t.Fatalf("customers: %s", d)
		}
		bad := 0
		for _, it := range got {
			if it.err != "" {
				bad++
			}
		}
		if len(got) != 8 || bad != 2 {
			t.Fatalf("customers: %d elements, %d errors; want 8 and 2 (c_bad's Name is an Int64)", len(got), bad)
		}
		// The error names the row of another kind and what it holds.
		_, err := NewRepository[tqOrder](b.Store, name).Get(ctx, "a", "o_9_int")
		if !errors.Is(err, ErrWrongKind) || !strings.Contains(err.Error(), "Kind is 7, not \"order\"") {
			t.Errorf("Get of an order whose Kind is an Int32: %v", err)
		}
		_, err = NewRepository[tqOrderV2](b.Store, name).Get(ctx, "a", "o_1_0")
		if !errors.Is(err, ErrWrongKind) || !strings.Contains(err.Error(), `"order", not "order@2"`) {
			t.Errorf("Get of a version 1 order as version 2: %v", err)
		}
		ex, err := NewRepository[tqEventExtra](b.Store, name).Get(ctx, "b", "e_1")
		if err != nil || ex.More["Kind"] != "event" || ex.More["Where"] != int32(1) || len(ex.More) != 2 {
			t.Errorf("an event's extra field holds %v (%v); want its discriminator and Where", ex.More, err)
		}
	})
}

// Bad input is refused alike on both routes, before anything is sent or
// decoded: page sizes, tokens of another query or damaged, a condition
// that carries an error, a filter past the length limit, a $top out of
// range, a type that cannot be mapped.
func TestTypedQueryBadInput(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "TypedBad")
		rawRows(t, b.Store.Table(name), newGen(3), 30)
		typed := NewRepository[tqRow](b.Store, name)
		plain := NewRepository[tqRow](entityRoute{b.Store}, name)
		first, err := typed.QueryPage(ctx, "", 5)
		if err != nil || first.Next == "" {
			t.Fatalf("first page: %v, token %q", err, first.Next)
		}
		long := ParseCond[tqRow]("S eq '" + strings.Repeat("x", store.MaxFilterBytes) + "'")
		cases := []struct {
			what string
			do   func(r *Repository[tqRow]) error
			code string
		}{
			{"QueryPage size 0", func(r *Repository[tqRow]) error { _, err := r.QueryPage(ctx, "", 0); return err }, ""},
			{"QueryPage size 1001", func(r *Repository[tqRow]) error { _, err := r.QueryPage(ctx, "", 1001); return err }, ""},
			{"a token of another condition", func(r *Repository[tqRow]) error {
				_, err := r.QueryPage(ctx, first.Next, 5, Where[tqRow]("I").Gt(3))
				return err
			}, store.CodeInvalidInput},
			{"a damaged token", func(r *Repository[tqRow]) error {
				_, err := r.QueryPage(ctx, first.Next[:len(first.Next)-2], 5)
				return err
			}, store.CodeInvalidInput},
			{"a condition with an error", func(r *Repository[tqRow]) error {
				for _, err := range r.Query(ctx, Where[tqRow]("Nope").Eq(1)) {
					return err
				}
				return nil
			}, ""},
			{"a filter past the limit", func(r *Repository[tqRow]) error {
				for _, err := range r.Query(ctx, long) {
					return err
				}
				return nil
			}, store.CodeInvalidInput},
		}
		for _, c := range cases {
			terr, perr := c.do(typed), c.do(plain)
			if terr == nil || errString(terr) != errString(perr) {
				t.Errorf("%s: typed %v; entity %v", c.what, terr, perr)
			}
			if c.code != "" && (store.Code(terr) != c.code || store.SourceOf(terr) != store.SourceClient) {
				t.Errorf("%s: %v, want %s from the client", c.what, terr, c.code)
			}
		}
		for _, tbl := range []store.Table{b.Store.Table(name), plainTable{b.Store.Table(name)}} {
			rows, _, err := ReadPage[tqRow](ctx, tbl, store.Query{Top: store.MaxPageSize + 1}, nil)
			if store.Code(err) != store.CodeInvalidInput || len(rows) != 0 {
				t.Errorf("ReadPage with $top %d: %d rows, %v", store.MaxPageSize+1, len(rows), err)
			}
			type unmappable struct{ C chan int }
			if _, _, err := ReadPage[unmappable](ctx, tbl, store.Query{}, nil); err == nil {
				t.Errorf("ReadPage of an unmappable type: no error")
			}
		}
		t.Logf("%s: %d bad inputs refused alike on both routes, plus ReadPage's", b.Name, len(cases))
	})
}

// TestTypedQueryPageFaults: a query whose second page fails, on memstore
// (an injected fault) and on Azurite (a fault proxy in front of it):
// Query yields the first page's values, then the error, and stops;
// QueryPage returns the error and no items; through the typed lane exactly
// as through store.Entity. A page that fails once and is retried (on
// Azurite, by the SDK's retry policy) reads everything.
func TestTypedQueryPageFaults(t *testing.T) {
	t.Run("memstore", func(t *testing.T) {
		for _, fault := range []func() error{memstore.ServerBusy, memstore.InternalError, memstore.OperationTimedOut, memstore.ResponseLost} {
			queries, failAt := 0, 2
			st := memstore.New(memstore.WithFaults(func(op memstore.Operation, _ string) error {
				if op != memstore.OpQuery {
					return nil
				}
				if queries++; queries >= failAt {
					return fault()
				}
				return nil
			}))
			runPageFault(t, st, func() { queries, failAt = 0, 2 }, 10)
		}
	})
	t.Run("azurite", func(t *testing.T) {
		for _, f := range pageFaults() {
			st, reset := proxiedQueries(t, f)
			t.Logf("fault %s (once %v):", f.fault, f.once)
			runPageFault(t, st, reset, f.want)
		}
	})
}

// runPageFault fills a table of 35 rows and reads it by pages of 10 on
// both routes, reset arming the fault for each read; want is the number
// of values before the failure.
func runPageFault(t *testing.T, st store.Store, reset func(), want int) {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("TypedFault%d", rand.IntN(1_000_000))
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	defer st.DeleteTable(context.Background(), name)
	acts := make([]store.Action, 35)
	for i := range acts {
		acts[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i),
			Properties: map[string]any{"S": fmt.Sprint(i), "I": int32(i)}}}
	}
	if _, err := st.Table(name).Transact(ctx, acts); err != nil {
		t.Fatal(err)
	}
	var seqs [2][]item
	var pageErrs [2]error
	for i, s := range []store.Store{st, entityRoute{st}} {
		r := NewRepository[tqRow](s, name, WithPageSize(10))
		reset()
		seqs[i] = collectSeq(r.Query(ctx))
		reset()
		p, err := r.QueryPage(ctx, "", 10)
		if err != nil || len(p.Items) != 10 {
			t.Fatalf("the first page: %d items, %v", len(p.Items), err)
		}
		p, err = r.QueryPage(ctx, p.Next, 10)
		if err != nil && len(p.Items) != 0 {
			t.Fatalf("a failed QueryPage returned %d items", len(p.Items))
		}
		pageErrs[i] = err
	}
	if d := diffItems(seqs[0], seqs[1]); d != "" {
		t.Fatalf("a failing page: %s", d)
	}
	got := seqs[0]
	for i, it := range got[:min(len(got), want)] {
		if it.err != "" || !strings.Contains(it.value, fmt.Sprintf(`R:"r%02d"`, i)) {
			t.Fatalf("element %d is %s %q: want row r%02d (none lost, none twice)", i, it.value, it.err, i)
		}
	}
	if want < 35 {
		if len(got) != want+1 || got[want].err == "" {
			t.Fatalf("%d elements, the last %q; want %d values and then the error", len(got), got[len(got)-1].err, want)
		}
		if pageErrs[0] == nil || errString(pageErrs[0]) != errString(pageErrs[1]) {
			t.Fatalf("QueryPage across the failing page: typed %v, entity %v", pageErrs[0], pageErrs[1])
		}
	} else if len(got) != 35 || errString(pageErrs[0]) != "" || errString(pageErrs[1]) != "" {
		t.Fatalf("a page that failed once: %d elements (%q), QueryPage %v / %v; want all 35", len(got), got[len(got)-1].err, pageErrs[0], pageErrs[1])
	}
	t.Logf("runs 2 (typed, entity), faults at the second page, values before it %d, error %q, lost 0, duplicated 0", min(len(got), want), got[len(got)-1].err)
}

// pageFault is a fault the proxy puts on query requests from the second
// on (or on the second alone, once), and the values read before it.
type pageFault struct {
	fault faultproxy.Fault
	once  bool
	want  int
}

func pageFaults() []pageFault {
	return []pageFault{
		{faultproxy.Busy, false, 10},
		{faultproxy.InternalBefore, false, 10},
		{faultproxy.ResetBefore, false, 10},
		{faultproxy.TruncateAfter, false, 10},
		{faultproxy.InternalAfter, false, 10},
		{faultproxy.Busy, true, 35},
		{faultproxy.TruncateAfter, true, 35},
	}
}

// proxiedQueries returns a store on Azurite whose table requests pass
// through a fault proxy that applies f to query requests, and the
// function that re-arms it. It skips like backendtest.Azurite.
func proxiedQueries(t *testing.T, f pageFault) (store.Store, func()) {
	t.Helper()
	conn := azuritetest.Conn(t)
	var mu sync.Mutex
	queries := 0
	decide := func(r *http.Request) faultproxy.Fault {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "()") {
			return faultproxy.None
		}
		mu.Lock()
		defer mu.Unlock()
		queries++
		if queries == 2 || (queries > 2 && !f.once) {
			return f.fault
		}
		return faultproxy.None
	}
	var parts []string
	for _, part := range strings.Split(conn, ";") {
		k, v, _ := strings.Cut(part, "=")
		if strings.EqualFold(strings.TrimSpace(k), "TableEndpoint") {
			u, err := url.Parse(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			p, err := faultproxy.Start(u.Scheme+"://"+u.Host, decide)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			part = "TableEndpoint=" + p.URL + u.Path
		}
		parts = append(parts, part)
	}
	st, err := azstore.NewFromConnectionString(strings.Join(parts, ";"), &azstore.Options{
		Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 2 * time.Millisecond, MaxRetryDelay: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, func() { mu.Lock(); queries = 0; mu.Unlock() }
}
