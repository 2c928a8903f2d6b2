package indexentity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// faults is a seeded schedule of memstore faults: while on, a write
// fails now and then with an answer lost after it applied, an internal
// error after it applied, or an internal error before (the client cannot
// tell these apart), and a read with an internal error; the blob
// container, which memstore does not fault, gets the same through
// faultContainer.
type faults struct {
	mu       sync.Mutex
	r        *rand.Rand
	on       atomic.Bool
	injected atomic.Int64
}

func (f *faults) next(write bool) error {
	if !f.on.Load() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.r.IntN(100)
	if !write {
		if n < 3 {
			f.injected.Add(1)
			return memstore.InternalError()
		}
		return nil
	}
	switch {
	case n < 8:
		f.injected.Add(1)
		return memstore.AfterApply(memstore.ResponseLost())
	case n < 12:
		f.injected.Add(1)
		return memstore.AfterApply(memstore.InternalError())
	case n < 16:
		f.injected.Add(1)
		return memstore.InternalError()
	}
	return nil
}

func (f *faults) memstore(op memstore.Operation, _ string) error {
	switch op {
	case memstore.OpInsert, memstore.OpUpdate, memstore.OpUpsert, memstore.OpDelete, memstore.OpTransact:
		return f.next(true)
	case memstore.OpGet, memstore.OpQuery:
		return f.next(false)
	}
	return nil
}

// raw draws whether a table write's answer is lost on the client's side,
// after memstore applied and answered it: the caller then gets an unknown
// outcome that no backend resolved for it.
func (f *faults) raw() bool {
	if !f.on.Load() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.r.IntN(100) < 5 {
		f.injected.Add(1)
		return true
	}
	return false
}

// faultStore gives its containers the schedule's faults, and its tables
// answers lost after they arrived.
type faultStore struct {
	store.Store
	f *faults
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (s *faultStore) Table(name string) store.Table {
	return storetest.WrapTable(s.Store.Table(name), s.hook)
}

// Container wraps the container.
func (s *faultStore) Container(name string) store.Container {
	return storetest.WrapContainer(s.Store.Container(name), s.hook)
}

// hook loses the answer of some of the table's inserts, updates, deletes
// and transactions (in either lane) after they arrived, and meets the
// container's puts and deletes with the schedule's faults.
func (s *faultStore) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	switch c.EntityOp() {
	case "Table.Insert", "Table.Update", "Table.Delete", "Table.Transact":
		err := do(ctx)
		if err == nil && s.f.raw() {
			return lost(nil)
		}
		return err
	case "Container.Put", "Container.DeleteBlob":
		err := s.f.next(true)
		if err == nil {
			return do(ctx)
		}
		if errors.Unwrap(err) != nil { // applied, then lost
			_ = do(ctx)
		}
		return lost(err)
	}
	return do(ctx)
}

// lost is what a client sees when a blob write's answer does not come.
func lost(err error) error {
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "injected: the answer was lost", Err: err}
}

// TestLostAnswersNeverLoseOrDuplicate: a writer inserts, moves and deletes
// employees while about one write in five fails with a lost answer or an
// internal error (applied or not: the client cannot tell; some resolved
// by memstore's read-back, some handed to the package unresolved) and
// some reads fail, on every placement, and the engine's steps run under
// the same faults. Every write's result is checked against the stored entity as
// soon as it returns: success means applied, a failure that is not
// ErrUnknownOutcome means not applied, an unknown outcome may be either.
// At the end every list matches the entities: no id lost, none listed
// twice or under a wrong name.
func TestLostAnswersNeverLoseOrDuplicate(t *testing.T) {
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			var total struct{ runs, writes, unknown, refused, faults int }
			runs := 12
			if testing.Short() {
				runs = 4
			}
			for seed := range runs {
				fs := &faults{r: rand.New(rand.NewPCG(uint64(seed), 77))}
				e := eventualtest.MemEnv(memstore.WithFaults(fs.memstore))
				b := e.B
				f := newFixture(t, e, p, Options{Attempts: 32}, &faultStore{Store: b.Store, f: fs})
				ctx := t.Context()
				r := rand.New(rand.NewPCG(uint64(seed), 78))
				names := []string{"Jones", "Smith", ""}
				truth := func(rk string) *Employee {
					fs.on.Store(false)
					defer fs.on.Store(true)
					v, err := f.x.Get(ctx, "Sales", rk)
					if errors.Is(err, store.ErrNotFound) {
						return nil
					}
					must(t, err)
					return &v
				}
				fs.on.Store(true)
				for i := range 40 {
					rk := idOf(r.IntN(6))
					before := truth(rk)
					var want *Employee // the entity if the write applies
					var err error
					switch {
					case before == nil:
						v := Employee{Dept: "Sales", ID: rk, Last: names[r.IntN(len(names))]}
						want = &v
						err = f.x.Insert(ctx, &v)
					case r.IntN(3) == 0:
						err = f.x.Delete(ctx, before)
					default:
						v := *before
						v.Last = names[r.IntN(len(names))]
						v.First = fmt.Sprint(i)
						want = &v
						err = f.x.Update(ctx, &v)
					}
					total.writes++
					after := truth(rk)
					same := func(a, b *Employee) bool {
						return (a == nil) == (b == nil) && (a == nil || (a.Last == b.Last && a.First == b.First))
					}
					switch {
					case err == nil:
						if !same(after, want) {
							t.Fatalf("seed %d write %d: reported done, stored %+v, want %+v", seed, i, after, want)
						}
					case errors.Is(err, store.ErrUnknownOutcome):
						total.unknown++
						if !same(after, want) && !same(after, before) {
							t.Fatalf("seed %d write %d: unknown outcome, stored %+v", seed, i, after)
						}
					default:
						total.refused++
						if !same(after, before) {
							t.Fatalf("seed %d write %d: reported failed (%v), but stored %+v over %+v", seed, i, err, after, before)
						}
					}
				}
				f.tolerate = true
				f.drain(t) // the steps run under the faults too
				fs.on.Store(false)
				f.tolerate = false
				f.drain(t)
				if c := f.check(t); c.lost+c.duplicated+c.stale != 0 {
					t.Fatalf("seed %d: %v", seed, c)
				}
				total.runs++
				total.faults += int(fs.injected.Load())
			}
			t.Logf("runs %d, faults %d, writes %d (%d unknown, %d failed and not applied): lost 0, duplicated 0, stale 0",
				total.runs, total.faults, total.writes, total.unknown, total.refused)
			if total.faults == 0 {
				t.Fatal("no fault was injected")
			}
		})
	}
}
