package indexentity_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkLookup measures, in interleaved rounds, what the pattern is
// for: finding the M Joneses among N employees of 4 departments by their
// list (FindAll: the list, then M point reads, 8 at a time) against the
// query that finds them without one (a table scan with LastName eq
// 'Jones'; for the SamePartition list, a partition scan of Sales with
// the same condition, against the M/4 Joneses of Sales). It also compares
// an insert through each placement (for InBlobs and SeparatePartition
// the writer's side: the list change is the engine worker's) with a plain
// Repository.Insert, and an update through SamePartition that moves an
// employee from one last name's list to another's. Run it with
//
//	go test -run '^$' -bench Lookup -benchtime 1x ./patterns/indexentity/
//	scripts/with-azurite.sh go test -run '^$' -bench Lookup -benchtime 1x ./patterns/indexentity/
//
// TABLEKIT_INDEXENTITY_N sets N (default 5,000), TABLEKIT_INDEXENTITY_M
// sets M (a multiple of 4, default 8).
func BenchmarkLookup(b *testing.B) {
	n, m := 5000, 8
	if v, err := strconv.Atoi(os.Getenv("TABLEKIT_INDEXENTITY_N")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("TABLEKIT_INDEXENTITY_M")); err == nil && v > 0 && v%4 == 0 {
		m = v
	}
	b.Run("memstore", func(b *testing.B) { benchLookup(b, backendtest.Memstore(), n, m) })
	b.Run("azurite", func(b *testing.B) { benchLookup(b, backendtest.Azurite(b), n, m) })
}

func benchLookup(b *testing.B, be backendtest.Backend, n, m int) {
	ctx := context.Background()
	st := be.Store
	sfx := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
	tables := map[string]string{}
	for _, t := range []string{"Same", "Sep", "Blob", "Plain", "Lists"} {
		tables[t] = be.NewTable(b, "bench"+t)
	}
	cont := "benchlists" + sfx
	if err := st.Container(cont).Create(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Container(cont).Delete(context.Background()) })
	eng, err := eventual.New(st, "benchq"+sfx, &eventual.Options{Concurrency: 16})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = st.Queue("benchq" + sfx).Delete(context.Background())
		_ = st.Queue("benchq" + sfx + "-poison").Delete(context.Background())
	})
	list := indexentity.List("lastname", lastName)
	same, err := indexentity.New(st, tables["Same"], nil, list)
	if err != nil {
		b.Fatal(err)
	}
	sep, err := indexentity.New(st, tables["Sep"], &indexentity.Options{Placement: indexentity.SeparatePartition, Engine: eng, IndexTable: tables["Lists"]}, list)
	if err != nil {
		b.Fatal(err)
	}
	blob, err := indexentity.New(st, tables["Blob"], &indexentity.Options{Placement: indexentity.InBlobs, Engine: eng, Container: cont}, list)
	if err != nil {
		b.Fatal(err)
	}
	depts := []string{"Sales", "Marketing", "Finance", "Support"}
	// The other employees, written in bulk into every table (a point read
	// may cost more in a larger table): only the Joneses' list is read, so
	// theirs need not exist.
	var others []*Employee
	for i := range n {
		others = append(others, &Employee{Department: depts[i%4], ID: fmt.Sprintf("emp_%06d", i), FirstName: "F", LastName: fmt.Sprintf("Name%04d", i%997)})
	}
	for _, t := range []string{"Same", "Sep", "Blob"} {
		if _, err := mapper.NewRepository[Employee](st, tables[t]).BulkWrite(ctx, store.ActionInsert, others, store.BulkOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range m {
		for _, x := range []*indexentity.Table[Employee]{same, sep, blob} {
			e := Employee{Department: depts[i%4], ID: fmt.Sprintf("emp_j%05d", i), FirstName: "J", LastName: "Jones"}
			if err := x.Insert(ctx, &e); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := eng.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	count := func(seq func(func(Employee, error) bool), want int) error {
		got := 0
		for _, err := range seq {
			if err != nil {
				return err
			}
			got++
		}
		if got != want {
			return fmt.Errorf("found %d Joneses, want %d", got, want)
		}
		return nil
	}
	repo := mapper.NewRepository[Employee](st, tables["Sep"])
	jones := mapper.Where[Employee]("LastName").Eq("Jones")
	cfg := interleave.Config{Rounds: 12, Slice: 60 * time.Millisecond}
	global, err := interleave.Measure(cfg,
		interleave.Case{Name: "table scan, LastName eq 'Jones'", Op: func(int) error { return count(repo.Query(ctx, jones), m) }},
		interleave.Case{Name: "FindAll, SeparatePartition list", Op: func(int) error { return count(sep.FindAll(ctx, "", "lastname", "Jones"), m) }},
		interleave.Case{Name: "FindAll, InBlobs list", Op: func(int) error { return count(blob.FindAll(ctx, "", "lastname", "Jones"), m) }},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s, %d employees and %d Joneses:\n%s", be.Name, n, m, global.Table())
	sales := mapper.NewRepository[Employee](st, tables["Same"]).Partition("Sales")
	part, err := interleave.Measure(cfg,
		interleave.Case{Name: "partition scan of Sales, LastName eq 'Jones'", Op: func(int) error { return count(sales.Query(ctx, jones), m/4) }},
		interleave.Case{Name: "FindAll, SamePartition list of Sales", Op: func(int) error { return count(same.FindAll(ctx, "Sales", "lastname", "Jones"), m/4) }},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s, %d employees and %d Joneses in 4 departments, %d in Sales:\n%s", be.Name, n, m, m/4, part.Table())

	plain := mapper.NewRepository[Employee](st, tables["Plain"])
	var seq atomic.Int64
	mk := func() *Employee {
		i := seq.Add(1)
		return &Employee{Department: depts[i%4], ID: fmt.Sprintf("emp_w%08d", i), FirstName: "W", LastName: fmt.Sprintf("Name%04d", i%997)}
	}
	// The employees the SamePartition update moves from one last name to
	// another, each update conditional on the ETag the last one returned.
	moving := make([]*Employee, 64)
	for i := range moving {
		moving[i] = &Employee{Department: depts[i%4], ID: fmt.Sprintf("emp_m%05d", i), FirstName: "M", LastName: "Name0000"}
		if err := same.Insert(ctx, moving[i]); err != nil {
			b.Fatal(err)
		}
	}
	writes, err := interleave.Measure(interleave.Config{Rounds: 12, Slice: 60 * time.Millisecond},
		interleave.Case{Name: "Repository.Insert", Op: func(int) error { return plain.Insert(ctx, mk()) }},
		interleave.Case{Name: "Insert, SamePartition", Op: func(int) error { return same.Insert(ctx, mk()) }},
		interleave.Case{Name: "Update moving the listed value, SamePartition", Op: func(i int) error {
			e := moving[i%len(moving)]
			e.LastName = fmt.Sprintf("Name%04d", (i+1)%997)
			return same.Update(ctx, e)
		}},
		interleave.Case{Name: "Insert, SeparatePartition (writer)", Op: func(int) error { return sep.Insert(ctx, mk()) }},
		interleave.Case{Name: "Insert, InBlobs (writer)", Op: func(int) error { return blob.Insert(ctx, mk()) }},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s, inserts (997 last names):\n%s", be.Name, writes.Table())
	if r, err := global.Row("FindAll, SeparatePartition list"); err == nil {
		b.ReportMetric(r.WallRatio.Median, "sep-lookup-x")
	}
	if r, err := part.Row("FindAll, SamePartition list of Sales"); err == nil {
		b.ReportMetric(r.WallRatio.Median, "same-lookup-x")
	}
}
