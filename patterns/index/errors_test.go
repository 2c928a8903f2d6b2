package index_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/store"
)

// index's errors speak the patterns' vocabulary: a taken value and an
// existing entity are partition.DuplicateErrors (store.Code
// EntityAlreadyExists), an entity changed or gone under the caller's ETag a
// partition.ChangedError; none of them is a race.
func TestErrorVocabulary(t *testing.T) {
	ctx := t.Context()
	x := staffTable(t, backendtest.Memstore())
	ann, bob := emp(1, "Ann", "Jones", "ann@x.com"), emp(2, "Bob", "Jones", "bob@x.com")
	for _, e := range []*Employee{ann, bob} {
		if err := x.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}

	taken := emp(3, "Cy", "Smith", "ann@x.com")
	err := x.Insert(ctx, taken)
	errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)
	var de *partition.DuplicateError
	if !errors.As(err, &de) || de.IndexName != "email" || de.Value != "ann@x.com" || de.Partition != "Sales" || de.Table == "" ||
		de.Label != "index email" || store.Code(err) != store.CodeEntityAlreadyExists || store.Status(err) != 409 {
		t.Fatalf("taken value: %v, want a DuplicateError naming the index, value, partition and table", err)
	}

	err = x.Insert(ctx, emp(1, "Ann", "Jones", "ann2@x.com"))
	errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)
	if !errors.As(err, &de) || de.IndexName != "" || de.Label != "entity" || de.RowKey != ann.ID {
		t.Fatalf("existing entity: %v, want a DuplicateError labelling the entity", err)
	}

	stale := *bob
	bob.Email = "bob2@x.com"
	if err := x.Update(ctx, bob); err != nil {
		t.Fatal(err)
	}
	stale.Email = "bob3@x.com"
	err = x.Update(ctx, &stale)
	errvocab.Check(t, err, errvocab.Changed, store.ErrPreconditionFailed)
	var ce *partition.ChangedError
	if !errors.As(err, &ce) || ce.Label != "entity" || ce.RowKey != bob.ID || ce.Missing {
		t.Fatalf("stale ETag: %v, want a ChangedError labelling the entity", err)
	}

	if err := x.Delete(ctx, bob); err != nil {
		t.Fatal(err)
	}
	err = x.Update(ctx, bob)
	errvocab.Check(t, err, errvocab.Changed, store.ErrNotFound)
	if !errors.As(err, &ce) || !ce.Missing {
		t.Fatalf("gone entity: %v, want a ChangedError with Missing", err)
	}
}
