package indexentity

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// hookStore runs hook once, at the first read of a list's index entity or
// blob made while it is armed: the moment a step has read the entity and
// not yet its list.
type hookStore struct {
	store.Store
	armed atomic.Bool
	hook  func()
}

func (h *hookStore) fire() {
	if h.armed.CompareAndSwap(true, false) {
		h.hook()
	}
}

// Table wraps the fixture's index tables with storetest's kit, which
// keeps their typed lane.
func (h *hookStore) Table(name string) store.Table {
	t := h.Store.Table(name)
	if !strings.HasPrefix(name, "lists") { // the fixture's index tables
		return t
	}
	return storetest.WrapTable(t, h.intercept)
}

// Container wraps the container.
func (h *hookStore) Container(name string) store.Container {
	return storetest.WrapContainer(h.Store.Container(name), h.intercept)
}

// intercept fires before a query (in either lane) or a blob read.
func (h *hookStore) intercept(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	switch c.EntityOp() {
	case "Table.Query", "Container.Get":
		h.fire()
	}
	return do(ctx)
}

// TestStepRacesNeverGoBackwards sets up, step by step, the two races a
// list step can meet, on both eventual placements:
//
//   - a delete's step reads the entity (gone), then the entity is
//     inserted again and that insert's step lists it, then the delete's
//     step reaches the list: the version guard keeps the newer entry
//     (without it the id would be dropped for good);
//   - an insert's step reads the entity, then the entity moves to another
//     name and that move's step runs (finding nothing to remove), then the
//     insert's step lists the id under the old name: reading the entity
//     again after the write shows it moved, and the step starts over and
//     takes the id out (without it the id would stay listed under a name
//     it no longer has).
func TestStepRacesNeverGoBackwards(t *testing.T) {
	for _, p := range []Placement{SeparatePartition, InBlobs} {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				hs := &hookStore{Store: e.B.Store}
				f := newFixture(t, e, p, Options{}, hs)
				process := func() {
					t.Helper()
					if _, err := f.eng.ProcessOnce(ctx); err != nil {
						t.Fatal(err)
					}
				}
				keysOf := func(name string) []Key {
					t.Helper()
					ks, err := f.x.Keys(ctx, "", "lastname", name)
					must(t, err)
					return ks
				}
				ann := Key{PartitionKey: "Sales", RowKey: idOf(1)}

				// Race 1: a late delete step meets a newer insert.
				v := Employee{Dept: "Sales", ID: idOf(1), Last: "Jones"}
				must(t, f.x.Insert(ctx, &v))
				f.drain(t)
				must(t, f.x.Delete(ctx, &v))
				hs.hook = func() {
					again := Employee{Dept: "Sales", ID: idOf(1), Last: "Jones"}
					must(t, f.x.Insert(ctx, &again))
					process() // the insert's step lists the id again
				}
				hs.armed.Store(true)
				process() // the delete's step, with the insert in the middle
				if hs.armed.Load() {
					t.Fatal("the hook never ran")
				}
				f.drain(t)
				if got := keysOf("Jones"); !slices.Equal(got, []Key{ann}) {
					t.Fatalf("after the late delete step: Jones lists %v, want %v", got, []Key{ann})
				}

				// Race 2: an insert's step lists an id whose entity just moved.
				bo := Employee{Dept: "Sales", ID: idOf(2), Last: "Brown"}
				must(t, f.x.Insert(ctx, &bo))
				hs.hook = func() {
					moved, err := f.x.Get(ctx, "Sales", idOf(2))
					must(t, err)
					moved.Last = "Smith"
					must(t, f.x.Update(ctx, &moved))
					process() // the move's step: nothing to remove yet, lists Smith
				}
				hs.armed.Store(true)
				process() // the insert's step, with the move in the middle
				if hs.armed.Load() {
					t.Fatal("the hook never ran")
				}
				f.drain(t)
				if got := keysOf("Brown"); len(got) != 0 {
					t.Fatalf("Brown lists %v after Bo became a Smith", got)
				}
				if got := keysOf("Smith"); !slices.Equal(got, []Key{{PartitionKey: "Sales", RowKey: idOf(2)}}) {
					t.Fatalf("Smith lists %v", got)
				}
				if c := f.check(t); c.lost+c.duplicated+c.stale != 0 {
					t.Fatalf("check: %v", c)
				}
			})
		})
	}
}

// TestLateAndDuplicateStepsNeverGoBack: the steps of a run of writes
// (inserts, moves between names, deletes, inserts again), replayed late,
// twice and in random orders after the last write, leave every list as
// the entities are: a step brings a list to the entity's current state,
// never to the state of its own write.
func TestLateAndDuplicateStepsNeverGoBack(t *testing.T) {
	for _, p := range []Placement{SeparatePartition, InBlobs} {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				f := newFixture(t, e, p, Options{}, nil)
				names := []string{"Jones", "Smith", "", "Brown"}
				type op struct {
					version int64
					data    []byte
					rk      string
				}
				var ops []op
				r := rand.New(rand.NewPCG(3, 4))
				record := func(rk string, old, nu string) {
					cur, err := getCur(ctx, e.B.Store.Table(f.table), "Sales", rk)
					must(t, err)
					var v int64
					if cur != nil {
						v = eventual.VersionOf(cur)
					}
					data, _ := json.Marshal([]change{{List: "lastname", Old: old, New: nu}})
					ops = append(ops, op{version: v, data: data, rk: rk})
				}
				for i := range 3 {
					rk := idOf(i)
					last := ""
					for range 6 {
						cur, err := f.x.Get(ctx, "Sales", rk)
						switch {
						case err != nil: // gone: insert again
							nu := names[r.IntN(len(names))]
							must(t, f.x.Insert(ctx, &Employee{Dept: "Sales", ID: rk, Last: nu}))
							record(rk, "", nu)
							last = nu
						case r.IntN(4) == 0:
							must(t, f.x.Delete(ctx, &cur))
							record(rk, last, "")
							// The entity is gone, so record read no version:
							// 0 makes the replayed removals the most careful.
							last = ""
						default:
							cur.Last = names[r.IntN(len(names))]
							must(t, f.x.Update(ctx, &cur))
							record(rk, last, cur.Last)
							last = cur.Last
						}
					}
				}
				f.drain(t)
				want := f.check(t)
				if want.lost+want.duplicated+want.stale != 0 {
					t.Fatalf("check after the writes: %v", want)
				}
				// Replay every step twice, in random orders, late.
				for round := range 2 {
					r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
					for _, o := range ops {
						err := f.x.step(ctx, eventual.Operation{Source: &eventual.Ref{Table: f.table, PartitionKey: "Sales", RowKey: o.rk}, Version: o.version},
							eventual.Custom(f.x.handler, f.table, store.Entity{}, o.data))
						if err != nil {
							t.Fatalf("round %d: %v", round, err)
						}
					}
					if c := f.check(t); c.lost+c.duplicated+c.stale != 0 || c.listed != want.listed {
						t.Fatalf("after replaying %d steps (round %d): %v, want %v", len(ops), round, c, want)
					}
				}
				t.Logf("%d steps replayed twice in random orders: %v", len(ops), want)
			})
		})
	}
}
