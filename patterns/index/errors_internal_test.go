package index

import (
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/store"
)

// An unconditional write that kept losing to other writers is a race,
// never a changed row, though its last refusal was one.
func TestContendedIsARace(t *testing.T) {
	e := store.Entity{PartitionKey: "Sales", RowKey: "emp_1"}
	last := &partition.ChangedError{Table: "staff", Partition: "Sales", Row: partition.Row{Label: "entity", RowKey: "emp_1"},
		Err: store.Errorf(store.CodeUpdateConditionNotSatisfied, 412, "changed")}
	errvocab.Check(t, contended("upsert", e, last), errvocab.Race, store.ErrPreconditionFailed)
}
