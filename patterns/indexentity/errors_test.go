package indexentity

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// indexentity's errors speak the patterns' vocabulary on every placement:
// an existing entity is a partition.DuplicateError, an entity changed or
// gone under the caller's ETag a partition.ChangedError, and a write that
// lost every attempt (ErrContention) a race, partition.ErrConflict.
func TestErrorVocabulary(t *testing.T) {
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				f := newFixture(t, e, p, Options{}, nil)
				ann := Employee{Dept: "Sales", ID: "emp_000001", First: "Ann", Last: "Jones"}
				must(t, f.x.Insert(ctx, &ann))

				err := f.x.Insert(ctx, &Employee{Dept: "Sales", ID: "emp_000001", Last: "Other"})
				errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)
				var de *partition.DuplicateError
				if !errors.As(err, &de) || de.Label != "entity" || de.RowKey != ann.ID || de.Partition != "Sales" {
					t.Fatalf("existing entity: %v, want a DuplicateError labelling the entity", err)
				}

				stale := ann
				ann.Last = "Smith"
				must(t, f.x.Update(ctx, &ann))
				stale.First = "Anne"
				err = f.x.Update(ctx, &stale)
				errvocab.Check(t, err, errvocab.Changed, store.ErrPreconditionFailed)
				var ce *partition.ChangedError
				if !errors.As(err, &ce) || ce.Label != "entity" || ce.RowKey != ann.ID {
					t.Fatalf("stale ETag: %v, want a ChangedError labelling the entity", err)
				}
			})
		})
	}
	// Contention is a race, with or without a *store.Error in its last try.
	for _, last := range []error{store.Errorf(store.CodeUpdateConditionNotSatisfied, 412, "changed"), fmt.Errorf("entity changed while its lists were updated"),
		&partition.ChangedError{Table: "t", Partition: "p", Err: store.Errorf(store.CodeUpdateConditionNotSatisfied, 412, "changed")}} {
		err := contention("step of (\"p\", \"r\")", last)
		errvocab.Check(t, err, errvocab.Race, ErrContention)
	}
}
