package mapper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

func TestBatchRefusesAtAdd(t *testing.T) {
	r, _ := newRepo[person](t)
	b := r.Batch()
	for i := range store.MaxBatchActions {
		if err := b.Insert(&person{Dept: "d", ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	err := b.Insert(&person{Dept: "d", ID: "x"})
	if !errors.Is(err, ErrBatchFull) || !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "at most 100 actions") || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("101st action: %v", err)
	}
	b = r.Batch()
	if err := b.Insert(&person{Dept: "a", ID: "1"}); err != nil {
		t.Fatal(err)
	}
	err = b.Upsert(&person{Dept: "b", ID: "2"}, store.Merge)
	if store.Code(err) != store.CodeCommandsInBatchActOnDifferentPartitions || !strings.Contains(err.Error(), `PartitionKey "b"`) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("second partition: %v", err)
	}
	err = b.Upsert(&person{Dept: "a", ID: "1"}, store.Merge)
	if store.Code(err) != store.CodeInvalidDuplicateRow || !strings.Contains(err.Error(), `RowKey "1"`) || !strings.Contains(err.Error(), "action 0") {
		t.Fatalf("duplicate row: %v", err)
	}
	if err := b.Delete(&person{Dept: "a", ID: "3"}); !errors.Is(err, ErrNoETag) {
		t.Fatalf("conditional delete without ETag: %v", err)
	}
	if b.Len() != 1 {
		t.Fatalf("refused actions were added: Len %d", b.Len())
	}
}

func TestBatchRunSetsETagsAndIsAtomic(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t)
	a := person{Dept: "d", ID: "a", Name: "A"}
	if err := r.Insert(ctx, &a); err != nil {
		t.Fatal(err)
	}
	b := r.Batch()
	x, y := person{Dept: "d", ID: "x"}, person{Dept: "d", ID: "y"}
	a.Name = "A2"
	for _, err := range []error{b.Insert(&x), b.Upsert(&y, store.Replace), b.Update(&a, store.Merge)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []person{x, y, a} {
		got, err := r.Get(ctx, "d", p.ID)
		if err != nil || got.ETag != p.ETag {
			t.Fatalf("%s: stored ETag %q, value has %q (%v)", p.ID, got.ETag, p.ETag, err)
		}
	}
	// A failing action (insert of an existing row) fails all of them.
	b = r.Batch()
	z := person{Dept: "d", ID: "z"}
	dup := person{Dept: "d", ID: "x"}
	if err := b.Insert(&z); err != nil {
		t.Fatal(err)
	}
	if err := b.Insert(&dup); err != nil {
		t.Fatal(err)
	}
	err := b.Run(ctx)
	var se *store.Error
	if !errors.As(err, &se) || se.Index != 1 || !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("Run: %v", err)
	}
	if _, err := r.Get(ctx, "d", "z"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("z was written by a failed transaction: %v", err)
	}
	if z.ETag != "" {
		t.Fatal("failed Run set an ETag")
	}
	if err := r.Batch().Run(ctx); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
}

func TestPartitionHandle(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t)
	seed(t, r, 30, 3)
	p := r.Partition("d1")
	n := 0
	for v, err := range p.Query(ctx, Where[person]("Age").Lt(20)) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Dept != "d1" || v.Age >= 20 {
			t.Fatalf("got %+v", v)
		}
		n++
	}
	// d1 holds i = 1, 4, ..., 28; ages i%50 < 20: 1,4,...,19 = 7.
	if n != 7 {
		t.Fatalf("%d matches, want 7", n)
	}
	page, err := p.QueryPage(ctx, "", 4)
	if err != nil || len(page.Items) != 4 || page.Next == "" {
		t.Fatalf("QueryPage: %d items, next %q, %v", len(page.Items), page.Next, err)
	}
	v, err := p.Get(ctx, "0004")
	if err != nil || v.Name != "n4" {
		t.Fatalf("Get: %+v %v", v, err)
	}
	wrong := person{Dept: "d2", ID: "new"}
	for name, err := range map[string]error{
		"Insert": p.Insert(ctx, &wrong),
		"Upsert": p.Upsert(ctx, &wrong, store.Merge),
		"Update": p.Update(ctx, &wrong, store.Merge),
		"Delete": p.Delete(ctx, &wrong),
		"Batch":  p.Batch().Insert(&wrong),
	} {
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"d2"`) || !strings.Contains(err.Error(), `"d1"`) {
			t.Errorf("%s of another partition: %v", name, err)
		}
	}
	right := person{Dept: "d1", ID: "new"}
	b := p.Batch()
	if err := b.Insert(&right); err != nil {
		t.Fatal(err)
	}
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(ctx, &right); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteKey(ctx, "0004"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(ctx, "0004"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after DeleteKey: %v", err)
	}
}

func TestBatchRefusesBadEntityAndBigBody(t *testing.T) {
	type blob struct {
		PK   string `table:",pk"`
		RK   string `table:",rk"`
		Data []byte
		More []byte
	}
	r, _ := newRepo[blob](t)
	b := r.Batch()
	if err := b.Insert(&blob{PK: "p", RK: "a/b"}); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"a/b"`) {
		t.Fatalf("bad RowKey: %v", err)
	}
	// Each entity is just under 128 KiB of binary; 4 MiB is reached at the 32nd or so.
	big := make([]byte, store.MaxBinaryBytes)
	var err error
	n := 0
	for i := range store.MaxBatchActions {
		if err = b.Insert(&blob{PK: "p", RK: fmt.Sprint(i), Data: big, More: big}); err != nil {
			break
		}
		n++
	}
	if !errors.Is(err, ErrBatchFull) || !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "4194304") || n < 10 || n > 40 {
		t.Fatalf("after %d actions: %v", n, err)
	}
	if b.Len() != n {
		t.Fatalf("Len %d, want %d", b.Len(), n)
	}
}
