package xindex_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// hookStore runs hook once, before the first insert or update of a row
// that when accepts: a moment chosen inside a worker's step.
type hookStore struct {
	store.Store
	mu   sync.Mutex
	when func(e store.Entity) bool
	hook func()
}

func (s *hookStore) Table(name string) store.Table {
	return &hookTable{Table: s.Store.Table(name), s: s}
}

type hookTable struct {
	store.Table
	s *hookStore
}

func (t *hookTable) fire(e store.Entity) {
	t.s.mu.Lock()
	h := t.s.hook
	if h != nil && t.s.when(e) {
		t.s.hook = nil
	} else {
		h = nil
	}
	t.s.mu.Unlock()
	if h != nil {
		h()
	}
}

func (t *hookTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	t.fire(e)
	return t.Table.Insert(ctx, e)
}

func (t *hookTable) Update(ctx context.Context, e store.Entity, m store.UpdateMode, im store.ETag) (store.ETag, error) {
	t.fire(e)
	return t.Table.Update(ctx, e, m, im)
}

// TestCopyWriteRacingTheEntitysMove: a worker is about to write an
// employee's copies (last name Jones, email a@x) when the employee changes
// both and the operation that removes the old copies runs first, finding
// nothing to remove. The worker's check after its write sees the entity
// moved on and removes what it wrote: no copy outlives its value.
func TestCopyWriteRacingTheEntitysMove(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		for _, target := range []string{"lastname !Jones", "email !a@x"} {
			t.Run(strings.Fields(target)[0], func(t *testing.T) {
				ctx := t.Context()
				hs := &hookStore{Store: e.B.Store}
				f := newFixture(t, e, "xrace", hs, xindex.Options{})
				x := f.x
				v := emp("Sales", 1, "Ann", "Jones", "a@x")
				if err := x.Insert(ctx, v); err != nil {
					t.Fatal(err)
				}
				ran := false
				hs.when = func(en store.Entity) bool {
					return strings.HasPrefix(en.RowKey, target) && en.Properties["FirstName"] == "Ann"
				}
				hs.hook = func() {
					ran = true
					v.LastName, v.Email = "Smith", "b@x"
					if err := x.Update(ctx, v); err != nil {
						t.Error(err)
						return
					}
					if n, err := f.eng.ProcessOnce(ctx); n != 1 || err != nil {
						t.Errorf("the move: %d, %v", n, err)
					}
				}
				f.drain(t)
				if !ran {
					t.Fatal("the copy was never written")
				}
				if c := f.scan(t); c.duplicated+c.stale+c.lost != 0 || c.copies != 2 || t.Failed() {
					t.Fatalf("scan: %+v", c)
				}
			})
		}
	})
}
