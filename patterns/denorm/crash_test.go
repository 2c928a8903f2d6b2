package denorm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
)

type crashCounts struct {
	points, detached               map[string]int // detached: on the engine's goroutine
	schedules, crashes, operations int
	counts
}

// runCrashSchedule is one seeded schedule: managers change names and
// phones, move between the departments (another table) and teams (their
// own partition) of their own pools, and are deleted now and then; the
// worker runs now and then; the writer or the worker crashes at a random
// request, before or after it reaches the store (between the source
// write and the queueing, mid-step, before the message delete), and
// restarts. Then the workers and the sweeper run to quiet (crashing too),
// and a full scan compares every target with its source.
func runCrashSchedule(t *testing.T, e eventualtest.Env, seed uint64, writes int) crashCounts {
	c := crashCounts{schedules: 1, points: map[string]int{}, detached: map[string]int{}}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0xde))
	cs := &eventualtest.CrashStore{Store: e.B.Store}
	f := newFixture(t, e, fmt.Sprintf("dc%d", seed), cs)
	f.o.Concurrency = 1 // a crash must unwind the caller's goroutine
	f.restart(t)
	const sources = 3
	for k := range sources {
		for j := range 2 {
			f.addTarget(t, f.depts, "dept", fmt.Sprintf("dept_%d%d", k, j))
			f.addTarget(t, f.staff, "Sales", fmt.Sprintf("team_%d%d", k, j))
		}
		// Pool slot 2 never exists: a target that is missing.
	}
	arm := func() { cs.Arm(int64(1+r.IntN(8*writes)), r.IntN(2) == 0) }
	arm()
	for i := 0; i < writes; i++ {
		k := r.IntN(sources)
		v := &Employee{Unit: "Sales", ID: fmt.Sprintf("emp_%06d", k), Name: fmt.Sprintf("N%d", i), Phone: fmt.Sprintf("555-%04d", i)}
		if j := r.IntN(4); j < 3 {
			v.Manages = fmt.Sprintf("dept_%d%d", k, j)
		}
		if j := r.IntN(4); j < 3 {
			v.Leads = fmt.Sprintf("team_%d%d", k, j)
		}
		remove := r.IntN(5) == 0
		var err error
		// Flush: the write's message, queued after it returned, comes
		// next in the crash schedule; a crash there (died) leaves the
		// write done, and the process restarts.
		crashed, died := cs.Survive(func() {
			if remove {
				err = f.d.DeleteKey(ctx, "Sales", v.ID)
			} else {
				err = f.d.Upsert(ctx, v)
			}
			_ = f.eng.Flush(ctx)
		})
		c.operations++
		if !crashed && err != nil {
			t.Fatalf("seed %d: write %d: %v", seed, i, err)
		}
		if crashed || died {
			c.crashes++
			f.restart(t)
			if r.IntN(2) == 0 {
				arm()
			}
		}
		if r.IntN(3) == 0 {
			if eventualtest.Survive(func() { _, _ = f.eng.ProcessOnce(ctx) }) {
				c.crashes++
				f.restart(t)
			}
		}
	}
	for eventualtest.Survive(func() { f.drain(t) }) {
		c.crashes++
		f.restart(t)
	}
	cs.Arm(0, false)
	cs.AddPoints(c.points)
	cs.AddDetachedPoints(c.detached)
	c.counts = f.scan(t, "Sales", nil)
	if p, err := f.eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
		t.Errorf("seed %d: poison queue holds %+v (%v)", seed, p, err)
	}
	return c
}

// TestCrashAtEveryStep runs hundreds of seeded crash schedules on
// memstore and two dozen on Azurite: at the end every target a source maps
// to holds that source's values at its version, no target holds the copy
// of a source that does not map to it, no target's own property changed,
// and the poison queue is empty.
func TestCrashAtEveryStep(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		schedules, writes := 300, 8
		if !e.Fake() {
			schedules, writes = 24, 5
		}
		if testing.Short() {
			schedules = min(schedules, 20)
		}
		total := crashCounts{points: map[string]int{}, detached: map[string]int{}}
		for seed := range schedules {
			c := runCrashSchedule(t, e, uint64(seed)+1, writes)
			total.schedules += c.schedules
			for k, v := range c.points {
				total.points[k] += v
			}
			for k, v := range c.detached {
				total.detached[k] += v
			}
			total.crashes += c.crashes
			total.operations += c.operations
			total.targets += c.targets
			total.filled += c.filled
			total.lost += c.lost
			total.duplicated += c.duplicated
			total.stale += c.stale
			total.clobbered += c.clobbered
			if t.Failed() {
				t.Fatalf("seed %d failed", seed+1)
			}
		}
		t.Logf("schedules %d, crashes injected %d, operations %d: lost %d, duplicated %d, stale %d (clobbered %d; %d targets, %d holding a copy at the end; poison queue empty)",
			total.schedules, total.crashes, total.operations, total.lost, total.duplicated, total.stale, total.clobbered, total.targets, total.filled)
		t.Logf("crash points: %v; of them on the engine's goroutine, queueing a write's message: %v", total.points, total.detached)
		if total.crashes == 0 {
			t.Fatal("no crash was injected")
		}
		if e.Fake() {
			eventualtest.CheckKeyPoints(t, total.points, total.detached)
		}
	})
}
