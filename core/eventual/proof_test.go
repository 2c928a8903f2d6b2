package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

var proofNames atomic.Int64

// TestProofSeededFaults: writers of one source partition each change
// their own row again and again, every Write carrying a copy step and a
// log step, while workers run the operations; about one request in seven
// meets a seeded fault: on memstore and on Azurite through storetest's
// kit (typed lane kept, table and queue requests faulted), and on Azurite
// through fault proxies on the table and queue endpoints. A Write that
// succeeded must be in the source at once, one that failed must not be,
// and an unknown outcome is settled by reading the source (writing again
// when absent). After draining under faults and then cleanly, each source
// row holds its writer's last value, each copy matches its source value
// and version (nothing older over newer), and the log holds one row per
// committed write: lost 0, duplicated 0, stale 0, poisoned 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, e eventualtest.Env, label string, faulty store.Store, f *prooftest.Faults) {
		ctx := context.Background()
		const writers = 4
		each := 12
		if !e.Fake() {
			each = 8
		}
		if testing.Short() {
			each = 5
		}
		src := e.B.NewTable(t, "pfsrc")
		dst := e.B.NewTable(t, "pfdst")
		o := e.Opts("pf")
		o.Container = "pfops" + e.Names
		o.WriteAttempts = 64
		o.MaxReceives = 1000
		ceng := eventualtest.NewEngine(t, e.B.Store, o)
		feng, err := o.New(faulty)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		seqOf := func(k string) string {
			row, err := e.B.Store.Table(src).Get(ctx, "p", k, nil)
			if store.EntityNotFound(err) {
				return ""
			}
			if err != nil {
				t.Error(err)
				return "?"
			}
			s, _ := row.Properties["Seq"].(string)
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
					if n, err := feng.ProcessOnce(ctx); err != nil || n == 0 {
						if err != nil {
							note("worker error")
						}
						time.Sleep(5 * time.Millisecond)
					}
				}
			})
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				k := fmt.Sprintf("k%d", w)
				for i := 1; i <= each; i++ {
					seq := fmt.Sprintf("%03d", i)
					for try := 0; ; try++ {
						_, err := feng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
							if err := tx.Upsert("src", store.Entity{RowKey: k, Properties: map[string]any{"Seq": seq}}, store.Replace); err != nil {
								return err
							}
							return tx.Then(ctx, k,
								eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: k, Properties: map[string]any{"Seq": seq}}),
								eventual.Upsert(dst, store.Entity{PartitionKey: "log", RowKey: k + "-" + seq, Properties: map[string]any{"Seq": seq}}))
						})
						kind := "stored"
						switch {
						case err == nil:
						case errors.Is(err, store.ErrUnknownOutcome):
							kind = "unknown"
						default:
							kind = "not stored"
						}
						note(kind)
						got := seqOf(k)
						if kind == "stored" && got != seq || kind == "not stored" && got == seq {
							t.Errorf("%s: %s seq %s %s (%v), source holds %q", label, k, seq, kind, err, got)
							return
						}
						if got == seq {
							break
						}
						if try > 50 {
							t.Errorf("%s: %s seq %s never stored", label, k, seq)
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
		// Workers under faults a few rounds more, letting hidden messages
		// reappear and outbox rows become sweepable, then a clean drain.
		for range 3 {
			e.Pass(max(o.Visibility, o.SweepAfter) + 50*time.Millisecond)
			for {
				n, err := feng.ProcessOnce(ctx)
				if err != nil {
					note("worker error")
				}
				if n == 0 {
					break
				}
			}
			if _, err := feng.Sweep(ctx, src); err != nil {
				note("sweep error")
			}
		}
		eventualtest.Drain(t, e, &ceng, o, e.B.Store, src)

		lost, duplicated, stale := 0, 0, 0
		logRows := map[string]int{}
		for row, err := range store.All(ctx, e.B.Store.Table(dst), store.Query{Filter: "PartitionKey eq 'log'"}) {
			if err != nil {
				t.Fatal(err)
			}
			logRows[row.RowKey]++
		}
		for w := range writers {
			k := fmt.Sprintf("k%d", w)
			s, err := e.B.Store.Table(src).Get(ctx, "p", k, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Properties["Seq"] != fmt.Sprintf("%03d", each) {
				lost++
				t.Errorf("%s: source %s holds %v, want seq %03d", label, k, s.Properties["Seq"], each)
			}
			c, err := e.B.Store.Table(dst).Get(ctx, "copy", k, nil)
			switch {
			case err != nil:
				lost++
				t.Errorf("%s: copy %s: %v", label, k, err)
			case c.Properties["Seq"] != s.Properties["Seq"] || eventual.VersionOf(&c) != eventual.VersionOf(&s):
				stale++
				t.Errorf("%s: copy %s = %v (version %d), source %v (version %d)", label, k, c.Properties["Seq"], eventual.VersionOf(&c), s.Properties["Seq"], eventual.VersionOf(&s))
			}
			for i := 1; i <= each; i++ {
				switch n := logRows[fmt.Sprintf("%s-%03d", k, i)]; {
				case n == 0:
					lost++
				case n > 1:
					duplicated += n - 1
				}
			}
		}
		if extra := len(logRows) - writers*each; extra > 0 {
			duplicated += extra
		}
		poisoned, err := ceng.Poisoned(ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d writers x %d writes, 2 workers, faults %d %v; outcomes %v; %d log rows: lost %d, duplicated %d, stale %d, poisoned %d",
			label, writers, each, f.Total(), f.Counts(), outcomes, len(logRows), lost, duplicated, stale, len(poisoned))
		if lost+duplicated+stale+len(poisoned) != 0 {
			t.Fatalf("lost %d, duplicated %d, stale %d, poisoned %d", lost, duplicated, stale, len(poisoned))
		}
		if f.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	azEnv := func(t *testing.T) eventualtest.Env {
		return eventualtest.Env{B: backendtest.Azurite(t), Names: fmt.Sprintf("%d%d", time.Now().UnixNano()%1_000_000, proofNames.Add(1))}
	}
	t.Run("memstore", func(t *testing.T) {
		e := eventualtest.MemEnv()
		f := prooftest.New(1, 0.15)
		run(t, e, "memstore", storetest.WrapStore(e.B.Store, f.HookOn("Table.", "Queue.")), f)
	})
	t.Run("azurite", func(t *testing.T) {
		e := azEnv(t)
		f := prooftest.New(2, 0.15)
		run(t, e, "azurite", storetest.WrapStore(e.B.Store, f.HookOn("Table.", "Queue.")), f)
	})
	t.Run("azurite-faultproxy", func(t *testing.T) {
		e := azEnv(t)
		f := prooftest.New(3, 0.15)
		run(t, e, "azurite through the fault proxy (table, queue)", prooftest.ProxiedServices(t, f.Decide, "table", "queue"), f)
	})
}
