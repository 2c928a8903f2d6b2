package xindex_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// TestConcurrentWritersAndWorkers: goroutines insert, update (moving
// emails among a small shared set, so that they collide, and last names),
// upsert and delete employees while workers carry out the copies at the
// same time; once drained, a full scan finds every index exactly
// consistent with its entities, no email held by two entities, and an
// empty poison queue.
func TestConcurrentWritersAndWorkers(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		lease := time.Minute
		if !e.Fake() {
			lease = time.Second
		}
		f := newFixture(t, e, "conc", nil, xindex.Options{ClaimLease: lease})
		x := f.x
		writers, rounds := 6, 30
		if !e.Fake() {
			rounds = 10
		}
		lastNames := []string{"Jones", "Smith", "Lee"}
		var mu sync.Mutex
		outcomes := map[string]int{}
		var wg, workers sync.WaitGroup
		var done atomic.Bool
		for range 2 {
			workers.Go(func() {
				for !done.Load() {
					if _, err := f.eng.ProcessOnce(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for w := range writers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 7))
				for range rounds {
					id := r.IntN(8)
					v := emp("Sales", id, "F", lastNames[r.IntN(3)], fmt.Sprintf("e%d@x.com", r.IntN(10)))
					var err error
					switch r.IntN(4) {
					case 0:
						err = x.Insert(ctx, v)
					case 1:
						cur, gerr := x.Get(ctx, "Sales", v.ID)
						if gerr != nil {
							err = gerr
							break
						}
						cur.Email, cur.LastName = v.Email, v.LastName
						err = x.Update(ctx, &cur)
					case 2:
						err = x.Upsert(ctx, v)
					default:
						err = x.DeleteKey(ctx, "Sales", v.ID)
					}
					kind := "ok"
					switch {
					case err == nil:
					case errors.Is(err, partition.ErrDuplicate):
						kind = "duplicate"
					case errors.Is(err, store.ErrPreconditionFailed):
						kind = "changed"
					case errors.Is(err, store.ErrAlreadyExists), errors.Is(err, store.ErrNotFound):
						kind = "exists/missing"
					default:
						t.Errorf("unexpected error: %v", err)
					}
					mu.Lock()
					outcomes[kind]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		done.Store(true)
		workers.Wait()
		f.drain(t)
		if f.bareClaims(t, "Sales") > 0 {
			e.Pass(lease + 100*time.Millisecond)
			if _, err := x.Reap(ctx, "Sales", "email"); err != nil {
				t.Fatal(err)
			}
		}
		c := f.scan(t)
		t.Logf("writes %v; at the end %d entities, %d copies: lost %d, duplicated %d, stale %d, claims left %d",
			outcomes, c.entities, c.copies, c.lost, c.duplicated, c.stale, c.claims)
		if c.claims != 0 {
			t.Fatalf("after the drain: %+v", c)
		}
		if p, err := f.eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
			t.Fatalf("poison queue: %+v, %v", p, err)
		}
	})
}
