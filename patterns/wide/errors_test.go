package wide

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/store"
)

// wide's errors speak the patterns' vocabulary: a ConditionError is a
// duplicate for a create, a changed value under an ETag, a race under
// store.ETagAny; an UnknownError is an unknown outcome; each unwraps to its
// *store.Error.
func TestErrorVocabulary(t *testing.T) {
	b := backendtest.Memstore()
	w := newWide[Properties](t, b.Store, freshTable(t, b), nil)
	v := counters(3, 0)
	first, err := w.Put(t.Context(), "p", "v", &v, "")
	if err != nil {
		t.Fatal(err)
	}

	_, err = w.Put(t.Context(), "p", "v", &v, "")
	errvocab.Check(t, err, errvocab.Duplicate, store.ErrAlreadyExists)

	if _, err := w.Put(t.Context(), "p", "v", &v, store.ETagAny); err != nil {
		t.Fatal(err)
	}
	_, err = w.Put(t.Context(), "p", "v", &v, first)
	errvocab.Check(t, err, errvocab.Changed, store.ErrPreconditionFailed)
	err = w.Delete(t.Context(), "p", "v", first)
	errvocab.Check(t, err, errvocab.Changed, store.ErrPreconditionFailed)
	var ce *ConditionError
	if !errors.As(err, &ce) || ce.ID != "v" || ce.Partition != "p" || ce.Table == "" {
		t.Fatalf("%v: want a ConditionError naming the value", err)
	}

	// Other writers won each attempt of a write under store.ETagAny.
	race := &ConditionError{Table: "t", Partition: "p", ID: "v", IfMatch: store.ETagAny, Attempts: 16,
		Err: store.Errorf(store.CodeUpdateConditionNotSatisfied, 412, "changed")}
	errvocab.Check(t, race, errvocab.Race)

	unknown := &UnknownError{Table: "t", Partition: "p", ID: "v", Reason: "the context ended",
		Err: &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport}}
	errvocab.Check(t, unknown, errvocab.Unknown)

	tooLarge := &TooLargeError{Table: "t", Partition: "p", ID: "v", Err: store.Errorf(store.CodeRequestBodyTooLarge, 413, "too large")}
	for _, s := range []error{partition.ErrConflict, partition.ErrChanged, partition.ErrDuplicate, store.ErrUnknownOutcome, store.ErrTransient} {
		if errors.Is(tooLarge, s) {
			t.Errorf("%v matches %v", tooLarge, s)
		}
	}
}
