package onetomany_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/patterns/onetomany"
	"github.com/tablekit/tablekit/store"
)

// TestFamilyBeingDeletedRefusesWriters: a Delete of 151 children whose
// context ends before its second transaction returns a DeletePendingError
// counting the 99 children it deleted and the 53 rows left. Until the
// delete is finished, the family reads as deleted and every writer is
// refused without writing: Get, Add and Remove (with no ETag) find no
// parent, Add and Update with the old ETag fail their condition, and
// Insert finds the parent's row taken. Delete, even with the old ETag,
// finishes it, and the family can then be inserted again.
func TestFamilyBeingDeletedRefusesWriters(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		dctx, cancel := context.WithCancel(ctx)
		defer cancel()
		step := 0
		hook := func(actions []store.Action) {
			if deletes(actions) {
				if step++; step == 2 {
					cancel()
				}
			}
		}
		f, err := onetomany.New[Employee, Review](stepped(b.Store, hook), b.NewTable(t, "fampend"), parentOf)
		if err != nil {
			t.Fatal(err)
		}
		emp := bigFamily(t, f, "big", 151)
		stale := *emp
		err = f.Delete(dctx, emp)
		var pending *onetomany.DeletePendingError
		if !errors.As(err, &pending) || !errors.Is(err, onetomany.ErrDeletePending) {
			t.Fatalf("Delete whose context ended part-way: %v, want a DeletePendingError", err)
		}
		if pending.Deleted != 99 || pending.Remaining != 53 || !strings.Contains(err.Error(), "Delete again") {
			t.Fatalf("%v: %d deleted and %d remaining, want 99 and 53", err, pending.Deleted, pending.Remaining)
		}
		key := func() *Employee { return &Employee{Department: "Sales", ID: "big"} }
		gone := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, onetomany.ErrDeletePending) {
				t.Errorf("%s: %v, want a missing parent whose delete is pending", what, err)
			}
		}
		_, err = f.Get(ctx, *key())
		gone("Get", err)
		gone("Add without an ETag", f.Add(ctx, key(), reviews("big", 5000)...))
		gone("Remove without an ETag", f.Remove(ctx, key(), reviews("big", 150)...))
		old := stale
		if err := f.Add(ctx, &old, reviews("big", 5001)...); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Errorf("Add with the old ETag: %v", err)
		}
		old = stale
		if err := f.Update(ctx, &old, reviews("big", 5002)...); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Errorf("Update with the old ETag: %v", err)
		}
		if err := f.Insert(ctx, key(), reviews("big", 5003)...); !errors.Is(err, store.ErrAlreadyExists) || !errors.Is(err, onetomany.ErrDeletePending) {
			t.Errorf("Insert over a family being deleted: %v", err)
		}
		if n := rowsOf(t, f.Table()); n != 53 {
			t.Fatalf("%d rows after the refused writes, want the 53 left", n)
		}
		old = stale
		if err := f.Delete(ctx, &old); err != nil {
			t.Fatalf("Delete with the old ETag of a family being deleted: %v", err)
		}
		if n := rowsOf(t, f.Table()); n != 0 {
			t.Fatalf("%d rows left after the delete was finished", n)
		}
		if err := f.Insert(ctx, &Employee{Department: "Sales", ID: "big", Name: "Again"}, reviews("big", 1)...); err != nil {
			t.Fatalf("Insert after the delete finished: %v", err)
		}
		got, err := f.Get(ctx, *key())
		if err != nil || got.Parent.Name != "Again" || len(got.Children) != 1 {
			t.Fatalf("the family inserted again: %+v, %v", got, err)
		}
	})
}

// TestConcurrentDeletesFinishOneFamily: two Deletes of a family of 300
// children (four transactions) run at once while a writer keeps adding
// children without an ETag: both Deletes succeed, the family is gone
// (0 rows), and every Add either landed before the family was marked
// (and was deleted with it) or was refused as a missing parent.
func TestConcurrentDeletesFinishOneFamily(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		f := newFamilies(t, b)
		bigFamily(t, f, "big", 300)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = f.Delete(ctx, &Employee{Department: "Sales", ID: "big"}) })
		}
		added, refused := 0, 0
		wg.Go(func() {
			for y := 1000; y < 1010; y++ {
				err := f.Add(ctx, &Employee{Department: "Sales", ID: "big"}, reviews("big", y)...)
				switch {
				case err == nil:
					added++
				case errors.Is(err, store.ErrNotFound):
					refused++
				default:
					t.Errorf("Add during the deletes: %v", err)
				}
			}
		})
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Delete %d: %v", i, err)
			}
		}
		if n := rowsOf(t, f.Table()); n != 0 {
			t.Fatalf("%d rows left after both Deletes succeeded", n)
		}
		t.Logf("adds landed before the mark %d, refused %d", added, refused)
	})
}
