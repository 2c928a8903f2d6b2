package azstore

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// azureChangeset writes a changeset response laid out as the Table
// service's own (recorded aztables sessions against Azure): CRLF lines, no
// Content-ID on any part (aztables sends none), "DataServiceVersion: 1.0;"
// or "3.0;", Location and DataServiceId on inserts, a body only on a
// failed part, and only the failed part when the changeset fails.
func azureChangeset(w http.ResponseWriter, parts ...string) {
	const outer, inner = "batchresponse_c40ed0c9-eb5a-402b-8595-281d6c7c30d0", "changesetresponse_de152b26-8255-4855-8b5c-3a213dc2f3cc"
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+outer)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusAccepted)
	var b strings.Builder
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", outer, inner)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n%s\r\n", inner, p)
	}
	fmt.Fprintf(&b, "--%s--\r\n--%s--\r\n", inner, outer)
	_, _ = w.Write([]byte(b.String()))
}

// TestTransactReadsAzureChangesets proves Transact reads the service's
// changeset layout: per-action ETags in request order (none for a delete)
// on success, and code, status and index on failure.
func TestTransactReadsAzureChangesets(t *testing.T) {
	etag := func(n int) string { return fmt.Sprintf(`W/"datetime'2024-02-26T20%%3A27%%3A43.66987%02dZ'"`, n) }
	ok := []string{
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\nETag: " + etag(1) + "\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\n" +
			"Location: https://acct.table.core.windows.net/tbl(PartitionKey='p',RowKey='c')\r\nDataServiceId: https://acct.table.core.windows.net/tbl(PartitionKey='p',RowKey='c')\r\nETag: " + etag(3) + "\r\n\r\n",
	}
	failed := "HTTP/1.1 409 Conflict\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nPreference-Applied: return-no-content\r\nDataServiceVersion: 3.0;\r\n" +
		"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
		`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"2:The specified entity already exists.\nRequestId:c1fc1bc3-e002-0055-62f2-68f169000000\nTime:2024-02-26T20:27:45.3717695Z"}}}`
	actions := []store.Action{
		{Kind: store.ActionUpdateMerge, Entity: entity("p", "a"), IfMatch: store.ETagAny},
		{Kind: store.ActionDelete, Entity: entity("p", "b"), IfMatch: store.ETagAny},
		{Kind: store.ActionInsert, Entity: entity("p", "c")},
	}

	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 0 {
			azureChangeset(w, ok...)
			return
		}
		azureChangeset(w, failed)
	})
	tbl := f.sharedKeyStore(t).Table("tbl")
	res, err := tbl.Transact(t.Context(), actions)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ETag{store.ETag(etag(1)), "", store.ETag(etag(3))}
	for i := range want {
		if res[i].ETag != want[i] {
			t.Errorf("action %d: ETag %q, want %q", i, res[i].ETag, want[i])
		}
	}

	_, err = tbl.Transact(t.Context(), actions)
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeEntityAlreadyExists || se.Status != 409 || se.Index != 2 {
		t.Fatalf("failed changeset: %v, want EntityAlreadyExists 409 at index 2", err)
	}
	if !strings.Contains(se.Message, `RowKey "c"`) || !strings.Contains(se.Message, "The specified entity already exists.") {
		t.Errorf("message %q should name the action's keys and keep the service's first line", se.Message)
	}
}
