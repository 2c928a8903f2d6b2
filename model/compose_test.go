package model_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// featureSets is every pair of features, and all of them together.
func featureSets() [][]string {
	var out [][]string
	for i := range allFeatures {
		for j := i + 1; j < len(allFeatures); j++ {
			out = append(out, []string{allFeatures[i], allFeatures[j]})
		}
	}
	return append(out, allFeatures)
}

// counts of one run.
type counts struct {
	operations, refused, rywChecks int
}

// writer owns some entities: it alone writes them, so it knows what each
// must hold (nil for absent).
type writer struct {
	id   int
	r    *rand.Rand
	want map[string]*Employee // Dept/ID -> state
}

func (w *writer) key(e *Employee) string { return e.Dept + "/" + e.ID }

// next draws one write of one of the writer's entities.
func (w *writer) next(i int) (kind string, e Employee) {
	dept := []string{"Sales", "Ops"}[w.r.IntN(2)]
	id := fmt.Sprintf("w%d-%d", w.id, w.r.IntN(3))
	e = Employee{Dept: dept, ID: id, N: i,
		Email:    fmt.Sprintf("e%d@x.com", w.r.IntN(8)),
		Badge:    fmt.Sprintf("b%d", w.r.IntN(6)),
		LastName: []string{"Jones", "Smith", "Lee", ""}[w.r.IntN(4)],
		Team:     []string{"red", "blue", ""}[w.r.IntN(3)]}
	if w.r.IntN(3) > 0 {
		e.Photo = photo(w.r, i) // else nil: a Merge keeps the photo, a Replace removes it
	}
	cur := w.want[w.key(&e)]
	switch n := w.r.IntN(10); {
	case cur == nil && n < 5:
		return "insert", e
	case cur == nil:
		return "upsert-replace", e
	case n < 2:
		return "delete", e
	case n < 4:
		return "update-merge", e
	case n < 6:
		return "update-replace", e
	case n < 8:
		return "upsert-merge", e
	}
	return "upsert-replace", e
}

// do runs one write through the model and checks, at once, that a lookup
// through every index finds what it wrote (read-your-writes) and nothing
// stale.
func (f *fixture) do(t *testing.T, w *writer, kind string, e Employee, c *counts, mu *sync.Mutex) error {
	ctx := context.Background()
	var err error
	switch kind {
	case "insert":
		err = f.m.Insert(ctx, &e)
	case "update-merge":
		err = f.m.Update(ctx, &e, store.Merge)
	case "update-replace":
		err = f.m.Update(ctx, &e, store.Replace)
	case "upsert-merge":
		err = f.m.Upsert(ctx, &e, store.Merge)
	case "upsert-replace":
		err = f.m.Upsert(ctx, &e, store.Replace)
	case "delete":
		err = f.m.Delete(ctx, e.Dept, e.ID, "")
	}
	mu.Lock()
	c.operations++
	mu.Unlock()
	if errors.Is(err, partition.ErrDuplicate) {
		mu.Lock()
		c.refused++
		mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", kind, e.Dept, e.ID, err)
	}
	prev := w.want[w.key(&e)]
	if kind == "delete" {
		w.want[w.key(&e)] = nil
	} else {
		s := e
		s.ETag = ""
		if s.Photo == nil && strings.HasSuffix(kind, "-merge") && prev != nil {
			s.Photo = prev.Photo // not given in a Merge: kept
		}
		w.want[w.key(&e)] = &s
	}
	// Read-your-writes through every index, before any worker ran.
	n := 0
	if f.has(fGUnique) {
		if kind != "delete" {
			got, err := f.m.Find(ctx, "email", e.Email)
			if err != nil || got.ID != e.ID || got.Dept != e.Dept || got.N != e.N || got.Photo != nil {
				return fmt.Errorf("after %s of %s/%s: Find email %q = %+v, %v (a lookup never fetches the photo)", kind, e.Dept, e.ID, e.Email, got, err)
			}
			n++
		}
		if prev != nil && (kind == "delete" || prev.Email != e.Email) {
			got, err := f.m.Find(ctx, "email", prev.Email)
			if err == nil && got.ID == e.ID && got.Dept == e.Dept {
				return fmt.Errorf("after %s of %s/%s: Find of its old email %q still returns it", kind, e.Dept, e.ID, prev.Email)
			}
			if err != nil && !store.EntityNotFound(err) {
				return err
			}
			n++
		}
	}
	if f.has(fGIndex) && kind != "delete" && e.LastName != "" {
		all, err := f.m.FindAll(ctx, "lastname", e.LastName)
		if err != nil {
			return err
		}
		hit := false
		for _, g := range all {
			if g.LastName != e.LastName {
				return fmt.Errorf("FindAll lastname %q returned %+v", e.LastName, g)
			}
			if g.ID == e.ID && g.Dept == e.Dept {
				hit = g.N == e.N
			}
		}
		if !hit {
			return fmt.Errorf("after %s of %s/%s: FindAll lastname %q misses it: %d hits", kind, e.Dept, e.ID, e.LastName, len(all))
		}
		n++
	}
	if f.has(fUnique) && kind != "delete" {
		got, err := f.m.FindIn(ctx, e.Dept, "badge", e.Badge)
		if err != nil || got.ID != e.ID || got.N != e.N {
			return fmt.Errorf("FindIn badge %q = %+v, %v", e.Badge, got, err)
		}
		n++
	}
	if f.has(fIndex) && kind != "delete" && e.Team != "" {
		// Through the projected copies: each entity read from its row.
		hit := false
		for g, err := range f.m.EachIn(ctx, e.Dept, "team", e.Team) {
			if err != nil {
				return fmt.Errorf("EachIn team %q: %w", e.Team, err)
			}
			if g.Team != e.Team || g.ETag == "" {
				return fmt.Errorf("EachIn team %q returned %+v", e.Team, g)
			}
			if g.ID == e.ID {
				hit = g.N == e.N
			}
		}
		if !hit {
			return fmt.Errorf("after %s of %s/%s: EachIn team %q misses it", kind, e.Dept, e.ID, e.Team)
		}
		n++
	}
	mu.Lock()
	c.rywChecks += n
	mu.Unlock()
	return nil
}

// runComposition runs writers concurrently (with a worker running
// alongside), drains, and checks the table.
func runComposition(t *testing.T, f *fixture, writers, writes int, seed uint64) counts {
	t.Helper()
	ctx := context.Background()
	var c counts
	var mu sync.Mutex
	ws := make([]*writer, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	stop := make(chan struct{})
	var workerDone sync.WaitGroup
	workerDone.Add(1)
	go func() {
		defer workerDone.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n, _ := f.eng.ProcessOnce(ctx); n == 0 {
				f.e.Pass(0)
			}
		}
	}()
	for i := range ws {
		ws[i] = &writer{id: i, r: rand.New(rand.NewPCG(seed, uint64(i))), want: map[string]*Employee{}}
		wg.Add(1)
		go func(w *writer) {
			defer wg.Done()
			for j := 0; j < writes; j++ {
				kind, e := w.next(j)
				if err := f.do(t, w, kind, e, &c, &mu); err != nil {
					errs <- err
					return
				}
			}
		}(ws[i])
	}
	wg.Wait()
	close(stop)
	workerDone.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.drain(t)
	rep := f.verify(t)
	if rep.bad() || len(rep.orphans) > 0 {
		t.Fatalf("after drain: %s", rep)
	}
	// Every entity holds what its writer last wrote.
	for _, w := range ws {
		for k, want := range w.want {
			dept, id, _ := strings.Cut(k, "/")
			got, err := f.m.Get(ctx, dept, id)
			switch {
			case want == nil && !store.EntityNotFound(err):
				t.Fatalf("%s: deleted, Get = %+v, %v", k, got, err)
			case want == nil:
			case err != nil:
				t.Fatalf("%s: %v", k, err)
			default:
				if !f.holds(t, got, want) {
					t.Fatalf("%s: got %+v, want %+v", k, *got, *want)
				}
			}
		}
	}
	return c
}

// TestComposition runs every pair of features, and all of them, on one
// entity type: concurrent writers insert, update (merge and replace),
// upsert and delete, reading their writes back through every index at
// once; after the engine drains, every entity, index row, copy and log
// entry agree (an independent scan of the table).
func TestComposition(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		writes := 12
		if !e.Fake() {
			writes = 5
		}
		for _, names := range featureSets() {
			t.Run(strings.Join(names, "+"), func(t *testing.T) {
				f := newFixture(t, e, nil, names)
				c := runComposition(t, f, 3, writes, 7)
				rep := f.verify(t)
				t.Logf("%s: operations %d, refused as duplicates %d, read-your-writes checks %d; %s", e.B.Name, c.operations, c.refused, c.rywChecks, rep)
			})
		}
	})
}
