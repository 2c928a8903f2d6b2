package indexentity

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/eventualtest"
)

// crashCounts add up the schedules of a run.
type crashCounts struct {
	schedules, crashes, operations, lost, duplicated, stale, poisoned int
	detached                                                          map[string]int // crash points on the engine's goroutine
}

// runCrashSchedule is one seeded schedule on an eventual placement: a
// writer inserts, renames and deletes a few employees of two departments
// while the process crashes at one random request (the writer's, or the
// worker's that runs now and then), restarts with a fresh engine and
// Table, and goes on; then the worker and the sweeper run to quiet,
// restarting after any crash still to come. Every list must then match
// the entities exactly, and nothing may be poisoned.
func runCrashSchedule(t *testing.T, e eventualtest.Env, p Placement, seed uint64, writes int) crashCounts {
	c := crashCounts{schedules: 1}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0xc4a5))
	cs := &eventualtest.CrashStore{Store: e.B.Store}
	f := newFixture(t, e, p, Options{Attempts: 32}, cs)
	f.eo.Concurrency = 1 // one message at a time: a crash stops the whole worker
	if !e.Fake() {
		// Real time: hidden messages and unsent outbox rows come back
		// after a second.
		f.eo.Visibility, f.eo.SweepAfter = time.Second, time.Second
	}
	f.open(t, cs)
	restart := func() {
		c.crashes++
		f.open(t, cs)
	}
	names := []string{"Jones", "Smith", "Brown", ""}
	people := 4
	dept := func(i int) string { return []string{"Sales", "Marketing"}[i%2] }
	cs.ArmAt(int64(1 + r.IntN(12*writes)))
	for range writes {
		i := r.IntN(people)
		name := names[r.IntN(len(names))]
		remove := r.IntN(4) == 0
		c.operations++
		// Flush: the write's message, queued after it returned, comes
		// next in the crash schedule; a crash there (died) leaves the
		// write done, and the process restarts.
		if crashed, died := cs.Survive(func() {
			v, err := f.x.Get(ctx, dept(i), idOf(i))
			switch {
			case err != nil:
				_ = f.x.Insert(ctx, &Employee{Dept: dept(i), ID: idOf(i), Last: name})
			case remove:
				_ = f.x.Delete(ctx, &v)
			default:
				v.Last = name
				_ = f.x.Update(ctx, &v)
			}
			_ = f.eng.Flush(ctx)
		}); crashed || died {
			restart()
		}
		if r.IntN(3) == 0 && eventualtest.Survive(func() { _, _ = f.eng.ProcessOnce(ctx) }) {
			restart()
		}
	}
	// Quiesce: worker and sweeper through the crashing store until the
	// queue and the outbox are empty, a fresh process after every crash
	// still to come.
	for eventualtest.Survive(func() { eventualtest.DrainTolerant(t, e, &f.eng, f.eo, e.B.Store, f.table) }) {
		restart()
	}
	cs.Arm(0, false)
	c.detached = cs.DetachedPoints()
	k := f.check(t)
	c.lost, c.duplicated, c.stale = k.lost, k.duplicated, k.stale
	if poisoned, err := f.eng.Poisoned(ctx, 32); err != nil || len(poisoned) != 0 {
		c.poisoned = len(poisoned)
		t.Errorf("seed %d: poison queue holds %+v (%v)", seed, poisoned, err)
	}
	return c
}

// TestCrashAtEveryStep: seeded schedules on the two eventual placements
// in which the writer or the worker stops at a random request, before or
// after it reaches the store (between the entity's commit and the
// queueing, between a list's read and its write, after the write and
// before the message's delete, mid-sweep), and a fresh process carries
// on. Every list ends exactly as the entities are.
func TestCrashAtEveryStep(t *testing.T) {
	for _, p := range []Placement{SeparatePartition, InBlobs} {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				schedules, writes := 200, 8
				if !e.Fake() {
					schedules, writes = 24, 5
				}
				if testing.Short() {
					schedules = min(schedules, 20)
				}
				if raceDetector && e.Fake() {
					schedules = 100
				}
				total := crashCounts{detached: map[string]int{}}
				for seed := range schedules {
					c := runCrashSchedule(t, e, p, uint64(seed)+1, writes)
					for k, v := range c.detached {
						total.detached[k] += v
					}
					total.schedules += c.schedules
					total.crashes += c.crashes
					total.operations += c.operations
					total.lost += c.lost
					total.duplicated += c.duplicated
					total.stale += c.stale
					total.poisoned += c.poisoned
					if t.Failed() {
						t.Fatalf("seed %d failed", seed+1)
					}
				}
				t.Logf("schedules %d, crashes injected %d (on the engine's goroutine, queueing a write's message: %v), operations %d: lost %d, duplicated %d, stale %d (poisoned %d)",
					total.schedules, total.crashes, total.detached, total.operations, total.lost, total.duplicated, total.stale, total.poisoned)
				if total.crashes == 0 {
					t.Fatal("no crash was injected")
				}
				if e.Fake() {
					for _, p := range eventualtest.DetachedKeyPoints {
						if total.detached[p] == 0 {
							t.Errorf("no crash came %s on the engine's goroutine (a write's message)", p)
						}
					}
				}
			})
		})
	}
}
