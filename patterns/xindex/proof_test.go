package xindex_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

var proofNames atomic.Int64

// TestProofSeededFaults: writers each upsert and delete their own
// employees of one partition, moving emails among their own values and a
// shared pool (so uniqueness is contended), while workers run the copy
// steps; about one request in seven meets a seeded fault: on memstore
// and on Azurite through storetest's kit (typed lane kept; table and
// queue requests faulted), and on Azurite through fault proxies on the
// table and queue endpoints. A write that succeeded must be in the
// entity at once, one refused or failed must not be, and an unknown
// outcome is settled by reading the entity (writing again when absent).
// After draining under faults, then cleanly, and reaping the claims,
// every entity is its writer's last acknowledged write and has exactly
// its copies at its version: lost 0, duplicated 0, stale 0, claims 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, e eventualtest.Env, label string, faulty store.Store, fs *prooftest.Faults) {
		ctx := context.Background()
		const writers, mine = 3, 2
		each := 16
		if !e.Fake() {
			each = 10
		}
		if testing.Short() {
			each = 6
		}
		lease := time.Minute
		if !e.Fake() {
			lease = 500 * time.Millisecond
		}
		f := newFixture(t, e, "xpf", nil, xindex.Options{ClaimLease: lease})
		f.o.WriteAttempts = 64
		f.o.MaxReceives = 1000
		f.st = faulty
		f.restart(t)
		faultyX, faultyEng := f.x, f.eng
		clean, err := xindex.New[Employee](eventualtest.NewEngine(t, e.B.Store, f.o), f.staff, &f.opts, func() []xindex.Spec[Employee] {
			sp := specs()
			sp[1] = sp[1].InTable(f.ix)
			return sp
		}()...)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		// first reads an employee's first name straight from the store
		// ("" when absent): each write has a first name of its own.
		first := func(id int) string {
			v, err := clean.Get(ctx, "Sales", fmt.Sprintf("emp_%06d", id))
			if store.EntityNotFound(err) {
				return ""
			}
			if err != nil {
				t.Error(err)
				return "?"
			}
			return v.FirstName
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
		want := make([]string, writers*mine) // last acknowledged first name per employee
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					id := w*mine + i%mine
					name := fmt.Sprintf("F%d-%d", w, i)
					email := fmt.Sprintf("e%d-%d@x.com", id, i%3)
					if i%4 == 1 {
						email = fmt.Sprintf("shared%d@x.com", i%2)
					}
					remove := i%5 == 4 && i < each-2
					v := emp("Sales", id, name, []string{"Jones", "Smith"}[i%2], email)
					for try := 0; ; try++ {
						var err error
						if remove {
							err = faultyX.DeleteKey(ctx, "Sales", v.ID)
						} else {
							err = faultyX.Upsert(ctx, v)
						}
						kind := "done"
						switch {
						case err == nil:
						case errors.Is(err, partition.ErrDuplicate):
							kind = "refused"
						case errors.Is(err, store.ErrUnknownOutcome):
							kind = "unknown"
						default:
							kind = "failed"
						}
						note(kind)
						got := first(id)
						target := name
						if remove {
							target = ""
						}
						switch {
						case kind == "done" && got != target:
							t.Errorf("%s: %s of %s done (%v), the store holds %q", label, name, v.ID, err, got)
							return
						case (kind == "refused" || kind == "failed") && !remove && got == target:
							t.Errorf("%s: %s of %s %s (%v), the store holds it", label, name, v.ID, kind, err)
							return
						}
						if kind == "refused" {
							break
						}
						if got == target {
							want[id] = target
							break
						}
						if try > 50 {
							t.Errorf("%s: %s of %s never stored", label, name, v.ID)
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
		e.Pass(lease + 100*time.Millisecond)
		reaped, err := f.x.Reap(ctx, "Sales", "email")
		if err != nil {
			t.Fatal(err)
		}
		lostWrites := 0
		for id, name := range want {
			if got := first(id); got != name {
				lostWrites++
				t.Errorf("%s: emp %d holds %q, the last acknowledged write %q", label, id, got, name)
			}
		}
		c := f.scan(t)
		poisoned, err := f.eng.Poisoned(ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d writers x %d writes, 2 workers, faults %d %v; outcomes %v; %d entities, %d copies, %d claims reaped: lost %d (writes %d), duplicated %d, stale %d, claims %d, poisoned %d",
			label, writers, each, fs.Total(), fs.Counts(), outcomes, c.entities, c.copies, reaped, c.lost, lostWrites, c.duplicated, c.stale, c.claims, len(poisoned))
		if c.lost+lostWrites+c.duplicated+c.stale+c.claims+len(poisoned) != 0 {
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
