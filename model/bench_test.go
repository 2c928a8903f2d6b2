package model_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkModel measures what the model's declarations cost against
// the plain repository, interleaved in short rounds:
//
//   - an insert of an entity with a unique index in its partition, an
//     index in another partition and a denormalized copy elsewhere,
//     against Repository.Insert (one round trip);
//   - a lookup through the index in the entity's partition (FindIn) and
//     through a unique index in another partition (Find, read-your-writes
//     included), against Repository.Get.
//
// Run it with
//
//	go test -run '^$' -bench '^BenchmarkModel$/memstore' -benchtime 1x -v ./model/
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkModel$/azurite-rtt5ms' -benchtime 1x -v ./model/
//
// azurite-rtt5ms goes through a loopback proxy that holds every answer
// for 5 ms, as a round trip to the service does.
func BenchmarkModel(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchModel(b, memstore.New(), 40*time.Millisecond, 15) })
	b.Run("azurite", func(b *testing.B) { benchModel(b, backendtest.Azurite(b).Store, 300*time.Millisecond, 15) })
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchModel(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 400*time.Millisecond, 15)
	})
}

func benchModel(b *testing.B, st store.Store, slice time.Duration, rounds int) {
	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	plainName, modelName, cardName := "BenchPlain"+suffix, "BenchModel"+suffix, "BenchCards"+suffix
	for _, t := range []string{plainName, modelName, cardName} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		defer st.DeleteTable(context.WithoutCancel(ctx), t)
	}
	eng, err := eventual.New(st, "bench"+suffix, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	plain := mapper.NewRepository[Employee](st, plainName)
	card := func(e *Employee) (string, string) { return "cards", mustJoin(e.Dept, e.ID) }
	m, err := model.Define(st, modelName, &model.Options{Engine: eng},
		model.Unique("badge", func(e *Employee) string { return e.Badge }),
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }),
		model.CopyTo("card", cardName, card, "Email", "LastName"))
	if err != nil {
		b.Fatal(err)
	}
	// A second model over the same table for the lookup through a unique
	// index in another partition.
	mu, err := model.Define(st, modelName+"u", &model.Options{Engine: eng},
		model.GlobalUnique("email", func(e *Employee) string { return e.Email }))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.CreateTable(ctx, modelName+"u"); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(context.WithoutCancel(ctx), modelName+"u")
	mk := func(prefix string, i int) *Employee {
		id := fmt.Sprintf("%s%08d", prefix, i)
		return &Employee{Dept: "d" + id[len(id)-1:], ID: id, Badge: "b" + id,
			LastName: "L" + id, Email: id + "@example.com", N: i}
	}
	cfg := interleave.Config{Rounds: rounds, Slice: slice}
	ins, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Insert", Op: func(i int) error { return plain.Insert(ctx, mk("p", i)) }},
		interleave.Case{Name: "model Insert (unique here, index elsewhere, a copy)", Op: func(i int) error { return m.Insert(ctx, mk("m", i)) }},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", ins.Table())
	const n = 300
	for i := range n {
		if err := plain.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
		if err := m.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
		if err := mu.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
	}
	look, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Get", Op: func(i int) error {
			e := mk("g", i%n)
			_, err := plain.Get(ctx, e.Dept, e.ID)
			return err
		}},
		interleave.Case{Name: "FindIn (unique index in the partition)", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := m.FindIn(ctx, e.Dept, "badge", e.Badge)
			if err == nil && got.ID != e.ID {
				return fmt.Errorf("found %s, want %s", got.ID, e.ID)
			}
			return err
		}},
		interleave.Case{Name: "Find (unique index in another partition)", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := mu.Find(ctx, "email", e.Email)
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
	mi, _ := ins.Row("model Insert (unique here, index elsewhere, a copy)")
	fi, _ := look.Row("FindIn (unique index in the partition)")
	fg, _ := look.Row("Find (unique index in another partition)")
	b.ReportMetric(mi.WallRatio.Median, "insert-x")
	b.ReportMetric(mi.CPURatio.Median, "insert-cpu-x")
	b.ReportMetric(fi.WallRatio.Median, "findin-x")
	b.ReportMetric(fg.WallRatio.Median, "find-x")
}
