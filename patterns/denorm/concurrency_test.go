package denorm_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestConcurrentSourcesTargetsAndWorkers: goroutines change managers
// (names, phones, the departments and teams they run) while other
// goroutines update the targets' own budgets and workers carry the
// copies out, all at once; once drained, a full scan finds every target
// holding exactly its source's values at its version, no copy where no
// source maps, and every budget increment kept.
func TestConcurrentSourcesTargetsAndWorkers(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		f := newFixture(t, e, "dnconc", nil)
		d := f.d
		const sources = 4
		var targets [][3]string
		for k := range sources {
			for j := range 2 {
				rk := fmt.Sprintf("dept_%d%d", k, j)
				f.addTarget(t, f.depts, "dept", rk)
				targets = append(targets, [3]string{f.depts, "dept", rk})
				rk = fmt.Sprintf("team_%d%d", k, j)
				f.addTarget(t, f.staff, "Sales", rk)
				targets = append(targets, [3]string{f.staff, "Sales", rk})
			}
		}
		writers, rounds := 6, 30
		if !e.Fake() {
			rounds = 10
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		budgets := map[string]int64{}
		for _, tg := range targets {
			budgets[tg[0]+"|"+tg[1]+"|"+tg[2]] = budgetOf(tg[2])
		}
		var wg, bg sync.WaitGroup
		var done atomic.Bool
		for range 2 {
			bg.Go(func() {
				for !done.Load() {
					if _, err := f.eng.ProcessOnce(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		// The targets' own writers: a budget increment, conditional on
		// the ETag read, merging only the budget.
		for w := range 2 {
			bg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 99))
				for !done.Load() {
					tg := targets[r.IntN(len(targets))]
					tbl := e.B.Store.Table(tg[0])
					cur, err := tbl.Get(ctx, tg[1], tg[2], nil)
					if err != nil {
						t.Error(err)
						return
					}
					b, _ := cur.Properties["Budget"].(int64)
					_, err = tbl.Update(ctx, store.Entity{PartitionKey: tg[1], RowKey: tg[2], Properties: map[string]any{"Budget": b + 1}}, store.Merge, cur.ETag)
					switch {
					case err == nil:
						mu.Lock()
						budgets[tg[0]+"|"+tg[1]+"|"+tg[2]]++
						outcomes["budget"]++
						mu.Unlock()
					case errors.Is(err, store.ErrPreconditionFailed):
					default:
						t.Error(err)
						return
					}
				}
			})
		}
		for w := range writers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 5))
				for i := range rounds {
					k := r.IntN(sources)
					v := &Employee{Unit: "Sales", ID: fmt.Sprintf("emp_%06d", k), Name: fmt.Sprintf("W%d-%d", w, i), Phone: fmt.Sprintf("555-%02d%02d", w, i)}
					if j := r.IntN(3); j < 2 {
						v.Manages = fmt.Sprintf("dept_%d%d", k, j)
					}
					if j := r.IntN(3); j < 2 {
						v.Leads = fmt.Sprintf("team_%d%d", k, j)
					}
					var err error
					switch r.IntN(5) {
					case 0:
						err = d.DeleteKey(ctx, "Sales", v.ID)
					case 1:
						cur, gerr := d.Get(ctx, "Sales", v.ID)
						if gerr != nil {
							err = gerr
							break
						}
						cur.Phone, cur.Manages = v.Phone, v.Manages
						err = d.Update(ctx, &cur)
					default:
						err = d.Upsert(ctx, v)
					}
					kind := "ok"
					switch {
					case err == nil:
					case errors.Is(err, store.ErrPreconditionFailed):
						kind = "changed"
					case errors.Is(err, store.ErrNotFound):
						kind = "missing"
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
		bg.Wait()
		f.drain(t)
		c := f.scan(t, "Sales", budgets)
		t.Logf("writes %v; at the end %d targets, %d holding a copy: lost %d, duplicated %d, stale %d, clobbered %d",
			outcomes, c.targets, c.filled, c.lost, c.duplicated, c.stale, c.clobbered)
		if p, err := f.eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
			t.Fatalf("poison queue: %+v, %v", p, err)
		}
	})
}
