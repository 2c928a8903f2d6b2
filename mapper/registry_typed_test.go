package mapper

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// The typed lane of RegistryTable.Query is held to the store.Entity route
// (Registry.Decode of each entity) on both backends: the same values and
// the same errors, for kinds told by a property that comes before, among
// or after the other properties, for older versions migrated on read, for
// extra properties, for rows that do not decode and for rows of no
// registered kind.

type rgA1 struct {
	P    string     `table:",pk"`
	R    string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	TS   time.Time  `table:",timestamp"`
	Name string
	N    int32
}

func (rgA1) TableKind() Kind { return Kind{Property: "Kind", Value: "a"} }

type rgA2 struct {
	P     string     `table:",pk"`
	R     string     `table:",rk"`
	ETag  store.ETag `table:",etag"`
	TS    time.Time  `table:",timestamp"`
	First string
	Last  string
	N     int64
	Rest  map[string]any `table:",extra"`
}

func (rgA2) TableKind() Kind { return Kind{Property: "Kind", Value: "a", Version: 2} }

type rgB struct {
	P    string `table:",pk"`
	R    string `table:",rk"`
	When time.Time
	Blob []byte
	G    store.GUID
	F    float64
	OK   bool
}

func (rgB) TableKind() Kind { return Kind{Property: "Kind", Value: "b"} }

func rgPropertyRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := NewPropertyRegistry("Kind")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		Register[rgA1](r, "a"),
		Register[rgA2](r, "a"),
		Register[rgB](r, "b"),
		Migrate(r, func(v rgA1) (rgA2, error) {
			if v.Name == "refuse" {
				return rgA2{}, errors.New("this one stays old")
			}
			first, last, _ := strings.Cut(v.Name, " ")
			return rgA2{First: first, Last: last, N: int64(v.N)}, nil
		}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return r
}

type rgOrder struct {
	P     string `table:",pk"`
	R     string `table:",rk"`
	Total float64
}

type rgLine struct {
	P    string `table:",pk"`
	R    string `table:",rk"`
	Item string
	Qty  int32
}

// registryResults collects a query's values and errors as comparable text.
func registryResults(t *testing.T, seq func(yield func(any, error) bool)) []string {
	t.Helper()
	var out []string
	for v, err := range seq {
		if err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		out = append(out, fmt.Sprintf("%T %+v", v, v))
	}
	return out
}

func TestRegistryTypedLaneMatchesDecode(t *testing.T) {
	runShortPages(t, 7, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		st := b.Store
		table := b.NewTable(t, "RegTyped")
		tbl := st.Table(table)
		r := rgPropertyRegistry(t)
		rt := r.On(st, table)
		when := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		for i := range 5 {
			for _, v := range []any{
				&rgA1{P: "p", R: fmt.Sprintf("a1-%d", i), Name: fmt.Sprintf("Ann %d", i), N: int32(i)},
				&rgA2{P: "p", R: fmt.Sprintf("a2-%d", i), First: "Bo", Last: fmt.Sprint(i), N: int64(i) << 40,
					Rest: map[string]any{"Aaa": int32(i), "Zzz": "after the marker"}},
				&rgB{P: "p", R: fmt.Sprintf("b-%d", i), When: when.Add(time.Duration(i) * time.Hour), Blob: []byte{byte(i), 0},
					G: store.GUID{15: byte(i)}, F: float64(i) + 0.5, OK: i%2 == 0},
			} {
				if err := rt.Insert(ctx, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Rows that fail: a migration that refuses, a value of the wrong
		// type (F is a Double), and properties on both sides of the marker.
		if err := rt.Insert(ctx, &rgA1{P: "p", R: "a1-refuse", Name: "refuse"}); err != nil {
			t.Fatal(err)
		}
		raw := []store.Entity{
			{PartitionKey: "p", RowKey: "b-bad", Properties: map[string]any{"Kind": "b", "F": "not a number", "Blob": []byte{1}}},
			{PartitionKey: "p", RowKey: "b-sides", Properties: map[string]any{"Kind": "b", "Aardvark": int64(1), "OK": true, "Zebra": 2.5}},
		}
		for _, e := range raw {
			if _, err := tbl.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		// Unknown kinds: the registry's filter leaves them out of
		// RegistryTable.Query; the lane itself is checked on them below.
		unknown := []store.Entity{
			{PartitionKey: "q", RowKey: "u-1", Properties: map[string]any{"Kind": "zzz", "A": "x"}},
			{PartitionKey: "q", RowKey: "u-2", Properties: map[string]any{"A": "no marker"}},
			{PartitionKey: "q", RowKey: "u-3", Properties: map[string]any{"Kind": int32(5)}},
			{PartitionKey: "q", RowKey: "u-4", Properties: map[string]any{"Kind": "a", "Name": "known after unknown"}},
		}
		for _, e := range unknown {
			if _, err := tbl.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		typed, ok := driver.Typed(tbl)
		if !ok {
			t.Fatal("the backend's table has no typed lane")
		}
		entityRT := r.On(entityRoute{st}, table)
		// 18 rows of partition p, and u-4 of partition q (a known kind).
		for n, where := range map[int][]Cond[any]{19: nil, 18: {Where[any]("PartitionKey").Eq("p")}} {
			got := registryResults(t, rt.Query(ctx, where...))
			want := registryResults(t, entityRT.Query(ctx, where...))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("typed lane:\n%s\nentity route:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(got) != n {
				t.Fatalf("%d results, want %d:\n%s", len(got), n, strings.Join(got, "\n"))
			}
		}
		// The values themselves, not only their agreement: a migrated row,
		// a row read at its own version with its extra properties, and the
		// failures.
		all := strings.Join(registryResults(t, rt.Query(ctx)), "\n")
		for _, want := range []string{
			"mapper.rgA2 {P:p R:a1-3 ETag:W/", "First:Ann Last:3 N:3 Rest:map[]}",
			"First:Bo Last:2 N:2199023255552 Rest:map[Aaa:2 Kind:a@2 Zzz:after the marker]}",
			"error: mapper: migrating row (\"p\", \"a1-refuse\") from mapper.rgA1 to mapper.rgA2: this one stays old",
			"mapper.rgB {P:p R:b-sides When:0001-01-01 00:00:00 +0000 UTC Blob:[] G:00000000-0000-0000-0000-000000000000 F:0 OK:true}",
		} {
			if !strings.Contains(all, want) {
				t.Errorf("no result holds %q:\n%s", want, all)
			}
		}
		if !strings.Contains(all, "error: mapper: mapper.rgB.F: cannot decode a stored Edm.String value into Go type float64") {
			t.Errorf("the row of the wrong type did not fail:\n%s", all)
		}
		// Rows of no registered kind, read by the lane without the
		// registry's filter, fail as Decode fails them.
		q := store.Query{Filter: filter.PK.Eq("q").String()}
		var gotU []string
		r.queryTyped(ctx, typed, q, func(v any, err error) bool {
			gotU = append(gotU, fmt.Sprintf("%T %+v %v %v", v, v, err, errors.Is(err, ErrUnknownKind)))
			return true
		})
		var wantU []string
		for e, err := range store.All(ctx, tbl, q) {
			if err != nil {
				t.Fatal(err)
			}
			v, err := r.Decode(e)
			wantU = append(wantU, fmt.Sprintf("%T %+v %v %v", v, v, err, errors.Is(err, ErrUnknownKind)))
		}
		if !reflect.DeepEqual(gotU, wantU) || len(gotU) != 4 {
			t.Fatalf("unknown kinds, typed lane:\n%s\nDecode:\n%s", strings.Join(gotU, "\n"), strings.Join(wantU, "\n"))
		}
		t.Logf("19 rows of 2 kinds (one in 2 versions) and 4 rows read without the registry's filter: the typed lane gives what Decode gives")
	})
}

func TestRegistryTypedLanePrefixes(t *testing.T) {
	runShortPages(t, 11, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		st := b.Store
		table := b.NewTable(t, "RegPrefix")
		r := NewPrefixRegistry()
		if err := Register[rgOrder](r, "ord_"); err != nil {
			t.Fatal(err)
		}
		if err := Register[rgLine](r, "line_"); err != nil {
			t.Fatal(err)
		}
		rt := r.On(st, table)
		for i := range 4 {
			if err := rt.Insert(ctx, &rgOrder{P: "o", R: fmt.Sprintf("ord_%d", i), Total: float64(i) * 1.5}); err != nil {
				t.Fatal(err)
			}
			for j := range 3 {
				if err := rt.Insert(ctx, &rgLine{P: "o", R: fmt.Sprintf("line_%d_%d", i, j), Item: "thing", Qty: int32(j)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A row of the wrong type and one of no registered prefix.
		tbl := st.Table(table)
		for _, e := range []store.Entity{
			{PartitionKey: "o", RowKey: "line_9_9", Properties: map[string]any{"Qty": "many"}},
			{PartitionKey: "o", RowKey: "zzz_1", Properties: map[string]any{"Item": "other"}},
		} {
			if _, err := tbl.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		got := registryResults(t, rt.Query(ctx))
		want := registryResults(t, r.On(entityRoute{st}, table).Query(ctx))
		if !reflect.DeepEqual(got, want) || len(got) != 17 {
			t.Fatalf("typed lane (%d):\n%s\nentity route (%d):\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
		}
		q := store.Query{Filter: filter.PK.Eq("o").String()}
		var gotAll []string
		r.queryTyped(ctx, tbl.(store.TypedTable), q, func(v any, err error) bool {
			gotAll = append(gotAll, fmt.Sprintf("%T %+v %v", v, v, err))
			return true
		})
		var wantAll []string
		for e, err := range store.All(ctx, tbl, q) {
			if err != nil {
				t.Fatal(err)
			}
			v, err := r.Decode(e)
			wantAll = append(wantAll, fmt.Sprintf("%T %+v %v", v, v, err))
		}
		if !reflect.DeepEqual(gotAll, wantAll) || len(gotAll) != 18 {
			t.Fatalf("without the registry's filter, typed lane:\n%s\nDecode:\n%s", strings.Join(gotAll, "\n"), strings.Join(wantAll, "\n"))
		}
	})
}

// TestRegistryTapeOrders feeds one entity's members to the lane's reader
// in every position of the discriminator (first, between, last, absent)
// and with the ETag and Timestamp before it: the value or error is
// Decode's for the same entity each time.
func TestRegistryTapeOrders(t *testing.T) {
	r := rgPropertyRegistry(t)
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	props := []struct {
		name string
		v    any
	}{
		{"Blob", []byte{7, 8}}, {"F", 2.25}, {"G", store.GUID{1: 2}}, {"OK", true}, {"When", when},
		{"Stray", int64(9)}, {"N", int32(3)},
	}
	for _, marker := range []any{"b", "a", "zzz", int32(1), nil} {
		for pos := 0; pos <= len(props); pos++ {
			e := store.Entity{PartitionKey: "p", RowKey: "r", ETag: `W/"x"`, Timestamp: when, Properties: map[string]any{}}
			p := &registryPage{r: r}
			rd := p.next()
			rd.SetPartitionKey(e.PartitionKey)
			rd.SetRowKey(e.RowKey)
			rd.SetETag(e.ETag)
			rd.SetTimestamp(e.Timestamp)
			for i := 0; i <= len(props); i++ {
				if i == pos && marker != nil {
					e.Properties["Kind"] = marker
					if err := store.ReadValue(rd, "Kind", marker); err != nil {
						t.Fatal(err)
					}
				}
				if i < len(props) {
					e.Properties[props[i].name] = props[i].v
					if err := store.ReadValue(rd, props[i].name, props[i].v); err != nil {
						t.Fatal(err)
					}
				}
			}
			p.flush()
			want, wantErr := r.Decode(e)
			got := p.out[0]
			if fmt.Sprint(got.err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got.v, want) {
				t.Fatalf("marker %#v at %d: lane %+v, %v; Decode %+v, %v", marker, pos, got.v, got.err, want, wantErr)
			}
		}
	}
}

// TestRegistryTypedWritesMatchEntityRoute: the registry's writes on the
// typed lane store what the store.Entity route stores (the discriminator
// and extra properties included), set the same ETags back, and refuse the
// same values with the same errors.
func TestRegistryTypedWritesMatchEntityRoute(t *testing.T) {
	runShortPages(t, 3, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		st := b.Store
		typedName, plainName := b.NewTable(t, "RegWTyped"), b.NewTable(t, "RegWPlain")
		r := rgPropertyRegistry(t)
		pr := NewPrefixRegistry()
		if err := Register[rgOrder](pr, "ord_"); err != nil {
			t.Fatal(err)
		}
		routes := []struct {
			name  string
			table string
			rt    *RegistryTable
			prt   *RegistryTable
		}{
			{"typed", typedName, r.On(st, typedName), pr.On(st, typedName)},
			{"entity", plainName, r.On(entityRoute{st}, plainName), pr.On(entityRoute{st}, plainName)},
		}
		var errs [2][]string
		for i, route := range routes {
			if _, ok := driver.Typed(route.rt.Table()); ok != (i == 0) {
				t.Fatalf("%s route: typed lane %v", route.name, ok)
			}
			rec := func(err error) {
				s := "<nil>"
				if err != nil {
					// The service's answers name the table and carry
					// request ids: compare their code; the mapper's own
					// refusals whole.
					msg := err.Error()
					if c := store.Code(err); c != "" {
						msg = c
					}
					s = fmt.Sprintf("%v | no ETag %v | precondition %v", msg, errors.Is(err, ErrNoETag), errors.Is(err, store.ErrPreconditionFailed))
				}
				errs[i] = append(errs[i], s)
			}
			old := &rgA1{P: "p", R: "old", Name: "Ann Lee", N: 1}
			rec(route.rt.Insert(ctx, old))
			cur := &rgA2{P: "p", R: "cur", First: "Bo", Last: "Ng", N: 1 << 40, Rest: map[string]any{"Aaa": int32(1), "Zzz": "z"}}
			rec(route.rt.Insert(ctx, cur))
			rec(route.rt.Insert(ctx, &rgB{P: "p", R: "b", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Blob: []byte{1}, F: 0.5, OK: true}))
			rec(route.rt.Upsert(ctx, &rgB{P: "p", R: "b", F: 1.5}, store.Merge))
			rec(route.rt.Upsert(ctx, &rgB{P: "p", R: "b2", F: 2.5}, store.Replace))
			etag := cur.ETag
			cur.Last = "Ngo"
			rec(route.rt.Update(ctx, cur, store.Replace)) // conditional, current ETag
			if cur.ETag == etag || cur.ETag == "" {
				t.Errorf("%s: Update set ETag %q (was %q)", route.name, cur.ETag, etag)
			}
			stale := *cur
			stale.ETag = etag
			rec(route.rt.Update(ctx, &stale, store.Merge))               // stale ETag
			rec(route.rt.Update(ctx, &rgB{P: "p", R: "b"}, store.Merge)) // no ETag field: ErrNoETag
			rec(route.rt.UpdateUnconditional(ctx, &rgA1{P: "p", R: "old", Name: "Ann Q", N: 2}, store.Merge))
			rec(route.prt.Insert(ctx, &rgOrder{P: "p", R: "ord_1", Total: 3}))
			rec(route.prt.Insert(ctx, &rgOrder{P: "p", R: "nope_1", Total: 3})) // no prefix
			rec(route.rt.Insert(ctx, (*rgB)(nil)))
			rec(route.rt.Insert(ctx, &rgB{P: "p", R: "bad\tkey"}))
		}
		if !reflect.DeepEqual(errs[0], errs[1]) {
			t.Fatalf("outcomes differ:\ntyped:\n%s\nentity:\n%s", strings.Join(errs[0], "\n"), strings.Join(errs[1], "\n"))
		}
		got, want := storedRows(t, st.Table(typedName)), storedRows(t, st.Table(plainName))
		if !reflect.DeepEqual(got, want) || len(got) != 5 {
			t.Fatalf("stored rows differ:\ntyped:\n%s\nentity:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		t.Logf("%d writes with the same outcomes, %d rows stored alike:\n%s", len(errs[0]), len(got), strings.Join(got, "\n"))
	})
}

// TestMixedBatchTypedMatchesEntityRoute: a MixedBatch over a typed table
// stores what it stores over the store.Entity route, sets the same ETags
// back, and refuses the same actions when they are added and when the
// service refuses the transaction (its failing index).
func TestMixedBatchTypedMatchesEntityRoute(t *testing.T) {
	runShortPages(t, 5, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		st := b.Store
		typedName, plainName := b.NewTable(t, "MixTyped"), b.NewTable(t, "MixPlain")
		r := rgPropertyRegistry(t)
		var outcomes [2][]string
		for i, tbl := range []store.Table{st.Table(typedName), entityRoute{st}.Table(plainName)} {
			if _, ok := driver.Typed(tbl); ok != (i == 0) {
				t.Fatalf("route %d: typed lane %v", i, ok)
			}
			rec := func(err error) {
				s := "<nil>"
				if err != nil {
					var se *store.Error
					idx := -2
					if errors.As(err, &se) {
						idx = se.Index
					}
					s = fmt.Sprintf("code %q index %d no ETag %v full %v", store.Code(err), idx, errors.Is(err, ErrNoETag), errors.Is(err, ErrBatchFull))
				}
				outcomes[i] = append(outcomes[i], s)
			}
			cur := &rgA2{P: "p", R: "cur", First: "Bo", Last: "Ng", N: 7, Rest: map[string]any{"Aaa": "x"}}
			bt := r.Batch(tbl)
			rec(bt.Insert(&rgA1{P: "p", R: "old", Name: "Ann Lee", N: 1}))
			rec(bt.Insert(cur))
			rec(bt.Upsert(&rgB{P: "p", R: "b", F: 0.5, OK: true}, store.Replace))
			rec(bt.Insert(&rgB{P: "q", R: "other"}))           // another partition: refused at add
			rec(bt.Insert(&rgB{P: "p", R: "b"}))               // the same row twice: refused at add
			rec(bt.Update(&rgB{P: "p", R: "b2"}, store.Merge)) // no ETag field: refused at add
			rec(bt.Run(ctx))
			if cur.ETag == "" {
				t.Errorf("route %d: no ETag set back", i)
			}
			etag := cur.ETag
			cur.Last = "Ngo"
			bt = r.Batch(tbl)
			rec(bt.Update(cur, store.Replace))
			rec(bt.UpdateUnconditional(&rgA1{P: "p", R: "old", Name: "Ann Q", N: 2}, store.Merge))
			rec(bt.Delete(&rgB{P: "p", R: "b"})) // no ETag field: refused at add
			rec(bt.DeleteUnconditional(&rgB{P: "p", R: "b"}))
			rec(bt.Run(ctx))
			if cur.ETag == etag {
				t.Errorf("route %d: the update's ETag was not set back", i)
			}
			// A transaction the service refuses at its second action.
			stale := *cur
			stale.ETag = etag
			bt = r.Batch(tbl)
			rec(bt.Insert(&rgB{P: "p", R: "b3"}))
			rec(bt.Update(&stale, store.Merge))
			rec(bt.Run(ctx))
		}
		if !reflect.DeepEqual(outcomes[0], outcomes[1]) {
			t.Fatalf("outcomes differ:\ntyped:\n%s\nentity:\n%s", strings.Join(outcomes[0], "\n"), strings.Join(outcomes[1], "\n"))
		}
		got, want := storedRows(t, st.Table(typedName)), storedRows(t, st.Table(plainName))
		if !reflect.DeepEqual(got, want) || len(got) != 2 {
			t.Fatalf("stored rows differ:\ntyped:\n%s\nentity:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		t.Logf("outcomes:\n%s\nrows:\n%s", strings.Join(outcomes[0], "\n"), strings.Join(got, "\n"))
	})
}

// storedRows lists every row of tbl as "pk/rk properties", in key order,
// for comparing what two routes stored.
func storedRows(t *testing.T, tbl store.Table) []string {
	t.Helper()
	var out []string
	for e, err := range store.All(t.Context(), tbl, store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s/%s %v", e.PartitionKey, e.RowKey, e.Properties))
	}
	return out
}
