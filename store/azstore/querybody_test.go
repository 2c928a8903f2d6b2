package azstore

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// TestQueryDecodesTheServiceBytes proves a query page is decoded from the
// service's own response bytes (types kept exactly, continuation carried)
// although tablePolicy hands aztables an empty result, and that an error
// response still reaches the caller with the service's code.
func TestQueryDecodesTheServiceBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		if r.URL.Path == "/acct/Missing()" {
			w.Header().Set("x-ms-error-code", "TableNotFound")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"The table specified does not exist."}}}`)
			return
		}
		w.Header().Set("x-ms-continuation-NextPartitionKey", "p2")
		w.Header().Set("x-ms-continuation-NextRowKey", "r9")
		_, _ = io.WriteString(w, `{"value":[`+
			`{"PartitionKey":"p1","RowKey":"r1","Timestamp":"2026-11-22T11:00:00.0000000Z","odata.etag":"W/\"1\"","D":1.0,"D@odata.type":"Edm.Double","L":"9007199254740993","L@odata.type":"Edm.Int64","I":7},`+
			`{"PartitionKey":"p1","RowKey":"r2","Timestamp":"2026-11-22T11:00:01.0000000Z","odata.etag":"W/\"2\"","I":8}]}`)
	}))
	t.Cleanup(srv.Close)
	st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: srv.URL + "/acct"}, &Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.Table("Tab").Query(t.Context(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entities) != 2 || page.Continuation == "" {
		t.Fatalf("got %d entities, continuation %q", len(page.Entities), page.Continuation)
	}
	p := page.Entities[0].Properties
	if d, ok := p["D"].(float64); !ok || d != 1 {
		t.Errorf("D = %#v, want float64 1 (aztables' own decoding would make it an integer)", p["D"])
	}
	if l, ok := p["L"].(int64); !ok || l != 9007199254740993 {
		t.Errorf("L = %#v, want int64 9007199254740993", p["L"])
	}
	if i, ok := p["I"].(int32); !ok || i != 7 || page.Entities[1].ETag != `W/"2"` {
		t.Errorf("I = %#v, second ETag %s", p["I"], page.Entities[1].ETag)
	}
	if pk, rk, err := decodeEntityToken(page.Continuation, driver.TokenScope("Tab", "")); err != nil || pk != "p2" || rk != "r9" {
		t.Errorf("continuation decodes to (%q, %q, %v), want (p2, r9)", pk, rk, err)
	}
	_, err = st.Table("Missing").Query(t.Context(), store.Query{})
	if store.Code(err) != store.CodeTableNotFound {
		t.Fatalf("query of a missing table: %v, want TableNotFound", err)
	}
}
