package indexentity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestProofSeededFaults: on the two eventual placements, writers each
// upsert and delete their own employees of two departments, moving them
// among a few shared last names (so the lists are contended), while
// workers update the lists; about one request in seven meets a seeded
// fault: on memstore and on Azurite through storetest's kit (typed lane
// kept; table, queue and blob requests faulted), and on Azurite through
// fault proxies on the table, queue and blob endpoints. A write that
// succeeded must be in the entity at once, one that failed must not be,
// and an unknown outcome is settled by reading the entity (writing again
// when absent). After draining under faults and then cleanly, every
// entity is its writer's last acknowledged write and every list matches
// the entities exactly: lost 0, duplicated 0, stale 0, poisoned 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, e eventualtest.Env, p Placement, label string, faulty store.Store, fs *prooftest.Faults) {
		ctx := context.Background()
		const writers, mine = 3, 2
		each := 16
		if !e.Fake() {
			each = 8
		}
		if testing.Short() {
			each = 6
		}
		f := newFixture(t, e, p, Options{Attempts: 32}, nil)
		f.eo.WriteAttempts = 64
		f.eo.MaxReceives = 1000
		if !e.Fake() {
			f.eo.Visibility, f.eo.SweepAfter = time.Second, time.Second
		}
		f.open(t, e.B.Store)
		x, eng := f.open(t, faulty), f.eng
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		dept := func(id int) string { return []string{"Sales", "Marketing"}[id%2] }
		// first reads an employee's first name straight from the store
		// ("" when absent): each write has a first name of its own.
		first := func(id int) string {
			row, err := e.B.Store.Table(f.table).Get(ctx, dept(id), idOf(id), nil)
			if store.EntityNotFound(err) {
				return ""
			}
			if err != nil {
				t.Error(err)
				return "?"
			}
			s, _ := row.Properties["First"].(string)
			return s
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
					if n, err := eng.ProcessOnce(ctx); err != nil || n == 0 {
						if err != nil {
							note("worker error")
						}
						time.Sleep(5 * time.Millisecond)
					}
				}
			})
		}
		want := make([]string, writers*mine)
		names := []string{"Jones", "Smith", "Brown", ""}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					id := w*mine + i%mine
					v := &Employee{Dept: dept(id), ID: idOf(id), First: fmt.Sprintf("F%d-%d", w, i), Last: names[(i/mine+w)%len(names)]}
					remove := i%5 == 4 && i < each-2
					target := v.First
					if remove {
						target = ""
					}
					for try := 0; ; try++ {
						var err error
						if remove {
							err = x.DeleteKey(ctx, v.Dept, v.ID)
						} else {
							err = x.Upsert(ctx, v)
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
						got := first(id)
						if kind == "done" && got != target || kind == "failed" && !remove && got == target {
							t.Errorf("%s: %s of %s %s (%v), the store holds %q", label, v.First, v.ID, kind, err, got)
							return
						}
						if got == target {
							want[id] = target
							break
						}
						if try > 50 {
							t.Errorf("%s: %s of %s never stored", label, v.First, v.ID)
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
		for range 3 {
			e.Pass(max(f.eo.Visibility, f.eo.SweepAfter) + 50*time.Millisecond)
			for {
				n, err := eng.ProcessOnce(ctx)
				if err != nil {
					note("worker error")
				}
				if n == 0 {
					break
				}
			}
			if _, err := eng.Sweep(ctx, f.table); err != nil {
				note("sweep error")
			}
		}
		f.open(t, e.B.Store)
		f.drain(t)
		lostWrites := 0
		for id, name := range want {
			if got := first(id); got != name {
				lostWrites++
				t.Errorf("%s: %s holds %q, the last acknowledged write %q", label, idOf(id), got, name)
			}
		}
		c := f.check(t)
		poisoned, err := f.eng.Poisoned(ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d writers x %d writes, 2 workers, faults %d %v; outcomes %v; %v (writes lost %d), poisoned %d",
			label, writers, each, fs.Total(), fs.Counts(), outcomes, c, lostWrites, len(poisoned))
		if c.lost+lostWrites+c.duplicated+c.stale+len(poisoned) != 0 {
			t.Fatal("the store does not match the acknowledged writes")
		}
		if fs.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	for i, p := range []Placement{SeparatePartition, InBlobs} {
		seed := uint64(10 * (i + 1))
		t.Run(p.String(), func(t *testing.T) {
			azEnv := func(t *testing.T) eventualtest.Env {
				return eventualtest.Env{B: backendtest.Azurite(t), Names: fmt.Sprintf("%d%d", time.Now().UnixNano()%1_000_000, nameSeq.Add(1))}
			}
			t.Run("memstore", func(t *testing.T) {
				e := eventualtest.MemEnv()
				fs := prooftest.New(seed+1, 0.15)
				run(t, e, p, "memstore", storetest.WrapStore(e.B.Store, fs.HookOn("Table.", "Queue.", "Container.")), fs)
			})
			t.Run("azurite", func(t *testing.T) {
				e := azEnv(t)
				fs := prooftest.New(seed+2, 0.15)
				run(t, e, p, "azurite", storetest.WrapStore(e.B.Store, fs.HookOn("Table.", "Queue.", "Container.")), fs)
			})
			t.Run("azurite-faultproxy", func(t *testing.T) {
				e := azEnv(t)
				fs := prooftest.New(seed+3, 0.15)
				run(t, e, p, "azurite through the fault proxy (table, queue, blob)", prooftest.ProxiedServices(t, fs.Decide, "table", "queue", "blob"), fs)
			})
		})
	}
}
