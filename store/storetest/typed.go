package storetest

import (
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// The typed lane's queries (store.TypedTable.QueryInto) are held to
// Query's: every scan of the suite (scanAll) runs again through QueryInto
// when the table has it, and must return the same entities, and every
// refused query (refused) must be refused by QueryInto with the same
// error.

// scanTyped reads every page of q through QueryInto, each entity built by
// a driver.EntityBuilder, and returns the entities and the page count.
func scanTyped(t testing.TB, tt store.TypedTable, q store.Query, limit int) ([]store.Entity, int) {
	t.Helper()
	var all []store.Entity
	pages := 0
	for {
		var built []*driver.EntityBuilder
		cont, n, err := tt.QueryInto(t.Context(), q, func() store.EntityReader {
			b := new(driver.EntityBuilder)
			built = append(built, b)
			return b
		})
		if err != nil {
			t.Fatalf("QueryInto(%+v) page %d: %v", q, pages, err)
		}
		pages++
		if n != len(built) {
			t.Errorf("QueryInto page %d: n is %d, but %d readers were asked for", pages, n, len(built))
		}
		if n > limit {
			t.Errorf("QueryInto page %d has %d entities: the limit is %d", pages, n, limit)
		}
		for _, b := range built {
			all = append(all, b.Entity)
		}
		if cont == "" {
			return all, pages
		}
		if pages > 10000 {
			t.Fatalf("QueryInto: more than 10000 pages: the continuation never ends")
		}
		q.Continuation = cont
	}
}

// sameTypedScan checks that the typed lane returns want, the entities
// Query returned for q, when tbl has the lane.
func sameTypedScan(t testing.TB, tbl store.Table, q store.Query, limit int, want []store.Entity) {
	t.Helper()
	tt, ok := driver.Typed(tbl)
	if !ok {
		return
	}
	got, _ := scanTyped(t, tt, q, limit)
	if err := diffEntities(got, want); err != nil {
		t.Errorf("QueryInto(%+v) differs from Query: %v", q, err)
	}
}

// diffEntities describes the first difference between two entity lists:
// keys, ETag, Timestamp, properties with their types.
func diffEntities(got, want []store.Entity) error {
	for i := range min(len(got), len(want)) {
		g, w := &got[i], &want[i]
		switch {
		case g.PartitionKey != w.PartitionKey || g.RowKey != w.RowKey:
			return fmt.Errorf("entity %d is (%q, %q), want (%q, %q)", i, g.PartitionKey, g.RowKey, w.PartitionKey, w.RowKey)
		case g.ETag != w.ETag:
			return fmt.Errorf("entity %d (%q, %q): ETag %s, want %s", i, g.PartitionKey, g.RowKey, g.ETag, w.ETag)
		case !g.Timestamp.Equal(w.Timestamp):
			return fmt.Errorf("entity %d (%q, %q): Timestamp %s, want %s", i, g.PartitionKey, g.RowKey, g.Timestamp, w.Timestamp)
		}
		if len(g.Properties) != len(w.Properties) {
			return fmt.Errorf("entity %d (%q, %q): properties %v, want %v", i, g.PartitionKey, g.RowKey, g.Properties, w.Properties)
		}
		for k, wv := range w.Properties {
			gv, ok := g.Properties[k]
			if !ok || !sameValue(gv, wv) {
				return fmt.Errorf("entity %d (%q, %q): property %s is %#v, want %#v", i, g.PartitionKey, g.RowKey, k, gv, wv)
			}
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d entities, want %d", len(got), len(want))
	}
	return nil
}

// refused runs a query the test expects to be refused, through Query and,
// when tbl has it, through QueryInto, and returns Query's error. QueryInto
// must refuse it alike (code, status, source and, for tablekit's own
// refusals, the message) and hand no entity to a reader.
func refused(t testing.TB, tbl store.Table, q store.Query) error {
	t.Helper()
	_, err := tbl.Query(t.Context(), q)
	tt, ok := driver.Typed(tbl)
	if !ok {
		return err
	}
	readers := 0
	cont, n, terr := tt.QueryInto(t.Context(), q, func() store.EntityReader {
		readers++
		return new(driver.EntityBuilder)
	})
	switch {
	case (err == nil) != (terr == nil):
		t.Errorf("query %+v: Query: %v; QueryInto: %v", q, err, terr)
	case err == nil:
	case store.Code(err) != store.Code(terr) || store.Status(err) != store.Status(terr) || store.SourceOf(err) != store.SourceOf(terr):
		t.Errorf("query %+v: Query: %v; QueryInto refused it otherwise: %v", q, err, terr)
	case store.SourceOf(err) == store.SourceClient && err.Error() != terr.Error():
		t.Errorf("query %+v: Query: %q; QueryInto: %q", q, err, terr)
	}
	if terr != nil && (readers != 0 || n != 0 || cont != "") {
		t.Errorf("query %+v refused, yet QueryInto handed %d entities to readers (n %d, token %q)", q, readers, n, cont)
	}
	return err
}

// failingReader fails on its first custom property.
type failingReader struct {
	driver.EntityBuilder
	err error
}

func (r *failingReader) SetInt32(string, int32) error { return r.err }

// typedQueries proves what scanAll and refused do not: the typed lane's
// continuation tokens are Query's (each continues the other's), and a
// reader's error stops the page and comes back as it is.
func (s *suite) typedQueries(t *testing.T) {
	s.run(t, "TokensInterchange", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tt, ok := driver.Typed(tbl)
		if !ok {
			t.Skip("the table has no typed lane (store.TypedTable)")
		}
		keys := fill(t, tbl, "p", 300)
		q := store.Query{Filter: "N ge 0", Top: 100}
		page, err := tbl.Query(t.Context(), q)
		must(t, err, "Query")
		var built []*driver.EntityBuilder
		cont, n, err := tt.QueryInto(t.Context(), q, func() store.EntityReader {
			built = append(built, new(driver.EntityBuilder))
			return built[len(built)-1]
		})
		must(t, err, "QueryInto")
		if page.Continuation == "" || cont == "" {
			t.Fatalf("a first page of 300 entities with $top 100 has no token: Query %q, QueryInto %q", page.Continuation, cont)
		}
		// Pages of the same length end at the same key, so their tokens
		// are the same (a backend may cut a page short at random).
		if len(page.Entities) == n && cont != page.Continuation {
			t.Errorf("two pages of %d entities: Query's token %q, QueryInto's %q", n, page.Continuation, cont)
		}
		// Each lane continues the other's token to the end.
		after := func(seen int) []key { return keys[seen:] }
		viaTyped, _ := scanTyped(t, tt, store.Query{Filter: q.Filter, Top: 100, Continuation: page.Continuation}, 100)
		wantSameKeys(t, keysOf(viaTyped), after(len(page.Entities)))
		viaQuery, _ := scanAll(t, tbl, store.Query{Filter: q.Filter, Top: 100, Continuation: cont}, 100)
		wantSameKeys(t, keysOf(viaQuery), after(n))
	})

	s.run(t, "ReaderError_StopsThePage", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tt, ok := driver.Typed(tbl)
		if !ok {
			t.Skip("the table has no typed lane (store.TypedTable)")
		}
		fill(t, tbl, "p", 5)
		stop := fmt.Errorf("the reader's own error")
		readers := 0
		for {
			cont, n, err := tt.QueryInto(t.Context(), store.Query{}, func() store.EntityReader {
				readers++
				return &failingReader{err: stop}
			})
			if err == nil && n == 0 && cont != "" {
				continue // an empty page: the entities are still ahead
			}
			if err != stop || n != 0 || cont != "" {
				t.Fatalf("QueryInto with a failing reader: token %q, n %d, %v; want the reader's error as it is, n 0, no token", cont, n, err)
			}
			break
		}
		if readers != 1 {
			t.Errorf("%d readers were asked for: the page should stop at the first failure", readers)
		}
	})
}
