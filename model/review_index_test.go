package model_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestCopiesBoundsAtTheEdges: the range and prefix lookups of a global
// index at the edges of the service's UTF-16 order: a prefix ending in
// U+FFFF (no character follows it: the bound carries into the character
// before, the parts' separator for U+FFFF alone), ending in U+10FFFF
// (U+E000 follows it), in U+D7FF (U+10000 follows it), in U+FFFE, '\',
// '?', U+007F and '~' (escaped, the bound inside the escape), and ranges
// across the surrogates and U+E000-U+FFFF, each against a brute force
// over keys.Compare.
func TestCopiesBoundsAtTheEdges(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGUnique, fGIndex})
		vals := []string{"a", "a\uFFFF", "a\uFFFFb", "b", "\uFFFF", "\uFFFF\uFFFF", "\U0010FFFF", "\U0010FFFFz", "\uE000",
			"\uD7FF", "\uD7FFq", "\U00010000", "\uFFFE", "a\\b", "a?", "a\x7f", "a\u009f", "a\u00a0", "~", "~a"}
		for i, v := range vals {
			if err := f.m.Insert(ctx, &Employee{Dept: "S", ID: string(rune('A' + i)), LastName: v, Email: v}); err != nil {
				t.Fatal(err)
			}
		}
		f.drain(t)
		sorted := slices.Clone(vals)
		slices.SortFunc(sorted, keys.Compare)
		for _, idx := range []string{"lastname", "email"} {
			for _, p := range []string{"", "a", "a\uFFFF", "\uFFFF", "\U0010FFFF", "\uD7FF", "\uE000", "a\\", "a?", "a\x7f", "~", "\uFFFE"} {
				var want []string
				for _, v := range sorted {
					if strings.HasPrefix(v, p) {
						want = append(want, v)
					}
				}
				if got := hitNames(t, f.m.CopiesPrefix(ctx, idx, p)); !slices.Equal(got, want) {
					t.Errorf("%s prefix %q: %q, want %q", idx, p, got, want)
				}
			}
			for _, r := range [][2]string{{"\uD7FF", "\uE000"}, {"\U00010000", "\uFFFF"}, {"\uFFFF", ""}, {"a", "a\uFFFF"}, {"\U0010FFFF", "\uE000"}} {
				var want []string
				for _, v := range sorted {
					if keys.Compare(v, r[0]) >= 0 && (r[1] == "" || keys.Compare(v, r[1]) < 0) {
						want = append(want, v)
					}
				}
				if got := hitNames(t, f.m.CopiesRange(ctx, idx, r[0], r[1])); !slices.Equal(got, want) {
					t.Errorf("%s range [%q, %q): %q, want %q", idx, r[0], r[1], got, want)
				}
			}
		}
	})
}

// TestMoveBetweenModelsInTables: a Move between two models that keep
// their global indexes in different tables (the source's each In a table
// of its own, the destination's unique one in its Options.IndexTable and
// its non-unique one In its entity table): the source's lookups find the
// entity while it is in flight and not after; the destination's find it
// after; the source's index tables are left empty, Check is clean on
// both, and a write at the destination moves its rows there.
func TestMoveBetweenModelsInTables(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		o := e.Opts("mvin")
		eng := eventualtest.NewEngine(t, e.B.Store, o)
		ta, tb := e.B.NewTable(t, "MvA"), e.B.NewTable(t, "MvB")
		ea, eb, na := e.B.NewTable(t, "MvAE"), e.B.NewTable(t, "MvBE"), e.B.NewTable(t, "MvAN")
		email := func(x *Employee) string { return x.Email }
		last := func(x *Employee) string { return x.LastName }
		a, err := model.Define(e.B.Store, ta, &model.Options{Engine: eng, Now: e.Now},
			model.GlobalUnique("email", email).In(ea), model.GlobalIndex("lastname", last).In(na).Project("N"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := model.Define(e.B.Store, tb, &model.Options{Engine: eng, Now: e.Now, IndexTable: eb},
			model.GlobalUnique("email", email), model.GlobalIndex("lastname", last).In(tb))
		if err != nil {
			t.Fatal(err)
		}
		drain := func() { t.Helper(); eventualtest.Drain(t, e, &eng, o, e.B.Store, ta, tb) }
		clean := func(m *model.Model[Employee]) {
			t.Helper()
			rep, err := m.Check(ctx, nil)
			if err != nil || len(rep.Findings)+len(rep.Pending) != 0 {
				t.Fatalf("Check of %s: %v, %v", m.Table(), rep, err)
			}
		}
		if err := a.Insert(ctx, &Employee{Dept: "S", ID: "ann", Email: "ann@x", LastName: "Jones", N: 1}); err != nil {
			t.Fatal(err)
		}
		drain()
		if err := a.Move(ctx, "S", "ann", b, "O", ""); err != nil {
			t.Fatal(err)
		}
		if g, err := a.Find(ctx, "email", "ann@x"); err != nil || g.Dept != "S" {
			t.Fatalf("in flight, Find at the source: %+v, %v", g, err)
		}
		drain()
		if g, err := b.Find(ctx, "email", "ann@x"); err != nil || g.Dept != "O" {
			t.Fatalf("Find at the destination: %+v, %v", g, err)
		}
		if all, err := b.FindAll(ctx, "lastname", "Jones"); err != nil || len(all) != 1 || all[0].Dept != "O" {
			t.Fatalf("FindAll at the destination: %+v, %v", all, err)
		}
		if g, err := a.Find(ctx, "email", "ann@x"); !store.EntityNotFound(err) {
			t.Fatalf("Find at the source after the move: %+v, %v", g, err)
		}
		if all, err := a.FindAll(ctx, "lastname", "Jones"); err != nil || len(all) != 0 {
			t.Fatalf("FindAll at the source after the move: %+v, %v", all, err)
		}
		for _, tbl := range []string{ea, na} {
			for row, err := range store.All(ctx, e.B.Store.Table(tbl), store.Query{}) {
				t.Errorf("left in %s: %+v, %v", tbl, row, err)
			}
		}
		clean(a)
		clean(b)
		if err := b.Update(ctx, &Employee{Dept: "O", ID: "ann", Email: "ann2@x", LastName: "Lee", N: 2}, store.Replace); err != nil {
			t.Fatal(err)
		}
		drain()
		if g, err := b.Find(ctx, "email", "ann2@x"); err != nil || g.N != 2 {
			t.Fatalf("Find of the new value: %+v, %v", g, err)
		}
		if g, err := b.Find(ctx, "email", "ann@x"); !store.EntityNotFound(err) {
			t.Fatalf("Find of the old value: %+v, %v", g, err)
		}
		clean(b)
		if n, err := b.ReapClaims(ctx); err != nil || n != 0 {
			t.Fatalf("ReapClaims: %d, %v", n, err)
		}
	})
}
