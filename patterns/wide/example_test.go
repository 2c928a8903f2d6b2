package wide_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/store"
)

// Employee has more properties than one entity holds: a count of the
// instant messages sent on each of 365 days (the extra map keeps them)
// beside its fields, and a photo larger than one binary property.
type Employee struct {
	Department string         `table:",pk"`
	ID         string         `table:",rk"`
	ETag       store.ETag     `table:",etag"`
	Name       string         `table:"Name"`
	Photo      []byte         `table:"Photo,omitempty"`
	Days       map[string]any `table:",extra"`
}

func newEmployee() Employee {
	e := Employee{Name: "Ada Lovelace", Photo: bytes.Repeat([]byte{0xFF, 0xD8}, 100_000), Days: map[string]any{}}
	for d := range 365 {
		e.Days[fmt.Sprintf("Day%03d", d)] = int32(d % 5)
	}
	return e
}

func ExampleWide_Put() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Employees"); err != nil {
		panic(err)
	}
	employees, err := wide.New[Employee](st, "Employees", nil)
	if err != nil {
		panic(err)
	}
	e := newEmployee()
	// "" creates the value: one transaction writes all its rows.
	if _, err := employees.Put(ctx, "Sales", "emp_000123", &e, ""); err != nil {
		panic(err)
	}
	got, _, err := employees.Get(ctx, "Sales", "emp_000123")
	if err != nil {
		panic(err)
	}
	fmt.Println(got.Name, "of", got.Department, "with", len(got.Days), "daily counts and a photo of", len(got.Photo), "bytes")
	fmt.Println("day 364:", got.Days["Day364"], "ETag set:", got.ETag == e.ETag)
	// Output:
	// Ada Lovelace of Sales with 365 daily counts and a photo of 200000 bytes
	// day 364: 4 ETag set: true
}

func ExampleWide_Read() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Employees"); err != nil {
		panic(err)
	}
	employees, err := wide.New[Employee](st, "Employees", nil)
	if err != nil {
		panic(err)
	}
	e := newEmployee()
	if _, err := employees.Put(ctx, "Sales", "emp_000123", &e, ""); err != nil {
		panic(err)
	}
	s, err := employees.Read(ctx, "Sales", "emp_000123")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d properties in %d rows, version %d, read with %d request\n", len(s.Value.Days)+2, s.Rows, s.Version, s.Requests)
	// Output:
	// 367 properties in 2 rows, version 1, read with 1 request
}

// Two writers that read the same version: the header's If-Match lets one
// write and refuses the other, which reads again.
func ExampleConditionError() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Docs"); err != nil {
		panic(err)
	}
	docs, err := wide.New[wide.Properties](st, "Docs", nil)
	if err != nil {
		panic(err)
	}
	v := wide.Properties{"Title": "draft", "Body": strings.Repeat("text ", 20_000)}
	etag, err := docs.Put(ctx, "team", "spec", &v, "")
	if err != nil {
		panic(err)
	}
	a := wide.Properties{"Title": "Alice's edit", "Body": "short"}
	b := wide.Properties{"Title": "Bob's edit", "Body": strings.Repeat("more text ", 20_000)}
	_, errA := docs.Put(ctx, "team", "spec", &a, etag)
	_, errB := docs.Put(ctx, "team", "spec", &b, etag)
	fmt.Println("Alice:", errA)
	fmt.Println("Bob conflicts:", errors.Is(errB, partition.ErrChanged), errors.Is(errB, store.ErrPreconditionFailed))
	got, _, err := docs.Get(ctx, "team", "spec")
	if err != nil {
		panic(err)
	}
	fmt.Println("stored:", got["Title"], got["Body"])
	// Output:
	// Alice: <nil>
	// Bob conflicts: true true
	// stored: Alice's edit short
}

// A value that cannot be split into one transaction is refused before
// anything is sent.
func ExampleTooLargeError() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Docs"); err != nil {
		panic(err)
	}
	docs, err := wide.New[wide.Properties](st, "Docs", nil)
	if err != nil {
		panic(err)
	}
	v := wide.Properties{"Scan": make([]byte, 5<<20)}
	_, err = docs.Put(ctx, "team", "scan", &v, "")
	var tl *wide.TooLargeError
	fmt.Println(errors.As(err, &tl), errors.Is(err, store.ErrTooLarge), store.Code(err))
	_, _, err = docs.Get(ctx, "team", "scan")
	fmt.Println("written:", !errors.Is(err, store.ErrNotFound))
	// Output:
	// true true RequestBodyTooLarge
	// written: false
}

func ExampleWide_IDs() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Docs"); err != nil {
		panic(err)
	}
	docs, err := wide.New[wide.Properties](st, "Docs", nil)
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"spec", "notes", "plan"} {
		v := wide.Properties{"Title": id}
		if _, err := docs.Put(ctx, "team", id, &v, ""); err != nil {
			panic(err)
		}
	}
	if err := docs.Delete(ctx, "team", "notes", store.ETagAny); err != nil {
		panic(err)
	}
	// Rows of another kind in the same partition are not listed.
	if _, err := st.Table("Docs").Insert(ctx, store.Entity{PartitionKey: "team", RowKey: "member_ada"}); err != nil {
		panic(err)
	}
	for id, err := range docs.IDs(ctx, "team") {
		if err != nil {
			panic(err)
		}
		fmt.Println(id)
	}
	// Output:
	// plan
	// spec
}
