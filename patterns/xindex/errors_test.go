package xindex_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// xindex's errors speak the patterns' vocabulary: a taken value and an
// existing entity are partition.DuplicateErrors carrying an
// EntityAlreadyExists *store.Error, an entity changed under the caller's
// ETag a partition.ChangedError.
func TestErrorVocabulary(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		f := newFixture(t, e, "errs", nil, xindex.Options{})
		x := f.x
		ann, bob := emp("Sales", 1, "Ann", "Jones", "ann@x.com"), emp("Sales", 2, "Bob", "Lee", "bob@x.com")
		for _, v := range []*Employee{ann, bob} {
			if err := x.Insert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}

		err := x.Insert(ctx, emp("Sales", 3, "Cy", "Ray", "ann@x.com"))
		errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)
		var de *partition.DuplicateError
		if !errors.As(err, &de) || de.IndexName != "email" || de.Value != "ann@x.com" || de.Holder != (xindex.Ref{PartitionKey: "Sales", RowKey: ann.ID}) ||
			de.Table == "" || de.Partition == "" || de.RowKey == "" || store.Code(err) != store.CodeEntityAlreadyExists || store.Status(err) != 409 {
			t.Fatalf("taken value: %v (%+v), want a DuplicateError naming the index, value, holder and row, code EntityAlreadyExists", err, de)
		}

		err = x.Insert(ctx, emp("Sales", 1, "Ann", "Jones", "ann2@x.com"))
		errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)
		if !errors.As(err, &de) || de.IndexName != "" || de.Label != "entity" || de.RowKey != ann.ID {
			t.Fatalf("existing entity: %v, want a DuplicateError labelling the entity", err)
		}

		stale := *bob
		bob.LastName = "Lin"
		if err := x.Update(ctx, bob); err != nil {
			t.Fatal(err)
		}
		stale.LastName = "Lo"
		err = x.Update(ctx, &stale)
		errvocab.Check(t, err, errvocab.Changed, store.ErrPreconditionFailed)
		var ce *partition.ChangedError
		if !errors.As(err, &ce) || ce.Label != "entity" || ce.RowKey != bob.ID {
			t.Fatalf("stale ETag: %v, want a ChangedError labelling the entity", err)
		}
	})
}

// Two entities holding one unique value is a domain conflict: it matches
// xindex.ErrHeldTwice and store.ErrAlreadyExists, never the race to retry
// (partition.ErrConflict), a duplicate or store.ErrTransient.
func TestHeldTwiceIsNotARace(t *testing.T) {
	err := error(&xindex.HeldTwiceError{Table: "staffix", Partition: "email_Sales", IndexName: "email", Value: "same@x.com",
		Holder: xindex.Ref{PartitionKey: "Sales", RowKey: "emp_000001"}, Claimant: xindex.Ref{PartitionKey: "Sales", RowKey: "emp_000002"},
		Err: &store.Error{Code: store.CodeEntityAlreadyExists, Status: 409, Index: -1, Source: store.SourceClient}})
	errvocab.Check(t, err, errvocab.Domain, xindex.ErrHeldTwice, store.ErrAlreadyExists)
	if errors.Is(err, partition.ErrConflict) {
		t.Fatal("a HeldTwiceError matches partition.ErrConflict")
	}
	if errors.Is(xindex.ErrHeldTwice, partition.ErrConflict) || errors.Is(xindex.ErrHeldTwice, store.ErrTransient) {
		t.Fatal("xindex.ErrHeldTwice matches the race or store.ErrTransient")
	}
	d := &xindex.DanglingError{Index: "email", Value: "same@x.com", Source: xindex.Ref{PartitionKey: "Sales", RowKey: "emp_000001"}, Gone: true}
	if !errors.Is(d, store.ErrNotFound) || store.Code(d) != store.CodeResourceNotFound || errors.Is(d, partition.ErrConflict) {
		t.Fatalf("%v: want store.ErrNotFound with code ResourceNotFound", d)
	}
}
