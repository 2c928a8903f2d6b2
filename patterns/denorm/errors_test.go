package denorm_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// A target with two sources is a domain conflict: it matches
// denorm.ErrOtherSource and store.ErrAlreadyExists, unwraps to its
// *store.Error, and never matches the race to retry
// (partition.ErrConflict), a duplicate or store.ErrTransient.
// TestGuideWalkthrough reaches the same error through Insert.
func TestOtherSourceIsNotARace(t *testing.T) {
	err := error(&denorm.OtherSourceError{Relation: "manager", Target: denorm.Target{Table: "Teams", PartitionKey: "Sales", RowKey: "team_1"},
		Holder: denorm.Ref{PartitionKey: "Sales", RowKey: "emp_000001"}, Claimant: denorm.Ref{PartitionKey: "Sales", RowKey: "emp_000002"},
		Err: &store.Error{Code: store.CodeEntityAlreadyExists, Status: 409, Index: -1, Source: store.SourceClient}})
	errvocab.Check(t, err, errvocab.Domain, denorm.ErrOtherSource, store.ErrAlreadyExists)
	if errors.Is(err, partition.ErrConflict) || errors.Is(denorm.ErrOtherSource, partition.ErrConflict) || errors.Is(denorm.ErrOtherSource, store.ErrTransient) {
		t.Fatal("a target's second source matches the race to retry")
	}
}
