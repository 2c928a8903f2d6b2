package mapper

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestBulkWrite writes 750 values over 5 partitions with one bad value
// (a key with '/') and one value that collides with an existing entity:
// exactly those two fail, in their own outcomes, the rest are stored and
// carry their new ETags, and a conditional bulk update then uses them.
func TestBulkWrite(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t)
	if err := r.Insert(ctx, &person{Dept: "d3", ID: "0042"}); err != nil {
		t.Fatal(err)
	}
	values := make([]*person, 750)
	for i := range values {
		values[i] = &person{Dept: fmt.Sprintf("d%d", i%5), ID: fmt.Sprintf("%04d", i/5), Name: fmt.Sprint("n", i), Age: int32(i)}
	}
	values[7].ID = "bad/key"
	// values[213] is (d3, 0042), which exists.
	var progress []store.BulkProgress
	res, err := r.BulkWrite(ctx, store.ActionInsert, values, store.BulkOptions{Progress: func(p store.BulkProgress) { progress = append(progress, p) }})
	var be *store.BulkError
	if !errors.As(err, &be) || be.Failed != 2 || be.FirstIndex != 7 {
		t.Fatalf("BulkWrite error %v, want a BulkError with 2 failures, the first at 7", err)
	}
	if store.Code(res.Outcomes[7].Err) != store.CodeInvalidInput || res.Outcomes[7].Batch != -1 {
		t.Errorf("bad key outcome: %+v", res.Outcomes[7])
	}
	if !errors.Is(res.Outcomes[213].Err, store.ErrAlreadyExists) {
		t.Errorf("colliding insert outcome: %+v", res.Outcomes[213])
	}
	if res.Written != 748 || res.Failed != 2 || len(progress) == 0 {
		t.Fatalf("written %d, failed %d, %d progress calls", res.Written, res.Failed, len(progress))
	}
	for i, v := range values {
		if i == 7 || i == 213 {
			continue
		}
		if v.ETag == "" || res.Outcomes[i].ETag != v.ETag {
			t.Fatalf("value %d: ETag %q, outcome %q", i, v.ETag, res.Outcomes[i].ETag)
		}
		got, err := r.Get(ctx, v.Dept, v.ID)
		if err != nil || got.Name != v.Name || got.ETag != v.ETag {
			t.Fatalf("value %d read back as %+v (%v)", i, got, err)
		}
	}

	// A conditional bulk update uses each value's ETag: a stale one fails
	// alone.
	ok := []*person{values[0], values[1], values[2]}
	stale := *values[1]
	if err := r.UpdateUnconditional(ctx, &stale, store.Merge); err != nil {
		t.Fatal(err)
	}
	for _, v := range ok {
		v.Age += 1000
	}
	res, err = r.BulkWrite(ctx, store.ActionUpdateMerge, ok, store.BulkOptions{})
	if !errors.Is(err, store.ErrPreconditionFailed) || res.Written != 2 || !errors.Is(res.Outcomes[1].Err, store.ErrPreconditionFailed) {
		t.Fatalf("conditional bulk update: %v, outcomes %+v", err, res.Outcomes)
	}
	if got, _ := r.Get(ctx, values[2].Dept, values[2].ID); got.Age != values[2].Age {
		t.Fatalf("update not applied: age %d, want %d", got.Age, values[2].Age)
	}

	// Without an ETag a conditional write fails before sending.
	res, err = r.BulkWrite(ctx, store.ActionDelete, []*person{{Dept: "d0", ID: "0000"}}, store.BulkOptions{})
	if !errors.Is(err, ErrNoETag) || res.Outcomes[0].Batch != -1 {
		t.Fatalf("delete without ETag: %v %+v", err, res.Outcomes[0])
	}
	// All good: nil error.
	res, err = r.BulkWrite(ctx, store.ActionUpsertReplace, []*person{{Dept: "z", ID: "1"}, nil, {Dept: "z", ID: "2"}}, store.BulkOptions{})
	if err == nil || res.Written != 2 || res.Outcomes[1].Err == nil {
		t.Fatalf("a nil value must fail alone: %v %+v", err, res)
	}
	if _, err = r.BulkWrite(ctx, store.ActionUpsertReplace, []*person{{Dept: "z", ID: "3"}}, store.BulkOptions{}); err != nil {
		t.Fatalf("a clean bulk write returned %v", err)
	}
}

// TestBulkWriteUnmappableTypeFailsEveryValue: a repository of a type that
// cannot be mapped reports every value failed and unsent, never an
// outcome that reads as applied.
func TestBulkWriteUnmappableTypeFailsEveryValue(t *testing.T) {
	type noKeys struct{ A string }
	st := memstore.New()
	if err := st.CreateTable(t.Context(), "nokeys"); err != nil {
		t.Fatal(err)
	}
	repo := NewRepository[noKeys](st, "nokeys")
	res, err := repo.BulkWrite(t.Context(), store.ActionInsert, []*noKeys{{A: "x"}, {A: "y"}}, store.BulkOptions{})
	if err == nil || res.Written != 0 || res.Failed != 2 || res.Unknown != 0 {
		t.Fatalf("written %d failed %d unknown %d: %v", res.Written, res.Failed, res.Unknown, err)
	}
	for i, o := range res.Outcomes {
		if o.Err == nil || o.Batch != -1 || o.Attempts != 0 {
			t.Fatalf("outcome %d: %+v, want failed and never sent", i, o)
		}
	}
}
