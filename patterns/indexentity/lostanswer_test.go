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

func (s *faultStore) Table(name string) store.Table {
	return &faultTable{Table: s.Store.Table(name), f: s.f}
}

type faultTable struct {
	store.Table
	f *faults
}

func (t *faultTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	tag, err := t.Table.Insert(ctx, e)
	if err == nil && t.f.raw() {
		return "", lost(nil)
	}
	return tag, err
}

func (t *faultTable) Update(ctx context.Context, e store.Entity, m store.UpdateMode, im store.ETag) (store.ETag, error) {
	tag, err := t.Table.Update(ctx, e, m, im)
	if err == nil && t.f.raw() {
		return "", lost(nil)
	}
	return tag, err
}

func (t *faultTable) Delete(ctx context.Context, pk, rk string, im store.ETag) error {
	err := t.Table.Delete(ctx, pk, rk, im)
	if err == nil && t.f.raw() {
		return lost(nil)
	}
	return err
}

func (t *faultTable) Transact(ctx context.Context, a []store.Action) ([]store.ActionResult, error) {
	r, err := t.Table.Transact(ctx, a)
	if err == nil && t.f.raw() {
		return nil, lost(nil)
	}
	return r, err
}

func (s *faultStore) Container(name string) store.Container {
	return &faultContainer{Container: s.Store.Container(name), f: s.f}
}

type faultContainer struct {
	store.Container
	f *faults
}

// lost is what a client sees when a blob write's answer does not come.
func lost(err error) error {
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "injected: the answer was lost", Err: err}
}

func (c *faultContainer) Put(ctx context.Context, n string, d []byte, o *store.BlobPutOptions) (store.BlobProps, error) {
	err := c.f.next(true)
	if err == nil {
		return c.Container.Put(ctx, n, d, o)
	}
	if errors.Unwrap(err) != nil { // applied, then lost
		_, _ = c.Container.Put(ctx, n, d, o)
	}
	return store.BlobProps{}, lost(err)
}

func (c *faultContainer) DeleteBlob(ctx context.Context, n string, im store.ETag) error {
	err := c.f.next(true)
	if err == nil {
		return c.Container.DeleteBlob(ctx, n, im)
	}
	if errors.Unwrap(err) != nil {
		_ = c.Container.DeleteBlob(ctx, n, im)
	}
	return lost(err)
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
