package model_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// segmentRows reads the rows of the list family of value in partition
// pk, raw: RowKey -> its ids.
func (f *fixture) segmentRows(t *testing.T, pk, value string) map[string][]string {
	t.Helper()
	rng, err := keys.PrefixOf("n", "family", value)
	if err != nil {
		t.Fatal(err)
	}
	rng.Lower = mustJoin("n", "family", value)
	out := map[string][]string{}
	q := store.Query{Filter: filter.PK.Eq(pk).And(filter.RK.InRange(rng)).String()}
	for row, err := range store.All(context.Background(), f.raw().Table(f.table), q) {
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		if s, _ := row.Properties[model.ListProperty].(string); s != "" {
			ids = strings.Split(s, "\n")
		}
		out[row.RowKey] = ids
	}
	return out
}

// TestListSegments: a list spread over segments (Options.ListSegmentUnits
// small) through random inserts, value changes and deletes: after every
// write ListIDs names exactly the entities holding the value, each
// segment is within its bound (or holds one id) and none is empty, and
// Check is clean at the end; a value's list grows past what one row can
// hold (MaxListUnits) when the segments are full size.
func TestListSegments(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fList})
		rnd := rand.New(rand.NewPCG(7, 11))
		holds := map[string]string{} // id -> last name
		values := []string{"Jones", "Smith"}
		n := 60
		if !e.Fake() {
			n = 30
		}
		for i := range n {
			id := fmt.Sprintf("%03d", rnd.IntN(40))
			v := values[rnd.IntN(2)]
			var err error
			switch was, ok := holds[id]; {
			case !ok:
				err = f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id, LastName: v})
				holds[id] = v
			case i%4 == 0:
				err = f.m.Delete(ctx, "Sales", id, "")
				delete(holds, id)
			default:
				err = f.m.Update(ctx, &Employee{Dept: "Sales", ID: id, LastName: v, N: i}, store.Replace)
				holds[id] = v
				_ = was
			}
			if err != nil {
				t.Fatalf("write %d (%s): %v", i, id, err)
			}
			for _, v := range values {
				var want []string
				for id, w := range holds {
					if w == v {
						want = append(want, id)
					}
				}
				slices.Sort(want)
				got, err := f.m.ListIDs(ctx, "family", "Sales", v)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("after write %d: list %s = %q, %v; want %q", i, v, got, err, want)
				}
				for k, ids := range f.segmentRows(t, "Sales", v) {
					if len(ids) == 0 || len(ids) > 1 && len(strings.Join(ids, "\n")) > listSegmentUnits {
						t.Fatalf("after write %d: segment %q holds %q (bound %d units)", i, k, ids, listSegmentUnits)
					}
				}
			}
		}
		if len(f.segmentRows(t, "Sales", "Jones")) < 3 {
			t.Fatalf("the list did not split: %v", f.segmentRows(t, "Sales", "Jones"))
		}
		got, err := f.m.ListOf(ctx, "family", "Sales", "Jones")
		if err != nil || len(got) == 0 {
			t.Fatalf("ListOf: %d, %v", len(got), err)
		}
		if r := f.verify(t); r.bad() {
			t.Fatal(r)
		}
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check: %v, %v", rep, err)
		}
	})
}

// TestListPastOneRow: with full-size segments, a value's list holds more
// ids than one row could (MaxListUnits), in several segments.
func TestListPastOneRow(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	f := newFixture(t, e, nil, []string{fList})
	f.mo.ListSegmentUnits = 0 // the default: MaxListUnits
	f.restart(t)
	id := func(i int) string { return fmt.Sprintf("%0900d", i) }
	n := model.MaxListUnits/901 + 10
	for i := range n {
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id(i), LastName: "Many"}); err != nil {
			t.Fatalf("id %d of %d: %v", i, n, err)
		}
	}
	got, err := f.m.ListIDs(ctx, "family", "Sales", "Many")
	if err != nil || len(got) != n {
		t.Fatalf("ListIDs: %d ids, %v; want %d", len(got), err, n)
	}
	if segs := f.segmentRows(t, "Sales", "Many"); len(segs) < 2 {
		t.Fatalf("%d ids of 900 units in %d segments", n, len(segs))
	}
	if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
		t.Fatalf("Check: %v, %v", rep, err)
	}
}

// TestListSegmentLimit: ids added in increasing order fill their
// segments; a write that would split a value's list into more than
// MaxListSegments segments is refused, naming the count and the limit,
// with nothing written; and a bad Options.ListSegmentUnits is refused at
// Define.
func TestListSegmentLimit(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	f := newFixture(t, e, nil, []string{fList})
	var err error
	var i int
	for i = 0; i < 10*model.MaxListSegments; i++ {
		if err = f.m.Insert(ctx, &Employee{Dept: "Sales", ID: fmt.Sprintf("m%03d", i), LastName: "Many"}); err != nil {
			break
		}
	}
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), fmt.Sprintf("in %d segments: the limit is %d segments", model.MaxListSegments+1, model.MaxListSegments)) ||
		!strings.Contains(err.Error(), `value "Many"`) {
		t.Fatalf("after %d ids: %v", i, err)
	}
	// Ids in increasing order fill each segment (two of them to a
	// segment of listSegmentUnits) rather than leaving it half empty.
	if i != 2*model.MaxListSegments {
		t.Fatalf("refused after %d ids, want %d", i, 2*model.MaxListSegments)
	}
	if _, err := f.m.Get(ctx, "Sales", fmt.Sprintf("m%03d", i)); !store.EntityNotFound(err) {
		t.Fatalf("the refused entity was written: %v", err)
	}
	if segs := f.segmentRows(t, "Sales", "Many"); len(segs) != model.MaxListSegments {
		t.Fatalf("%d segments, want %d", len(segs), model.MaxListSegments)
	}
	if got, err := f.m.ListIDs(ctx, "family", "Sales", "Many"); err != nil || len(got) != i {
		t.Fatalf("the full list: %d ids, %v; want %d", len(got), err, i)
	}
	// Leaving the value still works at the limit.
	if err := f.m.Delete(ctx, "Sales", "m000", ""); err != nil {
		t.Fatal(err)
	}
	for _, units := range []int{-1, model.MaxListUnits + 1} {
		o := f.mo
		o.Engine = f.eng
		o.ListSegmentUnits = units
		if _, err := model.Define(e.B.Store, f.table, &o, features(f.names)...); !errors.Is(err, store.ErrInvalidInput) ||
			!strings.Contains(err.Error(), fmt.Sprintf("Options.ListSegmentUnits %d", units)) {
			t.Errorf("ListSegmentUnits %d: %v", units, err)
		}
	}
}

// TestListOldFormat: a list row of the format before segments,
// Join("n", list, value), is read as the value's first segment, written
// in place by the next write, and judged clean by Check.
func TestListOldFormat(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fList})
		f.mo.ListSegmentUnits = 0
		f.restart(t)
		for _, id := range []string{"b", "d"} {
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id, LastName: "Jones"}); err != nil {
				t.Fatal(err)
			}
		}
		// The list as the model wrote it before segments.
		tb := f.raw().Table(f.table)
		if err := tb.Delete(ctx, "Sales", mustJoin("n", "family", "Jones", ""), store.ETagAny); err != nil {
			t.Fatal(err)
		}
		old := mustJoin("n", "family", "Jones")
		if _, err := tb.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: old, Properties: map[string]any{model.ListProperty: "b\nd"}}); err != nil {
			t.Fatal(err)
		}
		if got, err := f.m.ListIDs(ctx, "family", "Sales", "Jones"); err != nil || !slices.Equal(got, []string{"b", "d"}) {
			t.Fatalf("ListIDs of the old row: %q, %v", got, err)
		}
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check of the old row: %v, %v", rep, err)
		}
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "c", LastName: "Jones"}); err != nil {
			t.Fatal(err)
		}
		if err := f.m.Delete(ctx, "Sales", "b", ""); err != nil {
			t.Fatal(err)
		}
		if got := f.segmentRows(t, "Sales", "Jones"); len(got) != 1 || !slices.Equal(got[old], []string{"c", "d"}) {
			t.Fatalf("segments: %q", got)
		}
		if r := f.verify(t); r.bad() {
			t.Fatal(r)
		}
	})
}

// TestListSegmentsCheckRepair seeds each drift a segmented list can have
// by writing its rows directly (an id missing, an id no entity holds, an
// id in two segments and outside its segment's range, an empty segment): Check reports each on its
// segment, Repair mends them all, and a second Check is clean.
func TestListSegmentsCheckRepair(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fList})
		for i := range 8 {
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: fmt.Sprintf("%03d", i), LastName: "Jones"}); err != nil {
				t.Fatal(err)
			}
		}
		segs := f.segmentRows(t, "Sales", "Jones")
		if len(segs) < 3 {
			t.Fatalf("segments: %q", segs)
		}
		rks := slices.Sorted(func(yield func(string) bool) {
			for k := range segs {
				if !yield(k) {
					return
				}
			}
		})
		tb := f.raw().Table(f.table)
		put := func(rk string, ids []string) {
			t.Helper()
			if _, err := tb.Upsert(ctx, store.Entity{PartitionKey: "Sales", RowKey: rk, Properties: map[string]any{model.ListProperty: strings.Join(ids, "\n")}}, store.Replace); err != nil {
				t.Fatal(err)
			}
		}
		type key struct {
			d  model.Drift
			rk string
		}
		var want []key
		// The first segment loses its first id and names one nobody holds.
		first := segs[rks[0]]
		put(rks[0], append(slices.Clone(first[1:]), "zzz"))
		want = append(want, key{model.DriftMissing, rks[0]}, key{model.DriftDangling, rks[0]})
		// The second segment also names an id of the third: outside its
		// range there, in two segments in the third.
		put(rks[1], append(slices.Clone(segs[rks[1]]), segs[rks[2]][0]))
		want = append(want, key{model.DriftDangling, rks[1]}, key{model.DriftDangling, rks[2]})
		// An empty segment.
		empty := mustJoin("n", "family", "Jones", "zzzz")
		put(empty, nil)
		want = append(want, key{model.DriftDangling, empty})

		rep, err := f.m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []key
		for _, fd := range rep.Findings {
			if fd.Feature != "family" {
				t.Fatalf("finding of another feature: %+v", fd)
			}
			got = append(got, key{fd.Drift, fd.Row.RowKey})
		}
		sortKeys := func(ks []key) {
			slices.SortFunc(ks, func(a, b key) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		}
		sortKeys(got)
		sortKeys(want)
		if !slices.Equal(got, want) {
			t.Fatalf("findings:\n%v\nwant:\n%v\n%s", got, want, rep)
		}
		if rep, err := f.m.Repair(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Repair: %v, %v", rep, err)
		}
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check after Repair: %v, %v", rep, err)
		}
		if r := f.verify(t); r.bad() {
			t.Fatal(r)
		}
		ids, err := f.m.ListIDs(ctx, "family", "Sales", "Jones")
		if err != nil || len(ids) != 8 {
			t.Fatalf("after Repair: %q, %v", ids, err)
		}
	})
}

// TestListFirstSegmentMoves: once the segment of bound "" is emptied and
// deleted, an id below every bound moves the first segment to bound "",
// so that every segment keeps to its range of ids (Check judges the
// ranges), through a split too.
func TestListFirstSegmentMoves(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fList})
		ins := func(ids ...string) {
			t.Helper()
			for _, id := range ids {
				if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id, LastName: "Jones"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		del := func(ids ...string) {
			t.Helper()
			for _, id := range ids {
				if err := f.m.Delete(ctx, "Sales", id, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		expect := func(want map[string][]string) {
			t.Helper()
			got := f.segmentRows(t, "Sales", "Jones")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("segments %q, want %q", got, want)
			}
			if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
				t.Fatalf("Check: %v, %v", rep, err)
			}
		}
		first := mustJoin("n", "family", "Jones", "")
		seg := func(b string) string { return mustJoin("n", "family", "Jones", b) }
		ins("m00", "m01", "m02", "m03") // three ids fill a segment of 12 units
		expect(map[string][]string{first: {"m00", "m01", "m02"}, seg("m03"): {"m03"}})
		del("m00", "m01", "m02")
		expect(map[string][]string{seg("m03"): {"m03"}})
		ins("a00") // below every bound: the segment moves to ""
		expect(map[string][]string{first: {"a00", "m03"}})
		ins("b00", "c00") // a split below the old bound
		expect(map[string][]string{first: {"a00", "b00"}, seg("c"): {"c00", "m03"}})
		if r := f.verify(t); r.bad() {
			t.Fatal(r)
		}
	})
}
