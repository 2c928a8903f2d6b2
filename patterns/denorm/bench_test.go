package denorm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkSourceOf measures the view's read of a department's source
// (SourceOf: the department row, then the manager it names) against the
// point read of the department row alone (what a reader of the
// department pays for the copy itself), interleaved in short rounds.
// Run it with
//
//	go test -run '^$' -bench '^BenchmarkSourceOf$/memstore' -benchtime 1x -v ./patterns/denorm/
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkSourceOf$/azurite-rtt5ms' -benchtime 1x -v ./patterns/denorm/
//
// azurite-rtt5ms goes through a loopback proxy that holds every answer
// for 5 ms, as a round trip to the service does.
func BenchmarkSourceOf(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchSourceOf(b, memstore.New(), 40*time.Millisecond) })
	b.Run("azurite", func(b *testing.B) { benchSourceOf(b, backendtest.Azurite(b).Store, 300*time.Millisecond) })
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchSourceOf(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 400*time.Millisecond)
	})
}

func benchSourceOf(b *testing.B, st store.Store, slice time.Duration) {
	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	staff, depts, queue := "BenchStaff"+suffix, "BenchDepts"+suffix, "benchdn"+suffix
	for _, t := range []string{staff, depts} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.DeleteTable(context.Background(), t) })
	}
	eng, err := eventual.New(st, queue, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		for _, q := range []string{queue, queue + "-poison"} {
			_ = st.Queue(q).Delete(context.Background())
		}
	})
	m, err := model.Define(st, staff, &model.Options{Engine: eng},
		model.CopyToEach("manager", []string{depts}, targets(depts, "Teams"), "Name", "Phone").Rename("Name", "ManagerName"))
	if err != nil {
		b.Fatal(err)
	}
	v, err := denorm.New(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100
	dept := func(i int) string { return fmt.Sprintf("d%03d", i%n) }
	for i := range n {
		if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: dept(i), Properties: map[string]any{"Budget": int64(i)}}); err != nil {
			b.Fatal(err)
		}
		if err := m.Insert(ctx, &Employee{Unit: "u1", ID: fmt.Sprintf("e%03d", i), Name: "Name", Phone: "555", Manages: dept(i)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := eng.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	rep, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: slice},
		interleave.Case{Name: "Get of the department row", Op: func(i int) error {
			_, err := st.Table(depts).Get(ctx, "dept", dept(i), nil)
			return err
		}},
		interleave.Case{Name: "View.SourceOf (the row, then its source)", Op: func(i int) error {
			c, err := v.SourceOf(ctx, "manager", depts, "dept", dept(i))
			if err == nil && (c.Entity == nil || c.Entity.Manages != dept(i)) {
				return fmt.Errorf("SourceOf %s: %+v", dept(i), c)
			}
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", rep.Table())
	r, _ := rep.Row("View.SourceOf (the row, then its source)")
	b.ReportMetric(r.WallRatio.Median, "sourceof-x")
}
