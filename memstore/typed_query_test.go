package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// queryInto reads one page through the typed lane and counts the
// entities handed to readers.
func queryInto(t *testing.T, tbl store.Table, q store.Query) (string, int, error) {
	t.Helper()
	readers := 0
	cont, n, err := tbl.(store.TypedTable).QueryInto(context.Background(), q, func() store.EntityReader {
		readers++
		return new(driver.EntityBuilder)
	})
	if err != nil && readers != 0 {
		t.Fatalf("a refused page handed %d entities to readers", readers)
	}
	if err == nil && readers != n {
		t.Fatalf("QueryInto: n %d, %d readers", n, readers)
	}
	return cont, n, err
}

// The typed lane's page goes through the throughput model as Query's
// does: admitted by its partition, paid for the entities it returns, and
// refused with ServerBusy, nothing read, once the partition's tokens are spent.
func TestQueryIntoPaysLikeQuery(t *testing.T) {
	ctx := context.Background()
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{})
	for i := range 12 {
		if _, err := tbl.Transact(ctx, upserts("a", i*100, 100)); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(time.Second)
	base := find(t, st.Throughput(), "Log", "a")
	pa := filter.PK.Eq("a").String()
	cont, n, err := queryInto(t, tbl, store.Query{Filter: pa})
	if err != nil || n != 1000 || cont == "" {
		t.Fatalf("a page of the partition: n %d, token %q, %v", n, cont, err)
	}
	page, err := tbl.Query(ctx, store.Query{Filter: pa})
	if err != nil || len(page.Entities) != 1000 || page.Continuation != cont {
		t.Fatalf("the same page through Query: %d entities, token equal %v, %v", len(page.Entities), page.Continuation == cont, err)
	}
	paid := find(t, st.Throughput(), "Log", "a").Entities - base.Entities
	if paid != 2000 {
		t.Fatalf("two pages of 1,000 (QueryInto, Query) cost %d entities, want 2,000", paid)
	}
	// The bucket's 2,000 tokens are spent: the next page waits.
	_, _, err = queryInto(t, tbl, store.Query{Filter: pa, Continuation: cont})
	wantBusy(t, err, "a typed page with the tokens spent")
	t.Logf("QueryInto paid %d entities for its pages, as Query; refused once the tokens were spent: %v", paid/2, err)
}
