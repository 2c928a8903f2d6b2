package storetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// queries proves the query request rules: $top, $select, malformed
// filters, and empty results.
func (s *suite) queries(t *testing.T) {
	s.run(t, "Top_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r"))
		for _, top := range []int{-1, store.MaxPageSize + 1, 5000} {
			err := refused(t, tbl, store.Query{Top: top})
			if !wantErr(t, err, store.CodeInvalidInput, 400, noIndex) {
				t.Logf("$top %d", top)
			}
		}
		// A valid $top is accepted; a page may come back short or empty
		// with a continuation token, so the check follows the tokens.
		for _, top := range []int{1, store.MaxPageSize} {
			all, _ := scanAll(t, tbl, store.Query{Top: top}, top)
			if len(all) != 1 {
				t.Errorf("$top %d returned %d entities in all, want 1", top, len(all))
			}
		}
	})

	s.run(t, "EmptyResult_NoEntities", func(t *testing.T) {
		_, tbl := s.newTable(t)
		all, _ := scanAll(t, tbl, store.Query{}, store.MaxPageSize)
		if len(all) != 0 {
			t.Errorf("empty table returned %d entities", len(all))
		}
		mustInsert(t, tbl, ent("p", "r"))
		all, _ = scanAll(t, tbl, store.Query{Filter: "PartitionKey eq 'nothing'"}, store.MaxPageSize)
		if len(all) != 0 {
			t.Errorf("filter matching nothing returned %d entities", len(all))
		}
	})

	s.run(t, "Select_Projection", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tag := mustInsert(t, tbl, ent("p", "a", "A", "a1", "B", int32(1)))
		mustInsert(t, tbl, ent("p", "b", "B", int32(2), "C", true))
		all, _ := scanAll(t, tbl, store.Query{Select: []string{"A", "C"}}, store.MaxPageSize)
		if len(all) != 2 {
			t.Fatalf("query with $select returned %d entities, want 2", len(all))
		}
		// A named property the entity lacks is absent, not a zero value.
		wantProps(t, "row a", all[0].Properties, map[string]any{"A": "a1"})
		wantProps(t, "row b", all[1].Properties, map[string]any{"C": true})
		e := all[0]
		if e.PartitionKey != "p" || e.RowKey != "a" || e.ETag != tag || e.Timestamp.IsZero() {
			t.Errorf("projected query lost a system field: (%q, %q, ETag %s, Timestamp %s)",
				e.PartitionKey, e.RowKey, e.ETag, e.Timestamp)
		}
		// $select and $filter together: the filter sees every property.
		all, _ = scanAll(t, tbl, store.Query{Filter: "B eq 2", Select: []string{"C"}}, store.MaxPageSize)
		if len(all) != 1 || all[0].RowKey != "b" {
			t.Fatalf("$filter on an unselected property returned %v", keysOf(all))
		}
		wantProps(t, "filter and select", all[0].Properties, map[string]any{"C": true})
		err := refused(t, tbl, store.Query{Select: []string{"A", "not valid"}})
		wantErr(t, err, store.CodePropertyNameInvalid, 400, noIndex)
	})

	s.run(t, "MalformedFilter_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r", "S", "abc", "N", int32(1)))
		for _, f := range []string{
			"startswith(S, 'a')",
			`S eq "abc"`,
			"S eq",
			"S eq 'unterminated",
			"S == 'abc'",
			"(S eq 'abc'",
			"S eq 'abc')",
			"S eq 'abc' and",
			"N eq 1 or or N eq 2",
			"N eq 12abc",
			"T eq datetime'not a date'",
			"G eq guid'1234'",
			"B eq X'ABC'", // odd number of hex digits
			"S eq 'a' xor S eq 'b'",
			"substringof('a', S)",
			"S eq 'abc'; drop",
		} {
			err := refused(t, tbl, store.Query{Filter: f})
			if !wantErr(t, err, store.CodeInvalidInput, 400, noIndex) {
				t.Logf("filter %s", f)
			}
		}
	})

	s.run(t, "TooManyComparisons_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r", "N", int32(3)))
		cmp := func(n int) string {
			parts := make([]string, n)
			for i := range parts {
				parts[i] = "N ne 99"
			}
			return strings.Join(parts, " and ")
		}
		all, _ := scanAll(t, tbl, store.Query{Filter: cmp(store.MaxFilterComparisons)}, store.MaxPageSize)
		if len(all) != 1 {
			t.Errorf("filter of 15 comparisons returned %d entities, want 1", len(all))
		}
		err := refused(t, tbl, store.Query{Filter: cmp(store.MaxFilterComparisons + 1)})
		wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
	})

	s.run(t, "FilterTooLong_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		long := strings.Repeat("x", store.MaxFilterBytes)
		mustInsert(t, tbl, ent("p", "r", "A", long[:store.MaxFilterBytes-11]))
		// "A eq '...'" percent-encodes to 11 bytes plus the value's.
		at := "A eq '" + long[:store.MaxFilterBytes-11] + "'"
		if n := driver.FilterBytes(at); n != store.MaxFilterBytes {
			t.Fatalf("the edge filter is %d bytes, want %d", n, store.MaxFilterBytes)
		}
		all, _ := scanAll(t, tbl, store.Query{Filter: at}, store.MaxPageSize)
		if len(all) != 1 {
			t.Errorf("a filter of exactly %d bytes returned %d entities, want 1", store.MaxFilterBytes, len(all))
		}
		over := "A eq '" + long[:store.MaxFilterBytes-10] + "'"
		err := refused(t, tbl, store.Query{Filter: over})
		if wantErr(t, err, store.CodeInvalidInput, 400, noIndex) {
			if !strings.Contains(err.Error(), strconv.Itoa(store.MaxFilterBytes)) || store.SourceOf(err) != store.SourceClient {
				t.Errorf("got %v: want tablekit's own refusal naming the limit", err)
			}
		}
		// A megabyte of filter is refused as quickly, and never sent.
		err = refused(t, tbl, store.Query{Filter: "A eq '" + strings.Repeat("y", 1<<20) + "'"})
		wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
	})

	s.run(t, "ContinuationOfAnotherQuery_InvalidInput", func(t *testing.T) {
		st, tbl := s.newTable(t)
		other := s.newTableOn(t, st)
		for i := range 30 {
			e := ent("p", fmt.Sprintf("r%02d", i), "N", int32(i))
			mustInsert(t, tbl, e)
			mustInsert(t, other, e)
		}
		q := store.Query{Filter: "N ge 0", Top: 10}
		first, err := tbl.Query(t.Context(), q)
		if err != nil || first.Continuation == "" {
			t.Fatalf("first page: %d entities, token %q, %v", len(first.Entities), first.Continuation, err)
		}
		tok := first.Continuation
		// The same query continues.
		next, err := tbl.Query(t.Context(), store.Query{Filter: q.Filter, Top: 10, Continuation: tok})
		if err != nil {
			t.Fatalf("the token of the same query: %v", err)
		}
		if len(next.Entities) > 0 && len(first.Entities) > 0 && next.Entities[0].RowKey <= first.Entities[len(first.Entities)-1].RowKey {
			t.Fatalf("the next page starts at %s", next.Entities[0].RowKey)
		}
		// Another table, another filter, a damaged or cut token: refused.
		bad := map[string]func() error{
			"another table": func() error {
				err := refused(t, other, store.Query{Filter: q.Filter, Continuation: tok})
				return err
			},
			"another filter": func() error {
				err := refused(t, tbl, store.Query{Filter: "N ge 5", Continuation: tok})
				return err
			},
			"no filter": func() error {
				err := refused(t, tbl, store.Query{Continuation: tok})
				return err
			},
			"damaged": func() error {
				b := []byte(tok)
				i := len(b) - 5
				b[i] ^= 0x01
				if b[i] == '-' || b[i] == '_' || b[i] < '0' {
					b[i] = 'A'
				}
				err := refused(t, tbl, store.Query{Filter: q.Filter, Continuation: string(b)})
				return err
			},
			"cut short": func() error {
				err := refused(t, tbl, store.Query{Filter: q.Filter, Continuation: tok[:len(tok)-3]})
				return err
			},
		}
		for name, do := range bad {
			err := do()
			if !wantErr(t, err, store.CodeInvalidInput, 400, noIndex) {
				t.Errorf("%s: the token was not refused", name)
			}
		}
	})

	s.run(t, "TableListingTokenOfAnotherPrefix_InvalidInput", func(t *testing.T) {
		st := s.h.New(t)
		base := s.names.next()
		for i := range 3 {
			name := fmt.Sprintf("%sx%d", base, i)
			must(t, st.CreateTable(t.Context(), name), "CreateTable")
			s.dropTableLater(t, st, name)
		}
		page, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: base, Top: 1})
		if err != nil || page.Continuation == "" {
			t.Fatalf("first page: %v, token %q", err, page.Continuation)
		}
		_, err = st.ListTables(t.Context(), store.ListTablesOptions{Prefix: base + "x2", Continuation: page.Continuation})
		wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
		if _, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: base, Continuation: page.Continuation}); err != nil {
			t.Fatalf("the same listing: %v", err)
		}
	})

	s.run(t, "BadContinuation_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r"))
		err := refused(t, tbl, store.Query{Continuation: "\x00not a token"})
		wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
	})
}
