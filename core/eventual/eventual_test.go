package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// opts are eventualtest's engine options with a container for large
// operations, and the engine's own SweepAfter (twice the visibility).
func opts(e eventualtest.Env, queue string) eventualtest.Options {
	o := e.Opts(queue)
	o.Container = "ops" + e.Names
	o.SweepAfter = 0
	return o
}

// TestMoveEmployeeToArchive is the design guide's example: an employee
// leaves, and moves from the Current table to the Archive table. The
// delete and the intent commit together; the worker makes the archive
// copy; nothing is lost, nothing is left behind.
func TestMoveEmployeeToArchive(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		current := e.B.NewTable(t, "current")
		archive := e.B.NewTable(t, "archive")
		o := opts(e, "moves")
		eng := eventualtest.NewEngine(t, st, o)
		if _, err := eng.Write(ctx, current, "Sales", func(tx *eventual.Tx) error {
			return tx.Insert("employee", store.Entity{RowKey: "000123", Properties: map[string]any{"Name": "Don Hall"}})
		}); err != nil {
			t.Fatal(err)
		}
		emp, err := st.Table(current).Get(ctx, "Sales", "000123", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Write(ctx, current, "Sales", func(tx *eventual.Tx) error {
			if err := tx.Delete("employee", "000123", emp.ETag); err != nil {
				return err
			}
			return tx.Then(ctx, "000123", eventual.Upsert(archive, store.Entity{PartitionKey: "Sales", RowKey: "000123",
				Properties: map[string]any{"Name": "Don Hall", "Left": e.Now().UTC().Truncate(time.Second)}}))
		})
		if err != nil || len(res.Outbox) != 1 {
			t.Fatalf("move: %v, %+v", err, res)
		}
		eventualtest.Drain(t, e, &eng, o, st, current)
		got, err := st.Table(archive).Get(ctx, "Sales", "000123", nil)
		if err != nil || got.Properties["Name"] != "Don Hall" || got.Properties[eventual.VersionProperty] != res.Version {
			t.Fatalf("archive copy: %v, %v; want the employee with version %d", got.Properties, err, res.Version)
		}
		if _, err := st.Table(current).Get(ctx, "Sales", "000123", nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the employee is still current: %v", err)
		}
	})
}

// TestLateAndDuplicateDeliveryNeverGoesBack: the operations of three
// versions of a source, delivered newest first and then again in every
// order, leave the copy at the newest version, and the operation of a
// deleted source does not create the copy again.
func TestLateAndDuplicateDeliveryNeverGoesBack(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src := e.B.NewTable(t, "src")
		dst := e.B.NewTable(t, "dst")
		o := opts(e, "late")
		eng := eventualtest.NewEngine(t, st, o)
		ops := make([]eventual.Operation, 0, 4)
		for v, name := range []string{"a", "b", "c"} {
			_, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
				if err := tx.Upsert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": name}}, store.Replace); err != nil {
					return err
				}
				ops = append(ops, eventual.Operation{Source: &eventual.Ref{Table: src, PartitionKey: "p", RowKey: "r"}, Version: tx.Version(),
					Steps: []eventual.Step{eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r", Properties: map[string]any{"Name": name}})}})
				return nil
			})
			if err != nil {
				t.Fatal(err, v)
			}
		}
		// Deliver the newest first, then the older ones, then all twice.
		for _, i := range []int{2, 0, 1, 1, 2, 0} {
			if err := eng.Submit(ctx, ops[i]); err != nil {
				t.Fatal(err)
			}
			for {
				n, err := eng.ProcessOnce(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
			got, err := st.Table(dst).Get(ctx, "copy", "r", nil)
			if i == 2 || got.Properties["Name"] == "c" {
				if err != nil || got.Properties["Name"] != "c" || got.Properties[eventual.VersionProperty] != ops[2].Version {
					t.Fatalf("after delivering version %d: %v %v; want the newest, c", ops[i].Version, got.Properties, err)
				}
			}
		}
		// The source is deleted; its delete runs; a late upsert of an older
		// version finds no copy and a source gone: it does not resurrect it.
		var del eventual.Operation
		if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Delete("row", "r", store.ETagAny); err != nil {
				return err
			}
			del = eventual.Operation{Version: tx.Version(), Steps: []eventual.Step{eventual.Delete(dst, "copy", "r")}}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, op := range []eventual.Operation{del, ops[1], ops[2]} {
			if err := eng.Submit(ctx, op); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.ProcessOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Table(dst).Get(ctx, "copy", "r", nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a late operation brought back the copy of a deleted source: %v", err)
		}
	})
}

// TestPoisonAndRedrive: an operation that keeps failing (its table does
// not exist) goes to the poison queue after MaxReceives receives, with
// the error of every attempt; once the table exists, Redrive sends it back
// and it completes. A missing operation blob is reported the same way.
func TestPoisonAndRedrive(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		o := opts(e, "poison")
		o.MaxReceives = 3
		eng := eventualtest.NewEngine(t, st, o)
		missing := "late" + e.Names
		if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{
			eventual.Upsert(missing, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1)}})}}); err != nil {
			t.Fatal(err)
		}
		for range o.MaxReceives + 1 {
			if _, err := eng.ProcessOnce(ctx); err != nil {
				t.Fatal(err)
			}
			e.Pass(1200 * time.Millisecond) // a failed receive comes back after 1 s
		}
		poisoned, err := eng.Poisoned(ctx, 32)
		if err != nil || len(poisoned) != 1 {
			t.Fatalf("poison queue: %d messages, %v; want 1", len(poisoned), err)
		}
		p := poisoned[0]
		if len(p.Attempts) != o.MaxReceives+1 || !strings.Contains(p.Attempts[0].Error, "TableNotFound") || p.Operation == nil {
			t.Fatalf("poisoned %+v: want %d attempts naming TableNotFound and the operation", p, o.MaxReceives+1)
		}
		// Fix the cause, redrive, and it completes.
		if err := st.CreateTable(ctx, missing); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.DeleteTable(context.Background(), missing) })
		if n, err := eng.Redrive(ctx, 32); n != 1 || err != nil {
			t.Fatalf("redrive: %d, %v", n, err)
		}
		if _, err := eng.ProcessOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Table(missing).Get(ctx, "p", "r", nil); err != nil {
			t.Fatalf("the redriven operation did not complete: %v", err)
		}
		if left, _ := eng.Poisoned(ctx, 32); len(left) != 0 {
			t.Fatalf("poison queue still holds %d", len(left))
		}

		// A large operation lives in a blob; with the blob gone the message
		// goes to the poison queue with a clear error, and the worker goes on.
		big := make([]byte, 60*1024)
		if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{eventual.PutBlob("ops"+e.Names, "payload", big)}}); err != nil {
			t.Fatal(err)
		}
		page, err := st.Container("ops"+e.Names).List(ctx, store.BlobListOptions{Prefix: "op-"})
		if err != nil || len(page.Blobs) != 1 {
			t.Fatalf("the large operation's blob: %+v, %v", page.Blobs, err)
		}
		if err := st.Container("ops"+e.Names).DeleteBlob(ctx, page.Blobs[0].Name, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.ProcessOnce(ctx); err != nil {
			t.Fatal(err)
		}
		poisoned, _ = eng.Poisoned(ctx, 32)
		if len(poisoned) != 1 || !strings.Contains(poisoned[0].Attempts[0].Error, "blob") || !strings.HasPrefix(poisoned[0].Where, "blob ") {
			t.Fatalf("a missing blob: %+v", poisoned)
		}
	})
}

// TestBadInputIsRefusedBeforeWriting: an operation naming a bad key or
// table, or too large without a container, is refused with an error
// naming the value, and the source write does not happen.
func TestBadInputIsRefusedBeforeWriting(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src := e.B.NewTable(t, "badsrc")
		o := opts(e, "bad")
		o.Container = ""
		eng := eventualtest.NewEngine(t, st, o)
		cases := map[string]eventual.Step{
			"key with /":              eventual.Upsert("Copies", store.Entity{PartitionKey: "a/b", RowKey: "r"}),
			"bad table name":          eventual.Delete("1bad", "p", "r"),
			"reserved prop":           eventual.Upsert("Copies", store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{eventual.VersionProperty: int64(3)}}),
			"too large, no container": eventual.PutBlob("blobs", "b", make([]byte, 2<<20)),
		}
		for name, step := range cases {
			_, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
				if err := tx.Insert("row", store.Entity{RowKey: "r"}); err != nil {
					return err
				}
				return tx.Then(ctx, "r", step)
			})
			if !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("%s: %v, want InvalidInput", name, err)
			}
			if _, err := st.Table(src).Get(ctx, "p", "r", nil); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s: the source write happened: %v", name, err)
			}
		}
		if _, err := eventual.New(st, "Bad_Queue", nil); !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("a bad queue name: %v", err)
		}
	})
}

// scenario is one randomized run: writers changing K sources (upserts
// and deletes), each write propagating its copy, while the writer and the
// worker crash at a random request; then restarts until quiet.
type scenarioCounts struct {
	schedules, crashes, operations, lost, duplicated, stale, poisoned int
	points, detached                                                  map[string]int
}

func runScenario(t *testing.T, e eventualtest.Env, seed uint64, writes int) scenarioCounts {
	c := scenarioCounts{schedules: 1, points: map[string]int{}, detached: map[string]int{}}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0xe7e))
	cs := &eventualtest.CrashStore{Store: e.B.Store}
	src := e.B.NewTable(t, "src")
	dst := e.B.NewTable(t, "dst")
	o := opts(e, fmt.Sprintf("cr%d", seed))
	o.Concurrency = 1
	eng := eventualtest.NewEngine(t, cs, o)
	const sources = 4
	// Crash somewhere in the first few hundred requests.
	cs.ArmAt(int64(1 + r.IntN(8*writes)))
	restart := func() {
		var err error
		eng, err = o.New(cs) // a fresh process
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < writes; i++ {
		k := fmt.Sprintf("s%d", r.IntN(sources))
		remove := r.IntN(4) == 0
		name := fmt.Sprintf("v%d", i)
		// The write's message is queued after Write returned, on the
		// engine's goroutine: Flush waits for it, so that the crash
		// schedule counts it right after the commit, and a crash there
		// (the message not sent, or sent as the process died) restarts
		// the process as any other.
		crashed, died := cs.Survive(func() {
			_, _ = eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
				if remove {
					if err := tx.Delete("src", k, store.ETagAny); err != nil {
						return err
					}
					return tx.Then(ctx, k, eventual.Delete(dst, "copy", k))
				}
				if err := tx.Upsert("src", store.Entity{RowKey: k, Properties: map[string]any{"Name": name}}, store.Replace); err != nil {
					return err
				}
				return tx.Then(ctx, k, eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: k, Properties: map[string]any{"Name": name}}))
			})
			_ = eng.Flush(ctx)
		})
		c.operations++
		if crashed || died {
			c.crashes++
			restart()
		}
		// Now and then the worker runs, and may crash too.
		if r.IntN(3) == 0 {
			if eventualtest.Survive(func() { _, _ = eng.ProcessOnce(ctx) }) {
				c.crashes++
				restart()
			}
		}
	}
	// Quiesce, restarting after every crash still to come.
	for {
		if !eventualtest.Survive(func() { eventualtest.Drain(t, e, &eng, o, cs, src) }) {
			break
		}
		c.crashes++
		restart()
	}
	cs.Arm(0, false)
	cs.AddPoints(c.points)
	cs.AddDetachedPoints(c.detached)
	// Every source and its copy agree: same presence, same name, same
	// version; nothing poisoned.
	for i := range sources {
		k := fmt.Sprintf("s%d", i)
		s, serr := e.B.Store.Table(src).Get(ctx, "p", k, nil)
		d, derr := e.B.Store.Table(dst).Get(ctx, "copy", k, nil)
		switch {
		case serr == nil && errors.Is(derr, store.ErrNotFound):
			c.lost++
			t.Errorf("seed %d: source %s has no copy", seed, k)
		case errors.Is(serr, store.ErrNotFound) && derr == nil:
			c.duplicated++
			t.Errorf("seed %d: copy %s outlives its source", seed, k)
		case serr == nil && derr == nil:
			if d.Properties["Name"] != s.Properties["Name"] || d.Properties[eventual.VersionProperty] != s.Properties[eventual.VersionProperty] {
				c.stale++
				t.Errorf("seed %d: copy %s is %v@%v, source %v@%v", seed, k, d.Properties["Name"], d.Properties[eventual.VersionProperty],
					s.Properties["Name"], s.Properties[eventual.VersionProperty])
			}
		case serr != nil && !errors.Is(serr, store.ErrNotFound):
			t.Fatal(serr)
		}
	}
	if p, err := eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
		c.poisoned += len(p)
		t.Errorf("seed %d: poison queue holds %+v (%v)", seed, p, err)
	}
	return c
}

// TestCrashAtEveryStep: randomized seeded schedules in which the writer
// and the worker crash at a random request (before or after it reaches
// the store: between the source write and the queueing, before the
// message delete, mid-step), restart, and run to quiet. Every operation
// ends applied exactly once in effect: no source without its copy, no
// copy without its source, no copy older than its source, nothing in the
// poison queue.
func TestCrashAtEveryStep(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		schedules, writes := 300, 8
		if !e.Fake() {
			schedules, writes = 24, 5
		}
		if testing.Short() {
			schedules = min(schedules, 20)
		}
		total := scenarioCounts{points: map[string]int{}, detached: map[string]int{}}
		for seed := range schedules {
			c := runScenario(t, e, uint64(seed)+1, writes)
			for k, v := range c.points {
				total.points[k] += v
			}
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
		t.Logf("schedules %d, crashes injected %d, operations %d: lost %d, duplicated %d, stale %d, poisoned %d",
			total.schedules, total.crashes, total.operations, total.lost, total.duplicated, total.stale, total.poisoned)
		t.Logf("crash points %v; of them on the engine's goroutine, queueing a write's message: %v", total.points, total.detached)
		if total.crashes == 0 {
			t.Fatal("no crash was injected")
		}
		if e.Fake() {
			// The message queued after Write returned is crashed before
			// (never sent: the sweeper queues it from the outbox row) and
			// after (sent, the process gone).
			for _, p := range eventualtest.DetachedKeyPoints {
				if total.detached[p] == 0 {
					t.Errorf("no crash came %s on the engine's goroutine", p)
				}
			}
		}
	})
}

// TestConcurrentWritersAndWorkers: writers change sources while several
// workers drain at once; at the end every copy matches its source.
func TestConcurrentWritersAndWorkers(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src := e.B.NewTable(t, "csrc")
		dst := e.B.NewTable(t, "cdst")
		o := opts(e, "conc")
		// Four writers of one partition on purpose: on the fake clock their
		// pauses take no time, so a writer may lose the fence more often
		// than the default 8 attempts allow. The test is about the copies.
		o.WriteAttempts = 64
		eng := eventualtest.NewEngine(t, st, o)
		const writers, each, sources = 4, 10, 5
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					k := fmt.Sprintf("s%d", (w+i)%sources)
					name := fmt.Sprintf("w%d-%d", w, i)
					if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
						if err := tx.Upsert("src", store.Entity{RowKey: k, Properties: map[string]any{"Name": name}}, store.Replace); err != nil {
							return err
						}
						return tx.Then(ctx, k, eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: k, Properties: map[string]any{"Name": name}}))
					}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for range 3 {
			wg.Go(func() {
				for range 20 {
					if _, err := eng.ProcessOnce(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		eventualtest.Drain(t, e, &eng, o, st, src)
		for i := range sources {
			k := fmt.Sprintf("s%d", i)
			s, err := st.Table(src).Get(ctx, "p", k, nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := st.Table(dst).Get(ctx, "copy", k, nil)
			if err != nil || d.Properties["Name"] != s.Properties["Name"] || d.Properties[eventual.VersionProperty] != s.Properties[eventual.VersionProperty] {
				t.Fatalf("copy %s = %v, %v; source %v", k, d.Properties, err, s.Properties)
			}
		}
	})
}
