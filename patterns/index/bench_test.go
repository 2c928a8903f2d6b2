package index_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkView measures the view's lookups against a point get, and the
// model's write of an entity with two partition indexes against a plain
// insert, interleaved in rounds:
//
//   - Repository.Insert (the baseline) against the model's Insert with a
//     unique index (full copies) and a non-unique one (projected): one
//     transaction of the entity, its two copies and the partition's
//     fence and tail;
//   - Repository.Get (the baseline) against model.Get, the view's Find
//     through the full copy (one point read), Find through a projected
//     unique index (the copy, then the entity) and FindAll of one entity
//     through the projected index (a range query, then the entity).
//
// Run it with
//
//	go test -run '^$' -bench '^BenchmarkView$/memstore' -benchtime 1x -v ./patterns/index/
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkView$/azurite-rtt5ms' -benchtime 1x -v ./patterns/index/
//
// azurite-rtt5ms goes through a loopback proxy that holds every answer
// for 5 ms, as a round trip to the service does.
func BenchmarkView(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchView(b, memstore.New(), 40*time.Millisecond, 15) })
	b.Run("azurite", func(b *testing.B) { benchView(b, backendtest.Azurite(b).Store, 300*time.Millisecond, 15) })
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchView(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 400*time.Millisecond, 15)
	})
}

// benchTables creates tables named after base and returns their names.
func benchTables(b *testing.B, st store.Store, base ...string) []string {
	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	var out []string
	for _, n := range base {
		n += suffix
		if err := st.CreateTable(ctx, n); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.DeleteTable(context.WithoutCancel(ctx), n) })
		out = append(out, n)
	}
	return out
}

func benchView(b *testing.B, st store.Store, slice time.Duration, rounds int) {
	ctx := context.Background()
	names := benchTables(b, st, "BenchPlain", "BenchView")
	plain := mapper.NewRepository[Employee](st, names[0])
	eng, err := eventual.New(st, "benchview", nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.Define(st, names[1], &model.Options{Engine: eng},
		model.Unique("email", email),
		model.Unique("phone", func(e *Employee) string { return e.Phone }).Project("FirstName"),
		model.Index("lastname", lastName).Project("FirstName"))
	if err != nil {
		b.Fatal(err)
	}
	v, err := index.New(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	mk := func(prefix string, i int) *Employee {
		id := fmt.Sprintf("%s%08d", prefix, i)
		return &Employee{Dept: "d" + id[len(id)-1:], ID: id, FirstName: "F" + id, LastName: "L" + id,
			Email: id + "@example.com", Phone: "p" + id}
	}
	cfg := interleave.Config{Rounds: rounds, Slice: slice}
	ins, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Insert", Op: func(i int) error { return plain.Insert(ctx, mk("p", i)) }},
		interleave.Case{Name: "model Insert, 3 partition indexes", Op: func(i int) error { return m.Insert(ctx, mk("m", i)) }},
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
	}
	check := func(got *Employee, err error, want *Employee) error {
		if err == nil && got.ID != want.ID {
			return fmt.Errorf("found %s, want %s", got.ID, want.ID)
		}
		return err
	}
	look, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Get", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := plain.Get(ctx, e.Dept, e.ID)
			return check(&got, err, e)
		}},
		interleave.Case{Name: "model.Get", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := m.Get(ctx, e.Dept, e.ID)
			return check(got, err, e)
		}},
		interleave.Case{Name: "view Find, full copy", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := v.Find(ctx, e.Dept, "email", e.Email)
			return check(got, err, e)
		}},
		interleave.Case{Name: "view Find, projected copy", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := v.Find(ctx, e.Dept, "phone", e.Phone)
			return check(got, err, e)
		}},
		interleave.Case{Name: "view FindAll, projected, 1 entity", Op: func(i int) error {
			e := mk("g", i%n)
			k := 0
			for got, err := range v.FindAll(ctx, e.Dept, "lastname", e.LastName) {
				if err := check(got, err, e); err != nil {
					return err
				}
				k++
			}
			if k != 1 {
				return fmt.Errorf("FindAll found %d", k)
			}
			return nil
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", look.Table())
	mi, _ := ins.Row("model Insert, 3 partition indexes")
	fg, _ := look.Row("model.Get")
	ff, _ := look.Row("view Find, full copy")
	fp, _ := look.Row("view Find, projected copy")
	b.ReportMetric(mi.WallRatio.Median, "insert-x")
	b.ReportMetric(fg.WallRatio.Median, "get-x")
	b.ReportMetric(ff.WallRatio.Median, "find-x")
	b.ReportMetric(fp.WallRatio.Median, "find-projected-x")
}

// BenchmarkWritersOfOnePartition measures what the model's partition
// fence costs writers of different entities of one partition: a round
// of 4 concurrent updates (each of its own entity, with two partition
// indexes), the entities in 4 partitions (the baseline: no two writers
// share a fence) against all in one partition (every update commits
// over the one fence, a loser retries after a random pause). A write
// that ran out of attempts (partition.ErrConflict) is counted, not
// retried.
//
//	go test -run '^$' -bench '^BenchmarkWritersOfOnePartition$/memstore' -benchtime 1x -v ./patterns/index/
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkWritersOfOnePartition$/azurite-rtt5ms' -benchtime 1x -v ./patterns/index/
func BenchmarkWritersOfOnePartition(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchWriters(b, memstore.New(), 100*time.Millisecond, 15) })
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchWriters(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 500*time.Millisecond, 9)
	})
}

func benchWriters(b *testing.B, st store.Store, slice time.Duration, rounds int) {
	const writers = 4
	ctx := context.Background()
	names := benchTables(b, st, "BenchWriters")
	eng, err := eventual.New(st, "benchwriters", nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.Define(st, names[0], &model.Options{Engine: eng},
		model.Unique("email", email), model.Index("lastname", lastName))
	if err != nil {
		b.Fatal(err)
	}
	for w := range writers {
		for _, pk := range []string{fmt.Sprintf("spread%d", w), "one"} {
			e := &Employee{Dept: pk, ID: fmt.Sprintf("w%d", w), Email: fmt.Sprintf("w%d@x", w), LastName: "L"}
			if err := m.Insert(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
	}
	var gaveUp, writes atomic.Int64
	round := func(pk func(w int) string) func(i int) error {
		return func(i int) error {
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					e := &Employee{Dept: pk(w), ID: fmt.Sprintf("w%d", w), Phone: fmt.Sprint(i)}
					err := m.Update(ctx, e, store.Merge)
					writes.Add(1)
					if errors.Is(err, partition.ErrConflict) {
						gaveUp.Add(1)
						err = nil
					}
					errs[w] = err
				}()
			}
			wg.Wait()
			return errors.Join(errs...)
		}
	}
	cfg := interleave.Config{Rounds: rounds, Slice: slice}
	rep, err := interleave.Measure(cfg,
		interleave.Case{Name: fmt.Sprintf("%d concurrent updates, %d partitions", writers, writers), Ops: writers,
			Op: round(func(w int) string { return fmt.Sprintf("spread%d", w) })},
		interleave.Case{Name: fmt.Sprintf("%d concurrent updates, one partition", writers), Ops: writers,
			Op: round(func(int) string { return "one" })},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", rep.Table())
	b.Logf("writes that ran out of attempts (partition.ErrConflict): %d of %d", gaveUp.Load(), writes.Load())
	one, _ := rep.Row(fmt.Sprintf("%d concurrent updates, one partition", writers))
	b.ReportMetric(one.WallRatio.Median, "one-partition-x")
}
