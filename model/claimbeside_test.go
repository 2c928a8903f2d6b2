package model_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// together is a hook that, once armed, holds the first transaction and
// the first claim insert (an insert into an index partition, "x ...")
// until both reached it, so a claim sent beside its transaction passes and
// one sent before or after it does not (the first waits in vain, up to
// patience, and the test fails on apart).
type together struct {
	armed    atomic.Bool
	mu       sync.Mutex
	arrived  map[string]chan struct{}
	apart    atomic.Bool
	patience time.Duration
}

func newTogether() *together {
	return &together{arrived: map[string]chan struct{}{"Table.Transact": make(chan struct{}), "claim": make(chan struct{})},
		patience: 20 * time.Second}
}

func (g *together) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	kind := c.EntityOp()
	if kind == "Table.Insert" && strings.HasPrefix(c.PartitionKey, "x ") {
		kind = "claim"
	}
	other := map[string]string{"Table.Transact": "claim", "claim": "Table.Transact"}[kind]
	if !g.armed.Load() || other == "" {
		return do(ctx)
	}
	g.mu.Lock()
	mine := g.arrived[kind]
	select {
	case <-mine:
		mine = nil // not the first of its kind
	default:
		close(mine)
	}
	g.mu.Unlock()
	if mine != nil {
		select {
		case <-g.arrived[other]:
		case <-time.After(g.patience):
			g.apart.Store(true)
		}
	}
	return do(ctx)
}

// TestInsertClaimsBesideItsTransaction: an insert of an entity with a
// unique index in its partition, a global index and a copy in another
// table sends two requests, together: its transaction and the claim of
// its global value (a blind insert, no read first); then the message,
// after the call returned. With a global unique index instead, the claim
// (one insert, no read) comes before the transaction, which it decides.
func TestInsertClaimsBesideItsTransaction(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		for _, tc := range []struct {
			names  []string
			beside bool
		}{
			{[]string{fUnique, fGIndex, fCopy}, true},
			{[]string{fUnique, fGUnique, fCopy}, false},
		} {
			cnt := &counter{}
			g := newTogether()
			if !tc.beside {
				g.patience = 0
			}
			st := storetest.WrapStore(storetest.WrapStore(e.B.Store, g.hook), cnt.hook)
			f := newFixture(t, e, st, tc.names)
			// The first write of a partition reads its fence; the engine
			// keeps it.
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "zed", Badge: "b0", Email: "z@x", LastName: "Z"}); err != nil {
				t.Fatal(err)
			}
			if err := f.eng.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			cnt.take()
			g.armed.Store(true)
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", Email: "a@x", LastName: "Jones"}); err != nil {
				t.Fatal(err)
			}
			if err := f.eng.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			got, n := cnt.take()
			if n != 3 || got["Table.Transact"] != 1 || got["Table.Insert"] != 1 || got["Queue.Put"] != 1 {
				t.Errorf("%v: an insert sent %v; want its transaction, one claim insert and the message", tc.names, got)
			}
			if tc.beside && g.apart.Load() {
				t.Errorf("%v: the claim and the transaction were sent one after the other", tc.names)
			}
			if !tc.beside && !g.apart.Load() {
				t.Errorf("%v: the claim of a unique value was sent beside the transaction it decides", tc.names)
			}
			f.drain(t)
			if r := f.verify(t); r.bad() {
				t.Fatalf("%v: %v", tc.names, r)
			}
		}
	})
}

// TestGlobalValueTakenBackBesideItsOldCopysRemoval: Ann's last name goes
// from Jones to Smith (the removal of her Jones copy is queued) and back
// to Jones. The claim of Jones, sent beside that update's transaction,
// finds her old copy and stamps it; the stamp is held until the
// transaction committed and the worker ran the removal, which finds an
// unstamped copy and deletes it. The stamp then fails, and the claim
// must insert the row again: when the update returns, FindAll finds Ann
// under Jones before the worker ran its operation.
func TestGlobalValueTakenBackBesideItsOldCopysRemoval(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		var armed atomic.Pointer[func()]
		committed := make(chan struct{})
		var commitOnce sync.Once
		var waitCommit atomic.Bool
		hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			if c.EntityOp() == "Table.Update" && c.Action.Kind == store.ActionUpdateMerge {
				if ent, err := c.Entity(); err == nil && ent.Properties[model.ClaimProperty] != nil {
					if h := armed.Swap(nil); h != nil {
						(*h)()
					}
				}
			}
			err := do(ctx)
			if c.Op == "Table.Transact" && waitCommit.Load() && err == nil {
				commitOnce.Do(func() { close(committed) })
			}
			return err
		}
		f := newFixture(t, e, storetest.WrapStore(e.B.Store, hook), []string{fGIndex})
		f.o.Concurrency = 1 // one operation at a time, in queue order
		f.restart(t)
		ann := &Employee{Dept: "Sales", ID: "ann", LastName: "Jones"}
		if err := f.m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		ann.LastName = "Smith"
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		if err := f.eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		jones := mustJoin("x", "lastname", "Jones")
		row := mustJoin(f.table, "Sales", "ann")
		ran := false
		waitCommit.Store(true)
		stamp := func() {
			ran = true
			select {
			case <-committed:
			case <-time.After(20 * time.Second):
				t.Error("the claim stamped the old copy before the transaction committed")
				return
			}
			// The removal of the Jones copy, queued by the first update.
			if n, err := f.eng.ProcessOnce(ctx); err != nil || n != 1 {
				t.Errorf("worker: %d operations, %v", n, err)
			}
			if _, err := f.raw().Table(f.table).Get(ctx, jones, row, nil); !store.EntityNotFound(err) {
				t.Errorf("the removal left the old copy (%v): the race did not happen", err)
			}
		}
		armed.Store(&stamp)
		ann.LastName = "Jones"
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		if !ran {
			t.Fatal("the claim never stamped the old copy")
		}
		all, err := f.m.FindAll(ctx, "lastname", "Jones")
		if err != nil || len(all) != 1 || all[0].ID != "ann" {
			t.Fatalf("FindAll Jones right after the update: %v, %v; want Ann", all, err)
		}
		f.drain(t)
		if all, err := f.m.FindAll(ctx, "lastname", "Jones"); err != nil || len(all) != 1 {
			t.Fatalf("FindAll Jones after the drain: %v, %v", all, err)
		}
		if r := f.verify(t); r.bad() || r.entities != 1 {
			t.Fatalf("verify: %v", r)
		}
	})
}

// TestClaimBesideAFailedSendingIsMadeAgain: the claim sent beside an
// insert's transaction is refused (the service busy) while the
// transaction commits. The insert is done and says so, and makes the
// claim again: FindAll finds the entity before the worker ran.
func TestClaimBesideAFailedSendingIsMadeAgain(t *testing.T) {
	var busy atomic.Bool
	var refused atomic.Int64
	e := eventualtest.MemEnv(memstore.WithFaults(func(op memstore.Operation, table string) error {
		if op == memstore.OpInsert && busy.CompareAndSwap(true, false) {
			refused.Add(1)
			return memstore.ServerBusy()
		}
		return nil
	}))
	f := newFixture(t, e, nil, []string{fGIndex})
	ctx := context.Background()
	if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "zed", LastName: "Z"}); err != nil {
		t.Fatal(err)
	}
	busy.Store(true) // the transaction is not an OpInsert: the claim alone is refused
	ann := &Employee{Dept: "Sales", ID: "ann", LastName: "Jones"}
	if err := f.m.Insert(ctx, ann); err != nil {
		t.Fatalf("insert whose transaction committed: %v", err)
	}
	if refused.Load() != 1 {
		t.Fatal("the claim was not refused")
	}
	if all, err := f.m.FindAll(ctx, "lastname", "Jones"); err != nil || len(all) != 1 || all[0].ID != "ann" {
		t.Fatalf("FindAll Jones right after the insert: %v, %v; want Ann", all, err)
	}
	f.drain(t)
	if r := f.verify(t); r.bad() || r.entities != 2 {
		t.Fatalf("verify: %v", r)
	}
}
