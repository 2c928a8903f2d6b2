package wide_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/store"
)

// Wide500 is a value of 500 properties read into a struct: two fields
// and 498 counters in the extra map.
type Wide500 struct {
	PK     string         `table:",pk"`
	RK     string         `table:",rk"`
	Name   string         `table:"Name"`
	Dept   string         `table:"Dept"`
	Counts map[string]any `table:",extra"`
}

// props returns n properties of mixed types, about 20 bytes each by the
// size formula.
func props(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		name := fmt.Sprintf("P%03d", i)
		switch i % 4 {
		case 0:
			m[name] = int64(i)
		case 1:
			m[name] = "value " + strconv.Itoa(i)
		case 2:
			m[name] = float64(i) / 3
		default:
			m[name] = int32(i)
		}
	}
	return m
}

// BenchmarkRead measures what reading a wide value of 500 properties
// costs against point reads of ordinary entities, interleaved in short
// rounds on one backend, each case the path users call end to end:
//
//   - "point Get, 20 properties" (the baseline): store.Table.Get of an
//     ordinary entity;
//   - "point Get, 250 properties": store.Table.Get of an entity as wide as
//     one entity goes;
//   - "two point Gets, 250 properties each": the guide's way to read a
//     logical entity of two physical ones;
//   - "wide Get, 500 properties": Wide[Properties].Get, one range query of
//     the value's two rows, checked and assembled;
//   - "wide Get, 500 properties into a struct": Wide[Wide500].Get, the same
//     decoded by the mapper.
//
// Run it once: go test -run '^$' -bench Read -benchtime 1x ./patterns/wide/
// (with scripts/with-azurite.sh for the Azurite figures; TABLEKIT_WIDE_ROUNDS
// sets the rounds, default 15).
func BenchmarkRead(b *testing.B) {
	rounds := 15
	if s := os.Getenv("TABLEKIT_WIDE_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	for _, be := range []func(testing.TB) backendtest.Backend{
		func(testing.TB) backendtest.Backend { return backendtest.Memstore() },
		backendtest.Azurite,
	} {
		bk := be(b)
		b.Run(bk.Name, func(b *testing.B) {
			ctx := context.Background()
			name := bk.NewTable(b, "bench")
			tbl := bk.Store.Table(name)
			small := store.Entity{PartitionKey: "p", RowKey: "small", Properties: props(20)}
			full := store.Entity{PartitionKey: "p", RowKey: "full", Properties: props(250)}
			half := store.Entity{PartitionKey: "p", RowKey: "half", Properties: props(250)}
			for _, e := range []store.Entity{small, full, half} {
				if _, err := tbl.Insert(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
			m, err := wide.New[wide.Properties](bk.Store, name, nil)
			if err != nil {
				b.Fatal(err)
			}
			v := props(500)
			if _, err := m.Put(ctx, "p", "map", &v, ""); err != nil {
				b.Fatal(err)
			}
			s, err := wide.New[Wide500](bk.Store, name, nil)
			if err != nil {
				b.Fatal(err)
			}
			w := Wide500{Name: "n", Dept: "d", Counts: props(498)}
			if _, err := s.Put(ctx, "p", "struct", &w, ""); err != nil {
				b.Fatal(err)
			}
			if r, err := m.Read(ctx, "p", "map"); err != nil || r.Rows != 2 || len(r.Value) != 500 {
				b.Fatalf("the wide value: %v", err)
			}
			rep, err := interleave.Measure(interleave.Config{Rounds: rounds, Slice: 50 * time.Millisecond},
				interleave.Case{Name: "point Get, 20 properties", Op: func(int) error {
					_, err := tbl.Get(ctx, "p", "small", nil)
					return err
				}},
				interleave.Case{Name: "point Get, 250 properties", Op: func(int) error {
					_, err := tbl.Get(ctx, "p", "full", nil)
					return err
				}},
				interleave.Case{Name: "two point Gets, 250 properties each", Op: func(int) error {
					if _, err := tbl.Get(ctx, "p", "full", nil); err != nil {
						return err
					}
					_, err := tbl.Get(ctx, "p", "half", nil)
					return err
				}},
				interleave.Case{Name: "wide Get, 500 properties", Op: func(int) error {
					_, _, err := m.Get(ctx, "p", "map")
					return err
				}},
				interleave.Case{Name: "wide Get, 500 properties into a struct", Op: func(int) error {
					_, _, err := s.Get(ctx, "p", "struct")
					return err
				}},
			)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("\n%s", rep.Table())
			for _, c := range []struct{ name, unit string }{
				{"wide Get, 500 properties", "wide-x"},
				{"wide Get, 500 properties into a struct", "struct-x"},
			} {
				row, _ := rep.Row(c.name)
				b.ReportMetric(row.WallRatio.Median, c.unit)
			}
		})
	}
}
