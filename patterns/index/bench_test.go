package index_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/index"
)

// BenchmarkIndexedWrites compares, on memstore and in interleaved rounds,
// the paths users call: an insert with two unique indexes (one
// transaction of three rows) against a plain Repository.Insert, and a
// lookup by a secondary index (Find) against a point Get. Run it with
//
//	go test -run '^$' -bench IndexedWrites -benchtime 1x ./patterns/index/
func BenchmarkIndexedWrites(b *testing.B) {
	ctx := context.Background()
	st := memstore.New()
	for _, t := range []string{"Plain", "Indexed"} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	plain := mapper.NewRepository[Employee](st, "Plain")
	x, err := index.New[Employee](st, "Indexed",
		index.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		index.Unique[Employee]("badge", func(e *Employee) string { return e.FirstName }))
	if err != nil {
		b.Fatal(err)
	}
	mk := func(prefix string, i int) *Employee {
		return &Employee{Department: fmt.Sprintf("d%02d", i%16), ID: fmt.Sprintf("emp_%s%08d", prefix, i),
			FirstName: fmt.Sprintf("b%s%08d", prefix, i), LastName: "Jones", Email: fmt.Sprintf("%s%08d@example.com", prefix, i), Age: 40}
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: 40 * time.Millisecond},
		interleave.Case{Name: "Repository.Insert", Op: func(i int) error { return plain.Insert(ctx, mk("p", i)) }},
		interleave.Case{Name: "indexed Insert (2 unique indexes)", Op: func(i int) error { return x.Insert(ctx, mk("x", i)) }},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", rep.Table())
	// Lookups over what the inserts left.
	for i := range 2000 {
		if err := plain.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
		if err := x.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
	}
	look, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: 40 * time.Millisecond},
		interleave.Case{Name: "Repository.Get", Op: func(i int) error {
			e := mk("g", i%2000)
			_, err := plain.Get(ctx, e.Department, e.ID)
			return err
		}},
		interleave.Case{Name: "Find by email", Op: func(i int) error {
			e := mk("g", i%2000)
			_, err := x.Find(ctx, e.Department, "email", e.Email)
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", look.Table())
	ins, _ := rep.Row("indexed Insert (2 unique indexes)")
	find, _ := look.Row("Find by email")
	b.ReportMetric(ins.WallRatio.Median, "insert-x")
	b.ReportMetric(find.WallRatio.Median, "find-x")
}
