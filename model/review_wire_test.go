package model_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestListRepairNonASCII: Repair rewrites a value's segments in one
// transaction, so a write refuses a list whose segments would not fit
// one by their bytes (ids outside ASCII take 6 bytes a UTF-16 unit on the
// wire: 32 full segments of them are about 6 MB), not only by their
// count; and Repair of the fullest list, every segment rewritten (a
// dangling id in the first shifts them all), fits. Before, the list
// grew to 32 segments and Repair failed with RequestBodyTooLarge.
func TestListRepairNonASCII(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	f := newFixture(t, e, nil, []string{fList})
	f.mo.ListSegmentUnits = 0
	f.restart(t)
	id := func(i int) string { return fmt.Sprintf("%s%04d", strings.Repeat("é", 990), i) }
	var err error
	n := 0
	for ; n < 1100; n++ {
		if err = f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id(n), LastName: "Many"}); err != nil {
			break
		}
	}
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "bytes, what Repair's one transaction of them holds") {
		t.Fatalf("after %d ids: %v", n, err)
	}
	if _, err := f.m.Get(ctx, "Sales", id(n)); !store.EntityNotFound(err) {
		t.Fatalf("the refused entity was written: %v", err)
	}
	// Drift: an entity of the first segment deleted past the model, its
	// id left dangling there: the ids repacked shift every segment.
	if err := f.raw().Table(f.table).Delete(ctx, "Sales", mustJoin("e", id(0)), store.ETagAny); err != nil {
		t.Fatal(err)
	}
	rep, err := f.m.Repair(ctx, nil)
	if err != nil || !rep.Clean() {
		t.Fatalf("Repair: %v\n%s", err, rep)
	}
}
