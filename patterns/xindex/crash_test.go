package xindex_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
)

type crashCounts struct {
	points, detached                        map[string]int // detached: on the engine's goroutine
	schedules, crashes, operations, refused int
	counts
}

// runCrashSchedule is one seeded schedule: a writer changes the emails,
// last names and ages of a few employees (moving values away and back,
// now and then onto a value another employee may hold) and deletes some,
// the worker runs now and then, and either may crash at a random
// request, before or after it reaches the store (after a claim, between
// the entity write and the queueing, mid-step, before the message
// delete). Each crash restarts the process. Then the workers and the
// sweeper run to quiet (crashing too), the leases pass, Reap runs, and a
// full scan compares every copy with its entity.
func runCrashSchedule(t *testing.T, e eventualtest.Env, seed uint64, writes int) crashCounts {
	c := crashCounts{schedules: 1, points: map[string]int{}, detached: map[string]int{}}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0x1d))
	cs := &eventualtest.CrashStore{Store: e.B.Store}
	lease := time.Minute
	if !e.Fake() {
		lease = 500 * time.Millisecond
	}
	f := newFixture(t, e, fmt.Sprintf("xc%d", seed), cs, xindex.Options{ClaimLease: lease})
	f.o.Concurrency = 1 // a crash must unwind the caller's goroutine
	f.restart(t)
	const sources = 4
	armed := func() {
		cs.Arm(int64(1+r.IntN(10*writes)), r.IntN(2) == 0)
	}
	armed()
	lastNames := []string{"Jones", "Smith", "Lee"}
	for i := 0; i < writes; i++ {
		k := r.IntN(sources)
		v := emp("Sales", k, fmt.Sprintf("F%d", i), lastNames[r.IntN(3)], fmt.Sprintf("s%d-%d@x.com", k, r.IntN(3)))
		if r.IntN(6) == 0 {
			v.Email = fmt.Sprintf("shared%d@x.com", r.IntN(2))
		}
		remove := r.IntN(5) == 0
		var err error
		// Flush: the write's message, queued after it returned, comes
		// next in the crash schedule; a crash there (died) leaves the
		// write done, and the process restarts.
		crashed, died := cs.Survive(func() {
			if remove {
				err = f.x.DeleteKey(ctx, "Sales", v.ID)
			} else {
				err = f.x.Upsert(ctx, v)
			}
			_ = f.eng.Flush(ctx)
		})
		c.operations++
		if crashed || died {
			c.crashes++
			f.restart(t)
			if r.IntN(2) == 0 {
				armed()
			}
		}
		switch {
		case crashed:
			// The write's outcome is unknown: the scan judges it.
		case errors.Is(err, partition.ErrDuplicate):
			c.refused++
		case err != nil:
			t.Fatalf("seed %d: write %d: %v", seed, i, err)
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
	if f.bareClaims(t, "Sales") > 0 {
		e.Pass(lease + 100*time.Millisecond)
		if _, err := f.x.Reap(ctx, "Sales", "email"); err != nil {
			t.Fatal(err)
		}
	}
	c.counts = f.scan(t)
	if c.claims != 0 {
		t.Errorf("seed %d: %d claims left after Reap", seed, c.claims)
	}
	if p, err := f.eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
		t.Errorf("seed %d: poison queue holds %+v (%v)", seed, p, err)
	}
	return c
}

// TestCrashAtEveryStep runs hundreds of seeded crash schedules on
// memstore and two dozen on Azurite: at the end every entity has exactly
// its copies, each at the entity's version with its values, no copy
// outlives its entity or its value, no claim is left, and the poison
// queue is empty.
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
			total.refused += c.refused
			total.entities += c.entities
			total.copies += c.copies
			total.lost += c.lost
			total.duplicated += c.duplicated
			total.stale += c.stale
			if t.Failed() {
				t.Fatalf("seed %d failed", seed+1)
			}
		}
		t.Logf("schedules %d, crashes injected %d, operations %d: lost %d, duplicated %d, stale %d (%d writes refused as duplicates; %d entities and %d copies at the end, no claim left, poison queue empty)",
			total.schedules, total.crashes, total.operations, total.lost, total.duplicated, total.stale, total.refused, total.entities, total.copies)
		t.Logf("crash points: %v; of them on the engine's goroutine, queueing a write's message: %v", total.points, total.detached)
		if total.crashes == 0 {
			t.Fatal("no crash was injected")
		}
		if e.Fake() {
			eventualtest.CheckKeyPoints(t, total.points, total.detached)
		}
	})
}
