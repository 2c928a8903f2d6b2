package model_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
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

// TestMoveCrashAtEveryRequest is TestCrashAtEveryRequest with moves
// between the two partitions among the writes: the writer and the worker
// crash at a random request, before or after it reaches the store, and
// restart; after the drain every entity holds one of the states its
// writes and moves may have left, and every copy, card and log agrees.
func TestMoveCrashAtEveryRequest(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		schedules, writes := 40, 24
		if !e.Fake() {
			schedules, writes = 4, 12
		}
		points, detached := map[string]int{}, map[string]int{}
		var crashes, operations, moves, moved, refused, lost, dup, older int
		for seed := uint64(1); seed <= uint64(schedules); seed++ {
			ctx := context.Background()
			r := rand.New(rand.NewPCG(seed, 0x3e))
			cs := &eventualtest.CrashStore{Store: e.B.Store}
			f := newFixture(t, e, cs, allFeatures)
			f.o.Concurrency = 1
			f.restart(t)
			arm := func() { cs.Arm(int64(1+r.IntN(40)), r.IntN(2) == 0) }
			arm()
			c := cands{}
			for i := 0; i < writes; i++ {
				kind, v := nextWrite(r, "c", i)
				v.Badge = "b-" + v.ID // unique in a partition, and free where it moves
				if r.IntN(4) == 0 {
					// Move an entity that surely exists, when there is one.
					var sure []string
					for key, list := range c {
						if len(list) == 1 && list[0] != nil {
							sure = append(sure, key)
						}
					}
					sort.Strings(sure)
					if len(sure) > 0 {
						kind = "move"
						v.Dept, v.ID, _ = strings.Cut(sure[r.IntN(len(sure))], "/")
					}
				}
				k := v.Dept + "/" + v.ID
				to := map[string]string{"Sales": "Ops", "Ops": "Sales"}[v.Dept]
				kt := to + "/" + v.ID
				var err error
				// Flush: the write's message, queued after it returned,
				// comes next in the crash schedule; a crash there (died)
				// leaves the write done, and the process restarts.
				crashed, died := cs.Survive(func() {
					if kind == "move" {
						err = f.m.Move(ctx, v.Dept, v.ID, f.m, to, "")
					} else {
						err = apply(ctx, f, kind, &v)
					}
					_ = f.eng.Flush(ctx)
				})
				operations++
				var state *Employee
				if kind != "delete" {
					s := v
					s.ETag = ""
					state = &s
				}
				if kind == "move" {
					moves++
					var arrived []*Employee
					for _, w := range c[k] {
						if w != nil {
							a := *w
							a.Dept = to
							arrived = append(arrived, &a)
						}
					}
					switch {
					case crashed:
						crashes++
						if _, ok := c[kt]; !ok {
							c[kt] = []*Employee{nil}
						}
						c[kt] = append(c[kt], arrived...)
						c.maybe(k, nil)
						f.restart(t)
						arm()
					case errors.Is(err, partition.ErrDuplicate), errors.Is(err, partition.ErrChanged), errors.Is(err, model.ErrMoving):
						refused++
					case err != nil:
						t.Fatalf("seed %d: move %s: %v", seed, k, err)
					default:
						moved++
						c[kt] = arrived
						c.set(k, nil)
					}
				} else {
					switch {
					case crashed:
						crashes++
						if _, ok := c[k]; !ok {
							c[k] = []*Employee{nil}
						}
						c.maybe(k, state)
						f.restart(t)
						arm()
					case errors.Is(err, partition.ErrDuplicate), errors.Is(err, partition.ErrChanged), errors.Is(err, model.ErrMoving):
						refused++
					case err != nil:
						t.Fatalf("seed %d: %s %s: %v", seed, kind, k, err)
					default:
						c.set(k, state)
					}
				}
				if died && !crashed {
					crashes++
					f.restart(t)
					arm()
				}
				if r.IntN(3) == 0 {
					if eventualtest.Survive(func() { _, _ = f.eng.ProcessOnce(ctx) }) {
						crashes++
						f.restart(t)
						arm()
					}
				}
				if e.Fake() && r.IntN(6) == 0 {
					e.Pass(2 * time.Minute) // claims and reservations left by crashes expire
				}
			}
			cs.Arm(0, false)
			f.drain(t)
			cs.AddPoints(points)
			cs.AddDetachedPoints(detached)
			rep := f.verify(t)
			l := c.check(t, f)
			if rep.bad() || len(l) > 0 {
				t.Fatalf("seed %d: %s; entities not as written: %v", seed, rep, l)
			}
			lost += len(rep.lost) + len(l)
			dup += len(rep.duplicated)
			older += len(rep.older)
		}
		t.Logf("%s: schedules %d, crashes injected %d at %d crash points (queueing a write's message on the engine's goroutine: %v), operations %d (moves %d, of which %d answered success; refused %d): lost %d, duplicated %d, older-over-newer %d",
			e.B.Name, schedules, crashes, len(points), detached, operations, moves, moved, refused, lost, dup, older)
		if e.Fake() {
			for _, p := range eventualtest.DetachedKeyPoints {
				if detached[p] == 0 {
					t.Errorf("no crash came %s on the engine's goroutine (a write's message)", p)
				}
			}
		}
	})
}
