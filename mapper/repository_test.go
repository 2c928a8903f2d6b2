package mapper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

type person struct {
	Dept   string     `table:",pk"`
	ID     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Seen   time.Time  `table:",timestamp"`
	Name   string
	Age    int32
	Salary int64 `table:"Pay,omitempty"`
}

func newRepo[T any](t *testing.T, opts ...memstore.Option) (*Repository[T], *memstore.Store) {
	t.Helper()
	st := memstore.New(opts...)
	if err := st.CreateTable(context.Background(), "People"); err != nil {
		t.Fatal(err)
	}
	return NewRepository[T](st, "People"), st
}

func TestRepositoryCRUD(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t)
	p := person{Dept: "Sales", ID: "1", Name: "Ann", Age: 30, Salary: 100}
	if err := r.Insert(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if p.ETag == "" {
		t.Fatal("Insert did not set the ETag")
	}
	if err := r.Insert(ctx, &p); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second insert: %v", err)
	}
	got, err := r.Get(ctx, "Sales", "1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != p.ETag || got.Seen.IsZero() || got.Name != "Ann" || got.Age != 30 || got.Salary != 100 {
		t.Fatalf("Get = %+v (inserted %+v)", got, p)
	}

	// Optimistic concurrency: a stale copy cannot overwrite.
	stale := got
	got.Age = 31
	if err := r.Update(ctx, &got, store.Merge); err != nil {
		t.Fatal(err)
	}
	if got.ETag == stale.ETag {
		t.Fatal("Update did not refresh the ETag")
	}
	stale.Name = "Bob"
	if err := r.Update(ctx, &stale, store.Replace); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale update: %v", err)
	}
	if err := r.Delete(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale delete: %v", err)
	}
	if err := r.UpdateUnconditional(ctx, &stale, store.Replace); err != nil {
		t.Fatal(err)
	}
	now, _ := r.Get(ctx, "Sales", "1")
	if now.Name != "Bob" || now.Age != 30 {
		t.Fatalf("after unconditional replace: %+v", now)
	}

	// Merge keeps what the value omits; replace drops it.
	now.Salary = 0 // omitempty: not sent
	if err := r.Update(ctx, &now, store.Merge); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.Get(ctx, "Sales", "1"); v.Salary != 100 {
		t.Fatalf("merge lost Pay: %+v", v)
	}
	if err := r.Update(ctx, &now, store.Replace); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.Get(ctx, "Sales", "1"); v.Salary != 0 {
		t.Fatalf("replace kept Pay: %+v", v)
	}

	if err := r.Delete(ctx, &now); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, "Sales", "1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
}

func TestRepositoryUpsertAndDeleteKey(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t)
	p := person{Dept: "d", ID: "1", Name: "x"}
	if err := r.Upsert(ctx, &p, store.Replace); err != nil || p.ETag == "" {
		t.Fatalf("upsert: %v, ETag %q", err, p.ETag)
	}
	first := p.ETag
	p.Name = "y"
	if err := r.Upsert(ctx, &p, store.Merge); err != nil || p.ETag == first {
		t.Fatalf("upsert again: %v, ETag %q", err, p.ETag)
	}
	if err := r.DeleteKey(ctx, "d", "1"); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteKey(ctx, "d", "1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteKey of a missing entity: %v", err)
	}
}

func TestRepositoryNoETag(t *testing.T) {
	ctx := context.Background()
	type keyedNoTag struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
	}
	r, _ := newRepo[keyedNoTag](t)
	v := keyedNoTag{"a", "b"}
	if err := r.Insert(ctx, &v); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Update": r.Update(ctx, &v, store.Merge),
		"Delete": r.Delete(ctx, &v),
		"Batch":  r.Batch().Update(&v, store.Merge),
	} {
		if !errors.Is(err, ErrNoETag) || !strings.Contains(err.Error(), "no field tagged etag") {
			t.Errorf("%s without an etag field: %v", name, err)
		}
	}
	if err := r.UpdateUnconditional(ctx, &v, store.Merge); err != nil {
		t.Fatal(err)
	}
	rp, _ := newRepo[person](t)
	p := person{Dept: "a", ID: "b"}
	if err := rp.Update(ctx, &p, store.Merge); !errors.Is(err, ErrNoETag) || !strings.Contains(err.Error(), "person: ETag is empty") {
		t.Fatalf("update with an empty ETag: %v", err)
	}
}

func TestRepositoryBadTypeFailsEveryCall(t *testing.T) {
	ctx := context.Background()
	type bad struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		C  chan int
	}
	r, _ := newRepo[bad](t)
	var me *Error
	if !errors.As(r.Err(), &me) || me.Field != "C" {
		t.Fatalf("Err() = %v", r.Err())
	}
	_, err := r.Get(ctx, "a", "b")
	if !errors.As(err, &me) {
		t.Errorf("Get: %v", err)
	}
	if err := r.Insert(ctx, &bad{}); !errors.As(err, &me) {
		t.Errorf("Insert: %v", err)
	}
	for _, err := range r.Query(ctx) {
		if !errors.As(err, &me) {
			t.Errorf("Query: %v", err)
		}
	}
	if _, err := r.QueryPage(ctx, "", 10); !errors.As(err, &me) {
		t.Errorf("QueryPage: %v", err)
	}
}

// seed inserts n people in partitions d0..d(parts-1).
func seed(t *testing.T, r *Repository[person], n, parts int) {
	t.Helper()
	for i := range n {
		p := person{Dept: fmt.Sprintf("d%d", i%parts), ID: fmt.Sprintf("%04d", i), Name: fmt.Sprint("n", i), Age: int32(i % 50)}
		if err := r.Insert(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
	}
}

// Query follows continuation tokens through short and empty pages.
func TestQueryAcrossShortPages(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t, memstore.WithShortPages(7))
	seed(t, r, 300, 3)
	var ids []string
	for p, err := range r.Query(ctx, Where[person]("Age").Ge(10)) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Age < 10 || p.ETag == "" {
			t.Fatalf("got %+v", p)
		}
		ids = append(ids, p.Dept+"/"+p.ID)
	}
	if len(ids) != 240 || !slices.IsSorted(ids) {
		t.Fatalf("got %d entities (sorted %v), want 240 in key order", len(ids), slices.IsSorted(ids))
	}
	// Breaking out of the loop stops the iteration.
	n := 0
	for range r.Query(ctx) {
		n++
		if n == 5 {
			break
		}
	}
	if n != 5 {
		t.Fatalf("break: %d", n)
	}
}

func TestQueryPage(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[person](t, memstore.WithShortPages(3))
	seed(t, r, 95, 1)
	var all []string
	token := ""
	pages := 0
	for {
		p, err := r.QueryPage(ctx, token, 20)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Next != "" && len(p.Items) != 20 {
			t.Fatalf("page %d has %d items before the end", pages, len(p.Items))
		}
		for _, it := range p.Items {
			all = append(all, it.ID)
		}
		if p.Next == "" {
			break
		}
		token = p.Next
	}
	if len(all) != 95 || !slices.IsSorted(all) || pages < 5 {
		t.Fatalf("%d items in %d pages", len(all), pages)
	}
	for _, size := range []int{0, -1, 1001} {
		if _, err := r.QueryPage(ctx, "", size); err == nil || !strings.Contains(err.Error(), fmt.Sprint(size)) {
			t.Errorf("size %d: %v", size, err)
		}
	}
}

func TestSelectFromFields(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Tab1"); err != nil {
		t.Fatal(err)
	}
	type full struct {
		PartitionKey, RowKey string
		A, B                 string
	}
	type narrow struct {
		PartitionKey, RowKey string
		A                    string
		Rest                 map[string]any `table:",extra"`
	}
	if err := NewRepository[full](st, "Tab1").Insert(ctx, &full{"p", "r", "a", "b"}); err != nil {
		t.Fatal(err)
	}
	rn := NewRepository[narrow](st, "Tab1")
	if got := rn.selectNames(); got != nil {
		t.Fatalf("a type with an extra field must not select: %v", got)
	}
	v, err := rn.Get(ctx, "p", "r")
	if err != nil || v.Rest["B"] != "b" {
		t.Fatalf("Get = %+v, %v", v, err)
	}
	// Replace through the older struct keeps B thanks to the extra field.
	v.A = "A2"
	if err := rn.UpdateUnconditional(ctx, &v, store.Replace); err != nil {
		t.Fatal(err)
	}
	f, _ := NewRepository[full](st, "Tab1").Get(ctx, "p", "r")
	if f.A != "A2" || f.B != "b" {
		t.Fatalf("after replace: %+v", f)
	}
	type onlyA struct {
		PartitionKey, RowKey string
		A                    string
	}
	ra := NewRepository[onlyA](st, "Tab1")
	if got := ra.selectNames(); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("select = %v", got)
	}
	if rw := NewRepository[onlyA](st, "Tab1", WithoutSelect()); rw.selectNames() != nil {
		t.Fatal("WithoutSelect still selects")
	}
}

func TestWithPageSizeValidated(t *testing.T) {
	r := NewRepository[person](memstore.New(), "People", WithPageSize(5000))
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "5000") {
		t.Fatalf("Err() = %v", err)
	}
}

// An entity that does not decode yields its error (and the zero value);
// the loop may go on to the next.
func TestQueryYieldsDecodeErrorsAndContinues(t *testing.T) {
	ctx := context.Background()
	r, st := newRepo[person](t)
	seed(t, r, 3, 1)
	if _, err := st.Table("People").Upsert(ctx, store.Entity{PartitionKey: "d0", RowKey: "0001",
		Properties: map[string]any{"Age": "not a number"}}, store.Replace); err != nil {
		t.Fatal(err)
	}
	var ok, bad int
	for p, err := range r.Query(ctx) {
		if err != nil {
			if p != (person{}) || !strings.Contains(err.Error(), "Age") {
				t.Fatalf("decode failure yielded %+v, %v", p, err)
			}
			bad++
			continue
		}
		ok++
	}
	if ok != 2 || bad != 1 {
		t.Fatalf("%d decoded, %d errors; want 2 and 1", ok, bad)
	}
}
