package model_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// queueDelay is how late memstore shows a queued message in the
// read-your-writes test: about what a worker polling a queue on Azure or
// Azurite sees.
const queueDelay = time.Second

// TestReadYourWrites: right after Insert, Update and Delete return, a
// lookup through a global unique index (Find) and a global index
// (FindAll), whose rows live in other partitions, sees the write: the
// entity as it is now, never a copy older than it; the old value of an
// update finds nothing, nor does a deleted entity's. Each lookup is made
// while the operation that writes the copies is still pending (on
// memstore with WithQueueDelay, its message hidden; on Azurite, no worker
// ran), over the claim the write made or the copy of an earlier write
// that the entity has left behind, and again once the engine drained.
func TestReadYourWrites(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGUnique, fGIndex})
		idx := e.B.Store.Table(f.table)
		// row reads the index row at a value: its version, or -1 when
		// there is none.
		row := func(index, value, rk string) int64 {
			t.Helper()
			if rk == "" {
				rk = mustJoin(f.table, "Sales", "a1")
			}
			r, err := idx.Get(ctx, mustJoin("x", index, value), rk, nil)
			if store.EntityNotFound(err) {
				return -1
			}
			if err != nil {
				t.Fatal(err)
			}
			return eventual.VersionOf(&r)
		}
		email := func(v string) int64 { return row("email", v, "u") }
		last := func(v string) int64 { return row("lastname", v, "") }
		// pending checks that the write's operation has not run: its
		// outbox row is there, and (memstore) its message is hidden.
		pending := func(stage string) {
			t.Helper()
			b, err := f.eng.Backlog(ctx, f.table)
			if err != nil || b.Pending != 1 {
				t.Fatalf("%s: backlog %+v, %v: want the write's operation pending", stage, b, err)
			}
			if e.Fake() {
				if n, err := f.eng.ProcessOnce(ctx); err != nil || n != 0 {
					t.Fatalf("%s: the worker received %d messages (%v) under the queue delay", stage, n, err)
				}
			}
		}
		// finds checks that email and lastname find the entity as want.
		finds := func(stage string, want *Employee) {
			t.Helper()
			got, err := f.m.Find(ctx, "email", want.Email)
			if err != nil || !sameProps(*got, *want) {
				t.Fatalf("%s: Find email %q = %+v, %v; want %+v", stage, want.Email, got, err, *want)
			}
			all, err := f.m.FindAll(ctx, "lastname", want.LastName)
			if err != nil || len(all) != 1 || !sameProps(*all[0], *want) {
				t.Fatalf("%s: FindAll lastname %q = %v, %v; want %+v alone", stage, want.LastName, all, err, *want)
			}
		}
		// missing checks that neither value finds anything.
		missing := func(stage, em, ln string) {
			t.Helper()
			if got, err := f.m.Find(ctx, "email", em); !store.EntityNotFound(err) {
				t.Fatalf("%s: Find email %q = %+v, %v; want not found", stage, em, got, err)
			}
			if all, err := f.m.FindAll(ctx, "lastname", ln); err != nil || len(all) != 0 {
				t.Fatalf("%s: FindAll lastname %q = %v, %v; want none", stage, ln, all, err)
			}
		}

		// Insert: found through its claims, before its copies exist.
		ann := Employee{Dept: "Sales", ID: "a1", Email: "ann@x.com", LastName: "Jones", N: 1}
		if err := f.m.Insert(ctx, &ann); err != nil {
			t.Fatal(err)
		}
		pending("insert")
		if email(ann.Email) != 0 || last(ann.LastName) != 0 {
			t.Fatalf("insert: index rows at v%d, v%d; want the bare claims (v0)", email(ann.Email), last(ann.LastName))
		}
		finds("insert, pending", &ann)
		f.drain(t)
		if email(ann.Email) <= 0 || last(ann.LastName) <= 0 {
			t.Fatal("insert: no copies after the drain")
		}
		finds("insert, drained", &ann)

		// Update of both indexed values: the old ones hold the copies of
		// the insert, which must find nothing; the new ones find the
		// entity through their claims.
		old := ann
		ann.Email, ann.LastName, ann.N = "ann.jones@x.com", "Smith", 2
		if err := f.m.Update(ctx, &ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		pending("update of the values")
		if email(old.Email) <= 0 || last(old.LastName) <= 0 || email(ann.Email) != 0 || last(ann.LastName) != 0 {
			t.Fatalf("update: old copies v%d, v%d, new rows v%d, v%d; want the old copies and new claims",
				email(old.Email), last(old.LastName), email(ann.Email), last(ann.LastName))
		}
		missing("update, old values, pending", old.Email, old.LastName)
		finds("update, new values, pending", &ann)
		f.drain(t)
		missing("update, old values, drained", old.Email, old.LastName)
		finds("update, new values, drained", &ann)

		// Update of a property only: the copies hold the old N, the
		// lookups return the new one.
		copyV := email(ann.Email)
		ann.N = 3
		if err := f.m.Update(ctx, &ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		pending("update of a property")
		if email(ann.Email) != copyV {
			t.Fatalf("update of a property: the copy moved from v%d to v%d before the worker ran", copyV, email(ann.Email))
		}
		finds("update of a property, pending", &ann)
		f.drain(t)
		finds("update of a property, drained", &ann)

		// Delete: the copies stay until the worker removes them, and find
		// nothing meanwhile.
		if err := f.m.Delete(ctx, ann.Dept, ann.ID, ""); err != nil {
			t.Fatal(err)
		}
		pending("delete")
		if email(ann.Email) <= 0 || last(ann.LastName) <= 0 {
			t.Fatal("delete: the copies are gone before the worker ran")
		}
		missing("delete, pending", ann.Email, ann.LastName)
		f.drain(t)
		if email(ann.Email) != -1 || last(ann.LastName) != -1 {
			t.Fatal("delete: copies left after the drain")
		}
		missing("delete, drained", ann.Email, ann.LastName)

		// Insert again, then another entity takes the old email: each
		// finds its own.
		bob := Employee{Dept: "Ops", ID: "b1", Email: old.Email, LastName: old.LastName, N: 4}
		if err := f.m.Insert(ctx, &bob); err != nil {
			t.Fatal(err)
		}
		pending("insert of another entity on an old value")
		finds("another entity, pending", &bob)
		f.drain(t)
		finds("another entity, drained", &bob)
		t.Logf("%s: every lookup read its write (%s)", e.B.Name, delayed(e))
	}, memstore.WithQueueDelay(queueDelay))
}

func delayed(e eventualtest.Env) string {
	if e.Fake() {
		return fmt.Sprintf("memstore, messages shown %s late", queueDelay)
	}
	return "Azurite, the lookups made before any worker ran"
}
