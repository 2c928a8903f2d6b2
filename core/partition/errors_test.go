package partition_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/store"
)

// Each of partition's errors speaks the patterns' vocabulary: a lost race
// matches ErrConflict only, a stale ETag ErrChanged only, an insert of an
// existing row ErrDuplicate only, a lost answer store.ErrUnknownOutcome
// only; each unwraps to its *store.Error and labels its row.
func TestErrorVocabulary(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t, backendtest.Memstore())
	p := open(t, tbl, "Sales", nil)

	tx := begin(t, p)
	must(t, tx.Insert("employee", row("emp_1", "Name", "Ada")))
	res, err := tx.Commit(ctx)
	must(t, err)

	// A race: two transactions on one state, the second loses.
	a, b := begin(t, p), begin(t, p)
	must(t, a.Insert("employee", row("emp_2")))
	must(t, b.Insert("employee", row("emp_3")))
	_, err = a.Commit(ctx)
	must(t, err)
	_, err = b.Commit(ctx)
	errvocab.Check(t, err, errvocab.Race)
	var ce *partition.ConflictError
	if !errors.As(err, &ce) || ce.Partition != "Sales" || ce.Table != tbl.Name() {
		t.Fatalf("%v: want a ConflictError naming the partition and table", err)
	}

	// A duplicate: the row exists.
	tx = begin(t, p)
	must(t, tx.Insert("employee", row("emp_1")))
	_, err = tx.Commit(ctx)
	errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)
	var de *partition.DuplicateError
	if !errors.As(err, &de) || de.Label != "employee" || de.RowKey != "emp_1" || de.Table != tbl.Name() || store.Code(err) != store.CodeEntityAlreadyExists || store.Status(err) != 409 {
		t.Fatalf("%v: want a DuplicateError labelling the row, code EntityAlreadyExists", err)
	}

	// A changed row: an update under a stale ETag.
	tx = begin(t, p)
	must(t, tx.Update("employee", row("emp_1", "Name", "Ada L."), store.Merge, `W/"datetime'2000-01-01T00%3A00%3A00Z'"`))
	_, err = tx.Commit(ctx)
	errvocab.Check(t, err, errvocab.Changed, store.ErrPreconditionFailed)
	var ch *partition.ChangedError
	if !errors.As(err, &ch) || ch.Label != "employee" || ch.RowKey != "emp_1" || ch.Missing {
		t.Fatalf("%v: want a ChangedError labelling the row", err)
	}
	_ = res

	// An unknown outcome, as Commit returns it after a lost answer.
	unknown := &partition.UnknownError{Table: tbl.Name(), Partition: "Sales", Version: 3, Reason: "the context ended",
		Err: &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport}}
	errvocab.Check(t, unknown, errvocab.Unknown)

	// A commit whose lost answer was resolved as not applied is transient,
	// never a race, a duplicate or a change.
	na := &partition.NotAppliedError{Table: tbl.Name(), Partition: "Sales", Version: 3,
		Err: &store.Error{Code: store.CodeResponseLost, Index: -1, Source: store.SourceTransport}}
	for _, s := range []error{partition.ErrConflict, partition.ErrChanged, partition.ErrDuplicate, store.ErrUnknownOutcome} {
		if errors.Is(na, s) {
			t.Errorf("%v matches %v", na, s)
		}
	}
	if !errors.Is(na, store.ErrTransient) {
		t.Errorf("%v does not match store.ErrTransient", na)
	}
}
