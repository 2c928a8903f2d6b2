package model_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestReviewListsOddIDs: random writes of ids made of characters that
// sort differently in UTF-8 and UTF-16 (non-BMP, U+E000-U+FFFF), the
// escape leads and prefixes of one another, some values made of such
// characters too, with small segments: after
// every write the list names exactly the holders and Check is clean.
func TestReviewListsOddIDs(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) { reviewListsOddIDs(t, e) })
}

func reviewListsOddIDs(t *testing.T, e eventualtest.Env) {
	ctx := context.Background()
	f := newFixture(t, e, nil, []string{fList})
	alphabet := []string{"a", "b", "\U00010000", "\uE000", "\uFFFD", "~", ".", " ", "!", "\u00e9"}
	rnd := rand.New(rand.NewPCG(8, 5))
	holds := map[string]string{}
	values := []string{"J", "S", "\U00010000T", "\uE000U", "V", "W"}
	n := 600
	if !e.Fake() {
		n = 80
	}
	for i := range n {
		n := 1 + rnd.IntN(4)
		id := ""
		for range n {
			id += alphabet[rnd.IntN(len(alphabet))]
		}
		v := values[rnd.IntN(len(values))]
		var err error
		if _, ok := holds[id]; !ok && len(holds) >= 60 {
			for k := range holds {
				id = k
				break
			}
		}
		switch _, ok := holds[id]; {
		case !ok:
			err = f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id, LastName: v})
			holds[id] = v
		case i%3 == 0:
			err = f.m.Delete(ctx, "Sales", id, "")
			delete(holds, id)
		default:
			err = f.m.Update(ctx, &Employee{Dept: "Sales", ID: id, LastName: v, N: i}, store.Replace)
			holds[id] = v
		}
		if err != nil {
			t.Fatalf("write %d (%q): %v", i, id, err)
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
		}
		if i%20 == 0 {
			if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
				t.Fatalf("after write %d: Check: %v, %v\n%v", i, rep, err, f.segmentRows(t, "Sales", "J"))
			}
		}
	}
}

// TestListMoveIntoFullList: a move whose arrival would pass the
// destination list's MaxListSegments is refused before anything is
// written, as a write is, rather than leaving the entity in flight with
// its arrival refused in the engine.
func TestListMoveIntoFullList(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	f := newFixture(t, e, nil, []string{fList})
	var err error
	var i int
	for i = 0; i < 10*model.MaxListSegments; i++ {
		if err = f.m.Insert(ctx, &Employee{Dept: "Ops", ID: fmt.Sprintf("m%03d", i), LastName: "Many"}); err != nil {
			break
		}
	}
	if !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("the list never filled: %v", err)
	}
	if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "z999", LastName: "Many"}); err != nil {
		t.Fatal(err)
	}
	err = f.m.Move(ctx, "Sales", "z999", f.m, "Ops", "")
	f.drain(t)
	if p, perr := f.eng.Poisoned(ctx, 8); perr != nil || len(p) != 0 {
		t.Errorf("poisoned: %d, %v", len(p), perr)
	}
	if _, gerr := f.m.Get(ctx, "Sales", "z999"); !errors.Is(err, store.ErrInvalidInput) || gerr != nil {
		t.Errorf("Move into a full list: %v; the entity at the source: %v", err, gerr)
	}
	if _, gerr := f.m.Get(ctx, "Ops", "z999"); !store.EntityNotFound(gerr) {
		t.Errorf("the refused move left a row at the destination: %v", gerr)
	}
}
