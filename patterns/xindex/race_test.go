package xindex_test

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

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
				hs := &eventualtest.HookStore{Store: e.B.Store}
				f := newFixture(t, e, "xrace", hs, xindex.Options{})
				x := f.x
				v := emp("Sales", 1, "Ann", "Jones", "a@x")
				if err := x.Insert(ctx, v); err != nil {
					t.Fatal(err)
				}
				ran := false
				hs.Arm(func(en store.Entity) bool {
					return strings.HasPrefix(en.RowKey, target) && en.Properties["FirstName"] == "Ann"
				}, func() {
					ran = true
					v.LastName, v.Email = "Smith", "b@x"
					if err := x.Update(ctx, v); err != nil {
						t.Error(err)
						return
					}
					if n, err := f.eng.ProcessOnce(ctx); n != 1 || err != nil {
						t.Errorf("the move: %d, %v", n, err)
					}
				})
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
