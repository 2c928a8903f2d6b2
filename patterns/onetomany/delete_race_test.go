package onetomany_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/onetomany"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// stepped wraps a store so that a test can act just before each
// transaction sent through its tables (the tables keep their typed lane).
func stepped(st store.Store, before func(actions []store.Action)) store.Store {
	return storetest.WrapStore(st, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.Op == "Table.Transact" {
			before(c.Actions)
		}
		return do(ctx)
	})
}

// deletes reports whether a transaction deletes rows: a step of Delete
// (no other write of these tests deletes).
func deletes(actions []store.Action) bool {
	for _, a := range actions {
		if a.Kind == store.ActionDelete {
			return true
		}
	}
	return false
}

// faultSchedule hands memstore one armed fault, for the next transaction.
type faultSchedule struct {
	mu    sync.Mutex
	armed error
}

func (f *faultSchedule) arm(err error) {
	f.mu.Lock()
	f.armed = err
	f.mu.Unlock()
}

func (f *faultSchedule) fault(op memstore.Operation, _ string) error {
	if op != memstore.OpTransact {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.armed
	f.armed = nil
	return err
}

// bigFamily inserts a parent and n children, and returns the parent with
// its current ETag.
func bigFamily(t *testing.T, f *onetomany.Table[Employee, Review], id string, n int) *Employee {
	t.Helper()
	emp := &Employee{Department: "Sales", ID: id, Name: "Many"}
	if err := f.Insert(t.Context(), emp); err != nil {
		t.Fatal(err)
	}
	for start := 0; start < n; start += 50 {
		var ys []int
		for y := start; y < min(n, start+50); y++ {
			ys = append(ys, y)
		}
		if err := f.Add(t.Context(), emp, reviews(id, ys...)...); err != nil {
			t.Fatal(err)
		}
	}
	return emp
}

// TestDeleteRacedByAddUnderFaults: Delete, with the parent's ETag, of a
// family of 151 children (two transactions), while another writer's Add
// (holding no ETag) lands just before one of the transactions, and a
// fault (the answer lost after or before the transaction applies, or a
// 503) hits one of them. Every run ends with the family gone (0 rows) and
// Delete reporting success, or, when the Add landed before the first
// transaction, the family intact with the Add's child and Delete
// reporting that nothing was deleted. An Add that meets a family being
// deleted is refused as a missing parent.
func TestDeleteRacedByAddUnderFaults(t *testing.T) {
	const children = 151
	faults := []struct {
		name string
		err  func() error
	}{
		{"none", func() error { return nil }},
		{"answer lost after applying", func() error { return memstore.AfterApply(memstore.ResponseLost()) }},
		{"answer lost before applying", memstore.ResponseLost},
		{"server busy", memstore.ServerBusy},
	}
	for race := 0; race <= 2; race++ { // the Add lands before transaction race (0: no Add)
		for _, fault := range faults {
			for faultAt := 1; faultAt <= 2; faultAt++ {
				if fault.name == "none" && faultAt > 1 {
					continue
				}
				name := fmt.Sprintf("add before step %d, %s at step %d", race, fault.name, faultAt)
				t.Run(name, func(t *testing.T) {
					ctx := t.Context()
					var sched faultSchedule
					b := backendtest.Memstore(memstore.WithFaults(sched.fault))
					var f *onetomany.Table[Employee, Review]
					step := 0
					addErr := errors.New("no Add ran")
					hook := func(actions []store.Action) {
						if !deletes(actions) {
							return
						}
						step++
						if step == race {
							addErr = f.Add(ctx, &Employee{Department: "Sales", ID: "big"}, reviews("big", 5000)...)
						}
						if step == faultAt {
							sched.arm(fault.err())
						}
					}
					var err error
					f, err = onetomany.New[Employee, Review](stepped(b.Store, hook), b.NewTable(t, "famrace"), parentOf)
					if err != nil {
						t.Fatal(err)
					}
					emp := bigFamily(t, f, "big", children)
					err = f.Delete(ctx, emp)
					rows := rowsOf(t, f.Table())
					// An Add that got in before any transaction of the Delete
					// applied (the first one failed and was tried again, or the Add
					// came first) makes the Delete, which holds the parent's ETag,
					// change nothing; an Add after the first applied is refused.
					firstApplied := faultAt == 2 || fault.name == "none" || fault.name == "answer lost after applying"
					switch {
					case race > 0 && addErr == nil:
						if race == 2 && firstApplied {
							t.Fatal("an Add after the first transaction of the Delete applied was accepted")
						}
						if !errors.Is(err, store.ErrPreconditionFailed) || !strings.Contains(err.Error(), "nothing deleted") {
							t.Fatalf("Delete after the family changed: %v, want a precondition failure saying nothing was deleted", err)
						}
						if rows != 1+children+1 {
							t.Fatalf("%d rows, want the family intact: the parent and %d children", rows, children+1)
						}
					default:
						if race > 0 && !errors.Is(addErr, store.ErrNotFound) {
							t.Fatalf("an Add to a family being deleted: %v, want it refused as a missing parent", addErr)
						}
						if err != nil {
							t.Fatalf("Delete: %v (%d rows left)", err, rows)
						}
						if rows != 0 {
							t.Fatalf("Delete reported success and left %d rows", rows)
						}
					}
				})
			}
		}
	}
}
