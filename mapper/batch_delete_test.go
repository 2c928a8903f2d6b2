package mapper

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// A batch delete is conditional on the value's ETag unless asked
// otherwise: a stale ETag fails the whole transaction at its index.
func TestBatchDeleteUsesETag(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t)
	a, b, c := person{Dept: "d", ID: "a"}, person{Dept: "d", ID: "b"}, person{Dept: "d", ID: "c"}
	for _, p := range []*person{&a, &b, &c} {
		if err := r.Insert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	staleB := b
	b.Name = "changed"
	if err := r.Update(ctx, &b, store.Merge); err != nil {
		t.Fatal(err)
	}

	// Stale conditional delete: nothing is deleted.
	batch := r.Batch()
	if err := batch.Delete(&a); err != nil {
		t.Fatal(err)
	}
	if err := batch.Delete(&staleB); err != nil {
		t.Fatal(err)
	}
	err := batch.Run(ctx)
	var se *store.Error
	if !errors.As(err, &se) || se.Index != 1 || !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale delete in a batch: %v", err)
	}
	if _, err := r.Get(ctx, "d", "a"); err != nil {
		t.Fatalf("a failed transaction deleted a: %v", err)
	}

	// Current ETag, and an unconditional delete of the stale copy.
	batch = r.Batch()
	if err := batch.Delete(&a); err != nil {
		t.Fatal(err)
	}
	if err := batch.DeleteUnconditional(&staleB); err != nil {
		t.Fatal(err)
	}
	if err := batch.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := r.Get(ctx, "d", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after the delete: %v", id, err)
		}
	}
	if _, err := r.Get(ctx, "d", "c"); err != nil {
		t.Errorf("c was not in the batch: %v", err)
	}
}
