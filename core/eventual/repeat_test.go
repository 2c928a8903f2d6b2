package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestRepeatAfterCrashKeepsTheCopy: a worker runs an operation that
// upserts a copy and crashes at one of its requests, before or after the
// request reaches the store, every request in turn; the operation is not
// cleared. The source is then written by a later write that carries no
// step for the copy (it changes a property the copy does not hold), or is
// moved to another table by a write whose operation does not touch the
// copy. A restarted worker runs the first operation again. At every crash
// point the copy is there at the end, with the source's data: a repeat is
// harmless, as a run without the crash keeps the copy.
func TestRepeatAfterCrashKeepsTheCopy(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		for _, later := range []string{"update", "move"} {
			t.Run(later, func(t *testing.T) {
				t.Parallel() // tables and queues of their own: the two wait on the backend side by side
				var points, held, ops, lost, duplicated int
				for n := int64(1); ; n++ {
					crashed := 0
					for _, after := range []bool{false, true} {
						c, w, o, l, d := repeatAfterCrash(t, e, later, n, after)
						if !c {
							continue
						}
						crashed++
						points++
						if w {
							held++
						}
						ops += o
						lost += l
						duplicated += d
					}
					if crashed == 0 {
						break // the worker made fewer than n requests
					}
					if n > 100 {
						t.Fatal("the worker never finished without a crash")
					}
				}
				t.Logf("%s, later write %s: crash points %d (the copy written before the crash at %d), operations %d: lost %d, duplicated %d",
					e.B.Name, later, points, held, ops, lost, duplicated)
				if points < 8 {
					t.Fatalf("only %d crash points", points)
				}
			})
		}
	})
}

// repeatAfterCrash runs one crash point: the worker crashes at its n-th
// request (before or after it reaches the store), then the later write,
// then a restarted worker drains. It reports whether the crash came, how
// many operations were written, and whether the copy was lost or
// duplicated.
func repeatAfterCrash(t *testing.T, e eventualtest.Env, later string, n int64, after bool) (crashed, written bool, ops, lost, duplicated int) {
	t.Helper()
	ctx := context.Background()
	st := e.B.Store
	cs := &eventualtest.CrashStore{Store: st}
	src, dst, arch := e.B.NewTable(t, "rsrc"), e.B.NewTable(t, "rdst"), e.B.NewTable(t, "rarc")
	o := opts(e, fmt.Sprintf("rep%s%d%v", later, n, after))
	o.Concurrency = 1
	eng := eventualtest.NewEngine(t, cs, o)
	const pk, rk = "Sales", "000123"
	copyOf := func(name string) store.Entity {
		return store.Entity{PartitionKey: "copy", RowKey: rk, Properties: map[string]any{"Name": name}}
	}
	if _, err := eng.Write(ctx, src, pk, func(tx *eventual.Tx) error {
		if err := tx.Insert("src", store.Entity{RowKey: rk, Properties: map[string]any{"Name": "Don Hall", "Note": "x"}}); err != nil {
			return err
		}
		return tx.Then(ctx, rk, eventual.Upsert(dst, copyOf("Don Hall")))
	}); err != nil {
		t.Fatal(err)
	}
	ops++
	// The crash counts the worker's requests: the write's message is
	// queued before them.
	if err := eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cs.Arm(n, after)
	crashed = eventualtest.Survive(func() { _, _ = eng.ProcessOnce(ctx) })
	cs.Arm(0, false)
	_, gerr := st.Table(dst).Get(ctx, "copy", rk, nil)
	written = gerr == nil // the worker wrote the copy before it crashed
	restart := func() {
		var err error
		if eng, err = o.New(cs); err != nil {
			t.Fatal(err)
		}
	}
	restart()
	if _, err := eng.Write(ctx, src, pk, func(tx *eventual.Tx) error {
		if later == "update" {
			return tx.Update("src", store.Entity{RowKey: rk, Properties: map[string]any{"Name": "Don Hall", "Note": "y"}}, store.Replace, store.ETagAny)
		}
		if err := tx.Delete("src", rk, store.ETagAny); err != nil {
			return err
		}
		return tx.Then(ctx, rk, eventual.Upsert(arch, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"Name": "Don Hall", "Note": "x"}}))
	}); err != nil {
		t.Fatal(err)
	}
	if later == "move" {
		ops++
	}
	eventualtest.Drain(t, e, &eng, o, cs, src)

	where := fmt.Sprintf("%s: crash %s request %d of the worker (%v)", later, map[bool]string{false: "before", true: "after"}[after], n, cs.Points())
	rows := func(table string) []store.Entity {
		var out []store.Entity
		for e, err := range store.All(ctx, st.Table(table), store.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	copies := rows(dst)
	switch {
	case later == "move" && !written:
		// The worker crashed before its copy reached the store, and the
		// source was gone when the operation ran again: as for any
		// operation that runs after its source was deleted, no copy is
		// created (a later delete may have run its step already).
		if len(copies) != 0 {
			duplicated++
			t.Errorf("%s: an operation that ran after its source was gone created %v", where, copies)
		}
	case len(copies) == 0:
		lost++
		t.Errorf("%s: the copy is lost", where)
	case len(copies) > 1:
		duplicated++
		t.Errorf("%s: %d copies", where, len(copies))
	case copies[0].Properties["Name"] != "Don Hall":
		lost++
		t.Errorf("%s: the copy holds %v", where, copies[0].Properties)
	}
	if later == "move" {
		if a := rows(arch); len(a) != 1 || a[0].Properties["Note"] != "x" {
			t.Errorf("%s: the archive holds %v", where, a)
		}
		if _, err := st.Table(src).Get(ctx, pk, rk, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: the source is still there: %v", where, err)
		}
	} else if s, err := st.Table(src).Get(ctx, pk, rk, nil); err != nil || s.Properties["Note"] != "y" {
		t.Errorf("%s: the source is %v, %v", where, s.Properties, err)
	}
	if p, err := eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
		t.Errorf("%s: poisoned %+v, %v", where, p, err)
	}
	return crashed, written, ops, lost, duplicated
}

// TestRepeatAfterFaultKeepsTheCopy is TestRepeatAfterCrashKeepsTheCopy
// with faults instead of crashes, on memstore: each table request of the
// worker in turn fails (throttled, lost answer before or after the write
// applied, internal error). A fault on a step's request is retried within
// the receive; one on the outbox row's removal sends the message back
// with the operation done but not cleared. The later write of the source
// carries no step for the copy, and the operation's repeat keeps it.
func TestRepeatAfterFaultKeepsTheCopy(t *testing.T) {
	faults := map[string]func() error{
		"busy":                   memstore.ServerBusy,
		"lost answer":            memstore.ResponseLost,
		"lost answer, applied":   func() error { return memstore.AfterApply(memstore.ResponseLost()) },
		"internal error":         memstore.InternalError,
		"internal error applied": func() error { return memstore.AfterApply(memstore.InternalError()) },
	}
	var points, ops, lost, duplicated int
	for name, fault := range faults {
		for n := int64(1); ; n++ {
			var calls, hit atomic.Int64
			armed := atomic.Bool{}
			e := eventualtest.MemEnv(memstore.WithFaults(func(op memstore.Operation, table string) error {
				if !armed.Load() || calls.Add(1) != n {
					return nil
				}
				hit.Add(1)
				return fault()
			}))
			ctx := context.Background()
			st := e.B.Store
			src, dst := e.B.NewTable(t, "fsrc"), e.B.NewTable(t, "fdst")
			o := opts(e, "fault")
			o.Concurrency = 1
			eng := eventualtest.NewEngine(t, st, o)
			const pk, rk = "Sales", "000123"
			if _, err := eng.Write(ctx, src, pk, func(tx *eventual.Tx) error {
				if err := tx.Insert("src", store.Entity{RowKey: rk, Properties: map[string]any{"Name": "Don Hall", "Note": "x"}}); err != nil {
					return err
				}
				return tx.Then(ctx, rk, eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: rk, Properties: map[string]any{"Name": "Don Hall"}}))
			}); err != nil {
				t.Fatal(err)
			}
			armed.Store(true)
			if _, err := eng.ProcessOnce(ctx); err != nil {
				t.Fatal(err)
			}
			armed.Store(false)
			if hit.Load() == 0 {
				break // the worker made fewer than n table requests
			}
			points++
			ops++
			if _, err := eng.Write(ctx, src, pk, func(tx *eventual.Tx) error {
				return tx.Update("src", store.Entity{RowKey: rk, Properties: map[string]any{"Name": "Don Hall", "Note": "y"}}, store.Replace, store.ETagAny)
			}); err != nil {
				t.Fatal(err)
			}
			eventualtest.Drain(t, e, &eng, o, st, src)
			var copies []store.Entity
			for c, err := range store.All(ctx, st.Table(dst), store.Query{}) {
				if err != nil {
					t.Fatal(err)
				}
				copies = append(copies, c)
			}
			switch {
			case len(copies) == 0 || copies[0].Properties["Name"] != "Don Hall":
				lost++
				t.Errorf("%s at table request %d of the worker: the copy is lost (%v)", name, n, copies)
			case len(copies) > 1:
				duplicated++
				t.Errorf("%s at table request %d of the worker: %d copies", name, n, len(copies))
			}
		}
	}
	t.Logf("memstore faults: fault points %d, operations %d: lost %d, duplicated %d", points, ops, lost, duplicated)
	if points < 20 {
		t.Fatalf("only %d fault points", points)
	}
}
