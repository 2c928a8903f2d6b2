package model_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/partition"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestMove moves an entity with every feature to another partition of
// its model, checking after every request the worker makes that the
// global lookups find it in exactly one place, then to an archive table
// declared with a log only, after which the model's lookups no longer
// find it and its unique value is free.
func TestMove(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		// Lookups run after every write request of the worker, through a
		// model of their own (on an engine nobody works).
		var checking atomic.Bool
		var checks, anomalies atomic.Int64
		var look *model.Model[Employee]
		var lookErr []string
		hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			err := do(ctx)
			if c.Write && checking.Load() {
				checking.Store(false)
				checks.Add(1)
				got, ferr := look.Find(ctx, "email", "ann@x.com")
				all, aerr := look.FindAll(ctx, "lastname", "Jones")
				if ferr != nil || aerr != nil || len(all) != 1 || got.ID != "m1" || all[0].Dept != got.Dept {
					anomalies.Add(1)
					lookErr = append(lookErr, fmt.Sprintf("after %s %s/%s: find %v %v, findall %d %v", c.Op, c.PartitionKey, c.RowKey, got, ferr, len(all), aerr))
				}
				checking.Store(true)
			}
			return err
		}
		f := newFixture(t, e, storetest.WrapStore(e.B.Store, hook), allFeatures)
		other, err := eventual.New(e.B.Store, "unused", nil)
		if err != nil {
			t.Fatal(err)
		}
		lo := f.mo
		lo.Engine = other
		if look, err = model.Define(e.B.Store, f.table, &lo, features(allFeatures)...); err != nil {
			t.Fatal(err)
		}
		ann := &Employee{Dept: "Sales", ID: "c1", Email: "ann@x.com", Badge: "b1", LastName: "Jones", Team: "red"}
		ann.ID = "m1"
		if err := f.m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		ann.N = 2
		if err := f.m.Update(ctx, ann, store.Merge); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if err := f.m.Move(ctx, "Sales", "m1", f.m, "Ops", "stale-etag"); !errors.Is(err, partition.ErrChanged) {
			t.Fatalf("move over a stale ETag: %v", err)
		}
		if err := f.m.Move(ctx, "Sales", "m1", f.m, "Ops", ""); err != nil {
			t.Fatal(err)
		}
		// In flight: read where it was; writes refused.
		if g, err := f.m.Get(ctx, "Sales", "m1"); err != nil || g.N != 2 {
			t.Fatalf("in flight, Get at the source: %+v %v", g, err)
		}
		if _, err := f.m.Get(ctx, "Ops", "m1"); !store.EntityNotFound(err) {
			t.Fatalf("in flight, Get at the destination: %v", err)
		}
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "m1", N: 3}, store.Merge); !errors.Is(err, model.ErrMoving) {
			t.Fatalf("update in flight: %v", err)
		}
		if err := f.m.Insert(ctx, &Employee{Dept: "Ops", ID: "m1"}); !errors.Is(err, model.ErrMoving) {
			t.Fatalf("insert over the reservation: %v", err)
		}
		checking.Store(true)
		f.drain(t)
		checking.Store(false)
		if anomalies.Load() > 0 {
			t.Fatalf("lookups during the move: %d anomalies in %d checks: %v", anomalies.Load(), checks.Load(), lookErr)
		}
		got, err := f.m.Get(ctx, "Ops", "m1")
		if err != nil || got.N != 2 || got.Email != "ann@x.com" {
			t.Fatalf("arrived: %+v %v", got, err)
		}
		if _, err := f.m.Get(ctx, "Sales", "m1"); !store.EntityNotFound(err) {
			t.Fatalf("the source after the move: %v", err)
		}
		if g, err := f.m.FindIn(ctx, "Ops", "badge", "b1"); err != nil || g.ID != "m1" {
			t.Fatalf("FindIn at the destination: %v %v", g, err)
		}
		if _, err := f.m.FindIn(ctx, "Sales", "badge", "b1"); !store.EntityNotFound(err) {
			t.Fatalf("FindIn at the source: %v", err)
		}
		log, err := f.m.Log(ctx, "Ops", "m1", 10)
		if err != nil || len(log) != 3 || log[0].Op != "move" || log[1].Op != "update" || log[2].Op != "insert" ||
			log[1].Version <= log[2].Version || log[1].Entity.N != 2 {
			t.Fatalf("log after the move: %+v %v", log, err)
		}
		if rep := f.verify(t); rep.bad() {
			t.Fatalf("after the move: %s", rep)
		}
		// An update at the destination, then archive it.
		got.N = 4
		if err := f.m.Update(ctx, got, store.Merge); err != nil {
			t.Fatal(err)
		}
		archTable := e.B.NewTable(t, "Archive")
		arch, err := model.Define(f.st, archTable, &model.Options{Engine: f.eng}, model.Log[Employee]())
		if err != nil {
			t.Fatal(err)
		}
		if err := f.m.Move(ctx, "Ops", "m1", arch, "2026", ""); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, f.e, &f.eng, f.o, f.e.B.Store, f.table, archTable)
		if g, err := arch.Get(ctx, "2026", "m1"); err != nil || g.N != 4 || g.Dept != "2026" {
			t.Fatalf("archived: %+v %v", g, err)
		}
		if l, err := arch.Log(ctx, "2026", "m1", 10); err != nil || len(l) != 5 || l[0].Op != "move" || l[1].Op != "update" {
			t.Fatalf("archived log: %+v %v", l, err)
		}
		if _, err := f.m.Find(ctx, "email", "ann@x.com"); !store.EntityNotFound(err) {
			t.Fatalf("the model still finds the archived entity: %v", err)
		}
		if all, err := f.m.FindAll(ctx, "lastname", "Jones"); err != nil || len(all) != 0 {
			t.Fatalf("the model still finds the archived entity by last name: %v %v", all, err)
		}
		if rep := f.verify(t); rep.bad() {
			t.Fatalf("after the archive (no copy left, no card holding its properties): %s", rep)
		}
		bob := &Employee{Dept: "Sales", ID: "m2", Email: "ann@x.com", LastName: "Jones"}
		if err := f.m.Insert(ctx, bob); err != nil {
			t.Fatalf("the archived entity's email is not free: %v", err)
		}
		t.Logf("%s: lookups after each of %d write requests of the move's worker: %d anomalies", e.B.Name, checks.Load(), anomalies.Load())
	})
}
