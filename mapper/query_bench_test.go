package mapper

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkQueryMemstore reads a partition of 1,000 values per operation
// on memstore with Repository.Query, interleaved: through store.Entity
// pages decoded into the struct (the route before the typed page, forced
// by a table wrapped so that it lacks store.TypedTable), the baseline;
// through the typed page (QueryInto, each record read straight into the
// struct); and the store query alone, store.Entity pages with nothing
// decoded. Figures are per entity. Run it once:
//
//	go test -run '^$' -bench QueryMemstore -benchtime 1x ./mapper/
func BenchmarkQueryMemstore(b *testing.B) {
	st := memstore.New()
	ctx := b.Context()
	if err := st.CreateTable(ctx, "Query"); err != nil {
		b.Fatal(err)
	}
	const n = 1000
	typed := NewRepository[benchEmployee](st, "Query")
	plain := NewRepository[benchEmployee](entityRoute{st}, "Query")
	vals := make([]*benchEmployee, n)
	for i := range vals {
		v := e2eValue("q", i)
		v.Dept = "q"
		vals[i] = &v
	}
	if _, err := typed.BulkWrite(ctx, store.ActionInsert, vals, store.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	// Another partition around it, so the query has a range to find.
	for _, dept := range []string{"a", "z"} {
		for i := range vals {
			vals[i].Dept = dept
		}
		if _, err := typed.BulkWrite(ctx, store.ActionInsert, vals, store.BulkOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	where := Where[benchEmployee]("PartitionKey").Eq("q")
	read := func(r *Repository[benchEmployee]) func(int) error {
		return func(int) error {
			got := 0
			for v, err := range r.Query(ctx, where) {
				if err != nil {
					return err
				}
				if v.Dept != "q" || v.Photo == nil {
					return fmt.Errorf("read %+v", v)
				}
				got++
			}
			if got != n {
				return fmt.Errorf("read %d, want %d", got, n)
			}
			return nil
		}
	}
	tbl := st.Table("Query")
	q := store.Query{Filter: "PartitionKey eq 'q'"}
	for range b.N {
		rep, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: 50 * time.Millisecond, CollectGarbage: true},
			interleave.Case{Name: "Repository.Query/entity-route", Ops: n, Op: read(plain)},
			interleave.Case{Name: "Repository.Query/typed", Ops: n, Op: read(typed)},
			interleave.Case{Name: "Table.Query-alone", Ops: n, Op: func(int) error {
				got := 0
				for _, err := range store.All(ctx, tbl, q) {
					if err != nil {
						return err
					}
					got++
				}
				if got != n {
					return fmt.Errorf("read %d, want %d", got, n)
				}
				return nil
			}},
		)
		if err != nil {
			b.Fatal(err)
		}
		e2eReport(b, rep)
	}
}
