package azstore

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// queryServer answers every query with body, and records the $select and
// $filter it was sent.
func queryServer(t *testing.T, body string) (*Store, *http.Request) {
	t.Helper()
	last := new(http.Request)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*last = *r.Clone(r.Context())
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		w.Header().Set("x-ms-continuation-NextPartitionKey", "p2")
		w.Header().Set("x-ms-continuation-NextRowKey", "r9")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: srv.URL + "/acct"}, &Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return st, last
}

// built reads one page through QueryInto into store.Entity values.
func built(t *testing.T, tt store.TypedTable, q store.Query) ([]store.Entity, string, int, error) {
	t.Helper()
	var bs []*driver.EntityBuilder
	cont, n, err := tt.QueryInto(t.Context(), q, func() store.EntityReader {
		bs = append(bs, new(driver.EntityBuilder))
		return bs[len(bs)-1]
	})
	out := make([]store.Entity, len(bs))
	for i, b := range bs {
		out[i] = b.Entity
		if out[i].Properties == nil {
			out[i].Properties = map[string]any{}
		}
	}
	return out, cont, n, err
}

const twoRows = `{"value":[` +
	`{"PartitionKey":"p1","RowKey":"r1","Timestamp":"2026-11-22T11:00:00.0000000Z","odata.etag":"W/\"1\"","D":1.0,"D@odata.type":"Edm.Double","L":"9007199254740993","L@odata.type":"Edm.Int64","I":7,"S":"a\"b"},` +
	`{"PartitionKey":"p1","RowKey":"r2","Timestamp":"2026-11-22T11:00:01.0000000Z","odata.etag":"W/\"2\"","I":8,"B@odata.type":"Edm.Binary","B":"AAE="}]}`

// QueryInto reads the service's bytes into readers exactly as Query
// decodes them into entities: the same members with the same types, the
// same continuation token; the filter is checked on every entity (a
// server that matches loosely, as Azurite does, or not at all, as this
// one, returns rows the filter drops), and a projection sends the
// filter's properties too but hands the reader only the selected ones.
func TestQueryIntoReadsWhatQueryDecodes(t *testing.T) {
	st, sent := queryServer(t, twoRows)
	tbl := st.Table("Tab")
	tt := tbl.(store.TypedTable)
	for _, q := range []store.Query{
		{},
		{Filter: "I eq 7"},
		{Filter: "I eq 8", Select: []string{"B", "S"}},
		{Filter: "Timestamp gt datetime'2026-11-22T11:00:00Z'", Select: []string{"I"}},
		{Filter: "PartitionKey eq 'p1' and RowKey lt 'r2'", Top: 5},
	} {
		page, err := tbl.Query(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		got, cont, n, err := built(t, tt, q)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(page.Entities) || cont != page.Continuation || !reflect.DeepEqual(got, page.Entities) {
			t.Errorf("query %+v:\n QueryInto %d %q %#v\n Query     %d %q %#v", q, n, cont, got, len(page.Entities), page.Continuation, page.Entities)
		}
		if len(q.Select) > 0 {
			sel := sent.URL.Query().Get("$select")
			for _, p := range []string{"I"} {
				if strings.Contains(q.Filter, p+" ") && !strings.Contains(sel, p) {
					t.Errorf("query %+v: $select %q lacks the filter's property %s", q, sel, p)
				}
			}
		}
	}
}

// A page whose answer cannot be read fails as Query fails (the same code
// and message), with n 0 and no token, even when entities before the
// damage were handed to readers; a reader's own error comes back as it is.
func TestQueryIntoFailsLikeQuery(t *testing.T) {
	for name, body := range map[string]string{
		"a value of the wrong type": strings.Replace(twoRows, `"I":8`, `"I":8,"L":"x","L@odata.type":"Edm.Int64"`, 1),
		"cut short":                 twoRows[:len(twoRows)-40],
		"an unknown type":           strings.Replace(twoRows, `"Edm.Binary"`, `"Edm.Thing"`, 1),
	} {
		st, _ := queryServer(t, body)
		tbl := st.Table("Tab")
		_, qerr := tbl.Query(t.Context(), store.Query{})
		got, cont, n, err := built(t, tbl.(store.TypedTable), store.Query{})
		if err == nil || qerr == nil || err.Error() != qerr.Error() || store.Code(err) != store.Code(qerr) {
			t.Errorf("%s: QueryInto %v; Query %v", name, err, qerr)
		}
		if n != 0 || cont != "" {
			t.Errorf("%s: a failed page returned n %d, token %q", name, n, cont)
		}
		t.Logf("%s: %s (%d entities had reached readers)", name, err, len(got))
	}
	st, _ := queryServer(t, twoRows)
	stop := errors.New("the reader stops")
	_, n, err := st.Table("Tab").(store.TypedTable).QueryInto(t.Context(), store.Query{}, func() store.EntityReader {
		return &stopReader{err: stop}
	})
	if err != stop || n != 0 {
		t.Errorf("a reader's error: %v, n %d; want it as it is", err, n)
	}
}

// stopReader fails on the first member.
type stopReader struct {
	driver.EntityBuilder
	err error
}

func (r *stopReader) SetPartitionKey(string) error { return r.err }
