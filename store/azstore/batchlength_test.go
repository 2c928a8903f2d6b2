package azstore

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// subRequests parses a $batch request body into its inner HTTP requests,
// reading each body by its own Content-Length as the service does.
func subRequests(t *testing.T, contentType, body string) []*http.Request {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("batch content type %q: %v", contentType, err)
	}
	var out []*http.Request
	var walk func(r *multipart.Reader)
	walk = func(r *multipart.Reader) {
		for {
			p, err := r.NextPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(p)
			if mt, ps, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
				walk(multipart.NewReader(bytes.NewReader(data), ps["boundary"]))
				continue
			}
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
			if err != nil {
				t.Fatalf("sub-request does not parse: %v\n%s", err, data)
			}
			b, _ := io.ReadAll(req.Body)
			rest := strings.TrimRight(string(data[len(data)-len(trailing(data, b)):]), "\r\n")
			if req.ContentLength > 0 && (req.ContentLength != int64(len(rest)) || string(b) != rest) {
				t.Errorf("sub-request %s %s: Content-Length %d, but the body is %d bytes", req.Method, req.URL, req.ContentLength, len(rest))
			}
			out = append(out, req)
		}
	}
	walk(multipart.NewReader(strings.NewReader(body), params["boundary"]))
	return out
}

// trailing returns the part of data from where body starts to the end.
func trailing(data, body []byte) []byte {
	if len(body) == 0 {
		return nil
	}
	i := bytes.LastIndex(data, body[:min(len(body), 16)])
	if i < 0 {
		return nil
	}
	return data[i:]
}

// TestBatchSubRequestLengthsMatchTheirBodies proves the request rewrites
// (empty PartitionKey, quoted keys, ASCII escaping of large bodies) keep
// every sub-request's Content-Length equal to its body, as the service
// reads each sub-request by its Content-Length.
func TestBatchSubRequestLengthsMatchTheirBodies(t *testing.T) {
	var gotType, gotBody string
	rec := newRecorder(t)
	inner := rec.srv.Config.Handler
	rec.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "$batch") {
			b, _ := io.ReadAll(r.Body)
			gotType, gotBody = r.Header.Get("Content-Type"), string(b)
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		inner.ServeHTTP(w, r)
	})
	tbl := rec.store(t).Table("tbl")
	big := strings.Repeat("é😀", 9000) // non-ASCII: the body goes out escaped
	cases := map[string][]store.Action{
		"empty PartitionKey": {
			{Kind: store.ActionUpsertMerge, Entity: store.Entity{RowKey: "a", Properties: map[string]any{"V": "x"}}},
			{Kind: store.ActionUpsertReplace, Entity: store.Entity{RowKey: "b", Properties: map[string]any{"V": "y"}}},
		},
		"quoted keys": {
			{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "o'p", RowKey: "it''s", Properties: map[string]any{"V": "a''b"}}},
			{Kind: store.ActionUpdateMerge, Entity: store.Entity{PartitionKey: "o'p", RowKey: "x'"}, IfMatch: store.ETagAny},
		},
		"large non-ASCII body": {
			{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"S": big}}},
			{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "p", RowKey: "2", Properties: map[string]any{"S": big}}},
		},
	}
	for name, actions := range cases {
		gotBody = ""
		if _, err := tbl.Transact(t.Context(), actions); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if gotBody == "" {
			t.Fatalf("%s: no batch request seen", name)
		}
		reqs := subRequests(t, gotType, gotBody)
		if len(reqs) != len(actions) {
			t.Fatalf("%s: %d sub-requests, want %d", name, len(reqs), len(actions))
		}
	}
}
