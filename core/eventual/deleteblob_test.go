package eventual_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store/intercept"
)

// TestDeleteBlobStepRepeated: a blob delete step that runs again after
// its blob is gone (a worker that crashed before removing the message)
// is done, not refused: the delete is unconditional, so a missing blob
// answers 404 BlobNotFound, which the step takes as done, rather than the
// 412 an If-Match * meets on a missing blob.
func TestDeleteBlobStepRepeated(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		name := strings.ToLower(b.NewTable(t, "delblob"))
		if err := b.Store.Container(name).Create(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Store.Container(name).Delete(context.WithoutCancel(ctx)) })
		if _, err := b.Store.Container(name).Put(ctx, "b1", []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		var deletes atomic.Int64
		st := intercept.Observe(b.Store, func(ctx context.Context, c intercept.Call, do func(context.Context) error) error {
			if c.Op == "Container.DeleteBlob" {
				deletes.Add(1)
			}
			return do(ctx)
		}, nil)
		eng, err := eventual.New(st, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		op := eventual.Operation{Steps: []eventual.Step{eventual.DeleteBlob(name, "b1")}}
		for i := range 2 {
			if err := eng.Submit(ctx, op); err != nil {
				t.Fatal(err)
			}
			deletes.Store(0)
			if err := eng.Drain(ctx); err != nil {
				t.Fatalf("run %d: %v", i+1, err)
			}
			// One request: the step was done at its first try (a refused
			// delete would be tried again, and its message kept).
			if n := deletes.Load(); n != 1 {
				t.Fatalf("run %d: %d delete requests, want 1", i+1, n)
			}
		}
		if _, _, err := b.Store.Container(name).Get(ctx, "b1"); err == nil {
			t.Fatal("the blob is still there")
		}
	})
}
