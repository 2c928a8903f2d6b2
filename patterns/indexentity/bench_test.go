package indexentity_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// BenchmarkLookup measures, in interleaved rounds against a point read of
// one entity (model.Get):
//
//   - the Joneses of one department (8 of them) through the view's List:
//     Keys (the list, one range query) and FindAll (the list, then 8
//     point reads, 8 at a time);
//   - the Joneses of every department (8 of them, in 4 departments)
//     through the global index: Keys (one range query of the index rows,
//     keys only) and FindAll;
//   - Keys of a value held by N entities of one department (default
//     3,000; TABLEKIT_INDEXENTITY_N), its list in segments of 4,096 UTF-16
//     units (Options.ListSegmentUnits);
//
// and, against an insert and a delete through a model that declares
// nothing, an insert and a delete of an entity that joins and leaves that
// long list (each reads the value's segments and rewrites one). Run it
// with
//
//	go test -run '^$' -bench Lookup/memstore -benchtime 1x -v ./patterns/indexentity/
//	scripts/with-azurite.sh go test -run '^$' -bench Lookup/azurite -benchtime 1x -v ./patterns/indexentity/
func BenchmarkLookup(b *testing.B) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("TABLEKIT_INDEXENTITY_N")); err == nil && v > 0 {
		n = v
	}
	b.Run("memstore", func(b *testing.B) { benchLookup(b, memstore.New(), n, 40*time.Millisecond) })
	b.Run("azurite", func(b *testing.B) { benchLookup(b, backendtest.Azurite(b).Store, n, 300*time.Millisecond) })
}

func benchLookup(b *testing.B, st store.Store, n int, slice time.Duration) {
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
	table, gTable, plainTable := "BenchIE"+sfx, "BenchIEG"+sfx, "BenchIEPlain"+sfx
	for _, t := range []string{table, gTable, plainTable} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		defer st.DeleteTable(context.WithoutCancel(ctx), t)
	}
	eng, err := eventual.New(st, "benchie"+sfx, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	m, err := model.Define(st, table, &model.Options{Engine: eng, ListSegmentUnits: 4096}, model.List("family", lastName))
	if err != nil {
		b.Fatal(err)
	}
	g, err := model.Define(st, gTable, &model.Options{Engine: eng}, model.GlobalIndex("lastname", lastName))
	if err != nil {
		b.Fatal(err)
	}
	vg, err := indexentity.New(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	plain, err := model.Define[Employee](st, plainTable, &model.Options{Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	v, err := indexentity.New(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	depts := []string{"Sales", "Ops", "HR", "Legal"}
	for i := range 8 {
		if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: fmt.Sprintf("s%02d", i), LastName: "Jones"}); err != nil {
			b.Fatal(err)
		}
		if err := g.Insert(ctx, &Employee{Dept: depts[i%4], ID: fmt.Sprintf("g%02d", i), LastName: "Lee"}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		if err := m.Insert(ctx, &Employee{Dept: "Big", ID: fmt.Sprintf("emp%09d", i), LastName: "Many"}); err != nil {
			b.Fatal(err)
		}
	}
	for {
		k, err := eng.ProcessOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if k == 0 {
			break
		}
	}
	segs := 0
	rng, err := keys.PrefixOf("n", "family", "Many")
	if err != nil {
		b.Fatal(err)
	}
	q := store.Query{Filter: filter.PK.Eq("Big").And(filter.RK.InRange(rng)).String(), Select: []string{"RowKey"}}
	for _, err := range store.All(ctx, st.Table(table), q) {
		if err != nil {
			b.Fatal(err)
		}
		segs++
	}
	b.Logf("the list of %d ids: %d segments", n, segs)

	want := func(got, want int) error {
		if got != want {
			return fmt.Errorf("found %d, want %d", got, want)
		}
		return nil
	}
	count := func(v *indexentity.View[Employee], pk, list, value string) (int, error) {
		k := 0
		for _, err := range v.FindAll(ctx, pk, list, value) {
			if err != nil {
				return k, err
			}
			k++
		}
		return k, nil
	}
	cfg := interleave.Config{Rounds: 15, Slice: slice}
	look, err := interleave.Measure(cfg,
		interleave.Case{Name: "model.Get (one entity)", Op: func(i int) error {
			_, err := m.Get(ctx, "Sales", fmt.Sprintf("s%02d", i%8))
			return err
		}},
		interleave.Case{Name: "Keys, List (8 ids)", Op: func(int) error {
			ks, err := v.Keys(ctx, "Sales", "family", "Jones")
			if err != nil {
				return err
			}
			return want(len(ks), 8)
		}},
		interleave.Case{Name: "FindAll, List (8 entities)", Op: func(int) error {
			k, err := count(v, "Sales", "family", "Jones")
			if err != nil {
				return err
			}
			return want(k, 8)
		}},
		interleave.Case{Name: "Keys, global index (8 keys, 4 partitions)", Op: func(int) error {
			ks, err := vg.Keys(ctx, "", "lastname", "Lee")
			if err != nil {
				return err
			}
			return want(len(ks), 8)
		}},
		interleave.Case{Name: "FindAll, global index (8 entities)", Op: func(int) error {
			k, err := count(vg, "", "lastname", "Lee")
			if err != nil {
				return err
			}
			return want(k, 8)
		}},
		interleave.Case{Name: fmt.Sprintf("Keys, List (%d ids, %d segments)", n, segs), Op: func(int) error {
			ks, err := v.Keys(ctx, "Big", "family", "Many")
			if err != nil {
				return err
			}
			if len(ks) < n {
				return want(len(ks), n)
			}
			return nil
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", look.Table())
	ins, err := interleave.Measure(cfg,
		interleave.Case{Name: "model Insert and Delete (no feature)", Op: func(i int) error {
			id := fmt.Sprintf("p%09d", i)
			if err := plain.Insert(ctx, &Employee{Dept: "Big", ID: id, LastName: "Many"}); err != nil {
				return err
			}
			return plain.Delete(ctx, "Big", id, "")
		}},
		interleave.Case{Name: fmt.Sprintf("model Insert and Delete, joining and leaving the list of %d ids", n), Op: func(i int) error {
			// Beside an existing id, anywhere in the list.
			id := fmt.Sprintf("emp%09d-%d", (i*7919)%n, i)
			if err := m.Insert(ctx, &Employee{Dept: "Big", ID: id, LastName: "Many"}); err != nil {
				return err
			}
			return m.Delete(ctx, "Big", id, "")
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", ins.Table())
	if r, err := look.Row("FindAll, List (8 entities)"); err == nil {
		b.ReportMetric(r.WallRatio.Median, "findall-x")
	}
	if r, err := ins.Row(fmt.Sprintf("model Insert and Delete, joining and leaving the list of %d ids", n)); err == nil {
		b.ReportMetric(r.WallRatio.Median, "insert-x")
	}
}
