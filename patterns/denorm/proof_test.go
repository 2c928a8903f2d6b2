package denorm_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

var proofNames atomic.Int64

// TestProofSeededFaults: writers each change their own manager again and
// again (name, phone, the department and team of their own pool it is
// copied into) and delete it now and then, while workers run the copy
// steps; about one request in seven meets a seeded fault: on memstore
// and on Azurite through storetest's kit (typed lane kept; table and
// queue requests faulted), and on Azurite through fault proxies on the
// table and queue endpoints. A write that succeeded must be in the source
// at once, one that failed must not be, and an unknown outcome is settled
// by reading the source (writing again when absent). After draining under
// faults and then cleanly, every source is its writer's last acknowledged
// write, every target it maps to holds its values at its version, no
// other target holds a copy, and no target's own property changed: lost
// 0, duplicated 0, stale 0, clobbered 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, e eventualtest.Env, label string, faulty store.Store, fs *prooftest.Faults) {
		ctx := context.Background()
		const writers = 3
		each := 16
		if !e.Fake() {
			each = 10
		}
		if testing.Short() {
			each = 6
		}
		f := newFixture(t, e, "dpf", nil)
		f.o.WriteAttempts = 64
		f.o.MaxReceives = 1000
		for k := range writers {
			for j := range 2 {
				f.addTarget(t, f.depts, "dept", fmt.Sprintf("dept_%d%d", k, j))
				f.addTarget(t, f.staff, "Sales", fmt.Sprintf("team_%d%d", k, j))
			}
		}
		f.st = faulty
		f.restart(t)
		faultyD, faultyEng := f.d, f.eng
		clean, err := denorm.New[Employee](eventualtest.NewEngine(t, e.B.Store, f.o), f.staff, f.relation())
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		// name reads a manager's name straight from the store ("" when
		// absent): each write has a name of its own.
		name := func(id string) string {
			v, err := clean.Get(ctx, "Sales", id)
			if store.EntityNotFound(err) {
				return ""
			}
			if err != nil {
				t.Error(err)
				return "?"
			}
			return v.Name
		}
		stop := make(chan struct{})
		var workers sync.WaitGroup
		for range 2 {
			workers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if n, err := faultyEng.ProcessOnce(ctx); err != nil || n == 0 {
						if err != nil {
							note("worker error")
						}
						time.Sleep(5 * time.Millisecond)
					}
				}
			})
		}
		want := make([]string, writers) // last acknowledged name per manager
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				id := fmt.Sprintf("emp_%06d", w)
				for i := range each {
					v := &Employee{Unit: "Sales", ID: id, Name: fmt.Sprintf("N%d-%d", w, i), Phone: fmt.Sprintf("555-%04d", i)}
					if j := i % 3; j < 2 {
						v.Manages = fmt.Sprintf("dept_%d%d", w, j)
					}
					if j := (i / 2) % 3; j < 2 {
						v.Leads = fmt.Sprintf("team_%d%d", w, j)
					}
					remove := i%5 == 4 && i < each-2
					target := v.Name
					if remove {
						target = ""
					}
					for try := 0; ; try++ {
						var err error
						if remove {
							err = faultyD.DeleteKey(ctx, "Sales", id)
						} else {
							err = faultyD.Upsert(ctx, v)
						}
						kind := "done"
						switch {
						case err == nil:
						case errors.Is(err, store.ErrUnknownOutcome):
							kind = "unknown"
						default:
							kind = "failed"
						}
						note(kind)
						got := name(id)
						if kind == "done" && got != target || kind == "failed" && !remove && got == target {
							t.Errorf("%s: %s of %s %s (%v), the store holds %q", label, v.Name, id, kind, err, got)
							return
						}
						if got == target {
							want[w] = target
							break
						}
						if try > 50 {
							t.Errorf("%s: %s of %s never stored", label, v.Name, id)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		workers.Wait()
		if t.Failed() {
			return
		}
		// Workers under faults a few rounds more, then a clean drain.
		for range 3 {
			e.Pass(max(f.o.Visibility, f.o.SweepAfter) + 50*time.Millisecond)
			for {
				n, err := faultyEng.ProcessOnce(ctx)
				if err != nil {
					note("worker error")
				}
				if n == 0 {
					break
				}
			}
			if _, err := faultyEng.Sweep(ctx, f.staff); err != nil {
				note("sweep error")
			}
		}
		f.st = e.B.Store
		f.restart(t)
		f.drain(t)
		lostWrites := 0
		for w, n := range want {
			if got := name(fmt.Sprintf("emp_%06d", w)); got != n {
				lostWrites++
				t.Errorf("%s: manager %d holds %q, the last acknowledged write %q", label, w, got, n)
			}
		}
		c := f.scan(t, "Sales", nil)
		poisoned, err := f.eng.Poisoned(ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d writers x %d writes, 2 workers, faults %d %v; outcomes %v; %d targets, %d filled: lost %d (writes %d), duplicated %d, stale %d, clobbered %d, poisoned %d",
			label, writers, each, fs.Total(), fs.Counts(), outcomes, c.targets, c.filled, c.lost, lostWrites, c.duplicated, c.stale, c.clobbered, len(poisoned))
		if c.lost+lostWrites+c.duplicated+c.stale+c.clobbered+len(poisoned) != 0 {
			t.Fatal("the store does not match the acknowledged writes")
		}
		if fs.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	azEnv := func(t *testing.T) eventualtest.Env {
		return eventualtest.Env{B: backendtest.Azurite(t), Names: fmt.Sprintf("%d%d", time.Now().UnixNano()%1_000_000, proofNames.Add(1))}
	}
	t.Run("memstore", func(t *testing.T) {
		e := eventualtest.MemEnv()
		fs := prooftest.New(1, 0.15)
		run(t, e, "memstore", storetest.WrapStore(e.B.Store, fs.HookOn("Table.", "Queue.")), fs)
	})
	t.Run("azurite", func(t *testing.T) {
		e := azEnv(t)
		fs := prooftest.New(2, 0.15)
		run(t, e, "azurite", storetest.WrapStore(e.B.Store, fs.HookOn("Table.", "Queue.")), fs)
	})
	t.Run("azurite-faultproxy", func(t *testing.T) {
		e := azEnv(t)
		fs := prooftest.New(3, 0.15)
		run(t, e, "azurite through the fault proxy (table, queue)", prooftest.ProxiedServices(t, fs.Decide, "table", "queue"), fs)
	})
}
