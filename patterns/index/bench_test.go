package index_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// BenchmarkIndexed compares, in interleaved rounds, the paths users call:
// an insert with two unique indexes (one transaction of three rows)
// against a plain Repository.Insert and against the same three rows
// written as three inserts, and a lookup by a secondary index (Find)
// against a point Get. Run it with
//
//	go test -run '^$' -bench Indexed -benchtime 1x -v ./patterns/index/
//	scripts/with-azurite.sh go test -run '^$' -bench Indexed/azurite -benchtime 1x -v ./patterns/index/
//
// Indexed/azurite-rtt5ms runs the same against Azurite behind a 5 ms
// round trip.
func BenchmarkIndexed(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchIndexed(b, memstore.New(), 40*time.Millisecond) })
	b.Run("azurite", func(b *testing.B) {
		st, err := azstore.NewFromConnectionString(azuritetest.Conn(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		benchIndexed(b, st, 300*time.Millisecond)
	})
	// Azurite behind a loopback proxy that delays every request by 5 ms,
	// as a network round trip to the service does.
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchIndexed(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 300*time.Millisecond)
	})
}

func benchIndexed(b *testing.B, st store.Store, slice time.Duration) {
	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	plainName, indexedName, threeName := "BenchPlain"+suffix, "BenchIndexed"+suffix, "BenchThree"+suffix
	for _, t := range []string{plainName, indexedName, threeName} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		defer st.DeleteTable(context.WithoutCancel(ctx), t)
	}
	plain := mapper.NewRepository[Employee](st, plainName)
	three := st.Table(threeName)
	x, err := index.New[Employee](st, indexedName,
		index.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		index.Unique[Employee]("badge", func(e *Employee) string { return e.FirstName }))
	if err != nil {
		b.Fatal(err)
	}
	mk := func(prefix string, i int) *Employee {
		id := fmt.Sprintf("%s%08d", prefix, i)
		return &Employee{Department: "d" + id[len(id)-1:], ID: "emp_" + id, FirstName: "b" + id,
			LastName: "Jones", Email: id + "@example.com", Age: 40}
	}
	cfg := interleave.Config{Rounds: 15, Slice: slice}
	rep, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Insert", Op: func(i int) error { return plain.Insert(ctx, mk("p", i)) }},
		interleave.Case{Name: "indexed Insert (2 unique indexes, one transaction)", Op: func(i int) error { return x.Insert(ctx, mk("x", i)) }},
		interleave.Case{Name: "the same 3 rows as 3 inserts", Op: func(i int) error {
			e, err := mapper.Encode(mk("t", i))
			if err != nil {
				return err
			}
			for _, rk := range []string{e.RowKey, "badge_" + e.RowKey, "email_" + e.RowKey} {
				c := e
				c.RowKey = rk
				if _, err := three.Insert(ctx, c); err != nil {
					return err
				}
			}
			return nil
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", rep.Table())
	// Lookups over rows of their own.
	const n = 2000
	for i := range n {
		if err := plain.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
		if err := x.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
	}
	look, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Get", Op: func(i int) error {
			e := mk("g", i%n)
			_, err := plain.Get(ctx, e.Department, e.ID)
			return err
		}},
		interleave.Case{Name: "Find by email", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := x.Find(ctx, e.Department, "email", e.Email)
			if err == nil && got.ID != e.ID {
				return fmt.Errorf("found %s, want %s", got.ID, e.ID)
			}
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", look.Table())
	ins, _ := rep.Row("indexed Insert (2 unique indexes, one transaction)")
	find, _ := look.Row("Find by email")
	b.ReportMetric(ins.WallRatio.Median, "insert-x")
	b.ReportMetric(find.WallRatio.Median, "find-x")
}
