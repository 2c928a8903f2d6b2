package model_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// rangeValues are last names whose escaped keys test the order and the
// prefix bounds: the key separator, the escaped '/', '#', a control
// character, '~', non-ASCII, a supplementary character and U+E000 (after
// the supplementary ones in the service's UTF-16 order, before them in
// UTF-8's).
var rangeValues = []string{"a", "a b", "a !b", "a !", "a/b", "a.b", "a#b", "a\x01b", "a~", "ab", "b", "é", "éa",
	"\U0001F600", "\uE000", "x"}

// hitNames lists the values of hits, failing on an error.
func hitNames(t *testing.T, seq func(func(model.Hit[Employee], error) bool)) []string {
	t.Helper()
	var out []string
	for h, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		if h.Entity == nil || h.Entity.LastName != h.Value && h.Entity.Email != h.Value {
			t.Fatalf("hit %+v does not hold its value", h)
		}
		out = append(out, h.Value)
	}
	return out
}

// TestCopiesRangeAndPrefix: the range and prefix lookups of a global
// index return exactly the values in the range, in the service's order,
// for values whose escaped keys hold separators, escapes, control and
// non-ASCII characters.
func TestCopiesRangeAndPrefix(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGUnique, fGIndex})
		for i, v := range rangeValues {
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: fmt.Sprint("r", i), LastName: v, Email: v + "@x"}); err != nil {
				t.Fatal(err)
			}
		}
		f.drain(t)
		sorted := slices.Clone(rangeValues)
		slices.SortFunc(sorted, keys.Compare)
		var emails []string
		for _, v := range rangeValues {
			emails = append(emails, v+"@x")
		}
		slices.SortFunc(emails, keys.Compare)
		between := func(from, to string) []string {
			var out []string
			for _, v := range sorted {
				if keys.Compare(v, from) >= 0 && (to == "" || keys.Compare(v, to) < 0) {
					out = append(out, v)
				}
			}
			return out
		}
		for _, r := range [][2]string{{"", ""}, {"a", "b"}, {"a ", "a!"}, {"a !", "a !c"}, {"a/", "a0"}, {"a\x00", "a\x02"},
			{"é", ""}, {"\U0001F600", "\uE001"}, {"b", "a"}, {"a#b", "a#b"}, {"a#b", "a#c"}} {
			for _, index := range []string{"lastname", "email"} {
				got := hitNames(t, f.m.CopiesRange(ctx, index, r[0], r[1]))
				want := between(r[0], r[1])
				if index == "email" {
					for i := range got {
						got[i] = strings.TrimSuffix(got[i], "@x")
					}
					want = nil
					for _, w := range emails {
						if keys.Compare(w, r[0]) >= 0 && (r[1] == "" || keys.Compare(w, r[1]) < 0) {
							want = append(want, strings.TrimSuffix(w, "@x"))
						}
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s range [%q, %q): %q, want %q", index, r[0], r[1], got, want)
				}
			}
		}
		for _, p := range []string{"", "a", "a ", "a !", "a/", "a.", "a#", "a\x01", "é", "\U0001F600", "z"} {
			var want []string
			for _, v := range sorted {
				if strings.HasPrefix(v, p) {
					want = append(want, v)
				}
			}
			if got := hitNames(t, f.m.CopiesPrefix(ctx, "lastname", p)); !slices.Equal(got, want) {
				t.Errorf("prefix %q: %q, want %q", p, got, want)
			}
		}
	})
}

// TestCopiesAndFresh: a Hit is what the copy holds and the version it
// was made from; a write is found through its claim before the engine
// copied it; Fresh reads the entity and tells a copy behind it (Stale)
// and one whose entity gave the value up (ErrNotFound).
func TestCopiesAndFresh(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGUnique, fGIndex})
		ann := &Employee{Dept: "Sales", ID: "ann", Email: "ann@x", LastName: "Jones", N: 1}
		bob := &Employee{Dept: "Ops", ID: "bob", Email: "bob@x", LastName: "Jones", N: 1}
		for _, v := range []*Employee{ann, bob} {
			if err := f.m.Insert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		one := func(index, value string) model.Hit[Employee] {
			t.Helper()
			var hs []model.Hit[Employee]
			for h, err := range f.m.Copies(ctx, index, value) {
				if err != nil {
					t.Fatal(err)
				}
				hs = append(hs, h)
			}
			if len(hs) != 1 {
				t.Fatalf("%s %q: %d hits %+v, want 1", index, value, len(hs), hs)
			}
			return hs[0]
		}
		// Before the engine ran: through the claims.
		h := one("email", "ann@x")
		if !h.Claimed || h.Entity.ID != "ann" || h.Version == 0 || h.Entity.ETag == "" {
			t.Fatalf("hit through the claim: %+v", h)
		}
		if got := hitNames(t, f.m.Copies(ctx, "lastname", "Jones")); len(got) != 2 {
			t.Fatalf("Jones before the engine ran: %q", got)
		}
		f.drain(t)
		h = one("email", "ann@x")
		if h.Claimed || h.PK != "Sales" || h.ID != "ann" || h.Entity.N != 1 || h.Entity.ETag != "" {
			t.Fatalf("hit of the copy: %+v", h)
		}
		fr, err := f.m.Fresh(ctx, h)
		if err != nil || fr.Stale || fr.Version != h.Version || fr.Entity.ETag == "" {
			t.Fatalf("Fresh of a current copy: %+v, %v", fr, err)
		}
		// A write that keeps the value: the copy is behind until the
		// engine runs.
		ann.N = 2
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		h = one("email", "ann@x")
		if h.Entity.N != 1 || h.Claimed {
			t.Fatalf("hit before the engine ran: %+v", h)
		}
		fr, err = f.m.Fresh(ctx, h)
		if err != nil || !fr.Stale || fr.Entity.N != 2 || fr.Version <= h.Version {
			t.Fatalf("Fresh of a copy behind: %+v, %v", fr, err)
		}
		// A write that gives the value up: the old copy is still there,
		// Fresh says its entity no longer holds it; the new value is
		// found through its claim.
		bob.LastName = "Lee"
		if err := f.m.Update(ctx, bob, store.Replace); err != nil {
			t.Fatal(err)
		}
		var old model.Hit[Employee]
		for h, err := range f.m.Copies(ctx, "lastname", "Jones") {
			if err != nil {
				t.Fatal(err)
			}
			if h.ID == "bob" {
				old = h
			}
		}
		if old.ID != "bob" {
			t.Fatal("the old copy of Bob under Jones is not there before the engine ran")
		}
		if _, err := f.m.Fresh(ctx, old); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Fresh of a copy whose entity gave the value up: %v", err)
		}
		if h := one("lastname", "Lee"); !h.Claimed || h.Entity.ID != "bob" {
			t.Fatalf("Lee through the claim: %+v", h)
		}
		f.drain(t)
		if got := hitNames(t, f.m.Copies(ctx, "lastname", "Jones")); len(got) != 1 {
			t.Fatalf("Jones after the engine ran: %q", got)
		}
		// A value given up and taken back before the engine ran: the
		// write stamped the old copy, which the lookup reads through.
		ann.LastName = "Hall"
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		ann.LastName, ann.N = "Jones", 9
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		if h := one("lastname", "Jones"); !h.Claimed || h.Entity.N != 9 || h.ID != "ann" {
			t.Fatalf("Jones taken back, through the stamp: %+v", h)
		}
		f.drain(t)
		if h := one("lastname", "Jones"); h.Claimed || h.Entity.N != 9 {
			t.Fatalf("Jones after the engine ran: %+v", h)
		}
		// Bad input.
		for name, seq := range map[string]func(func(model.Hit[Employee], error) bool){
			"no index":        f.m.Copies(ctx, "nope", "x"),
			"invalid UTF-8":   f.m.Copies(ctx, "lastname", "\xff"),
			"range bad bound": f.m.CopiesRange(ctx, "lastname", "a", "\xff"),
			"prefix too long": f.m.CopiesPrefix(ctx, "lastname", strings.Repeat("/", 400)),
		} {
			for _, err := range seq {
				if !errors.Is(err, store.ErrInvalidInput) {
					t.Errorf("%s: %v, want ErrInvalidInput", name, err)
				}
				break
			}
		}
		if _, err := f.m.Fresh(ctx, model.Hit[Employee]{Index: "email"}); !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("Fresh of a hit no lookup made: %v", err)
		}
	})
}
