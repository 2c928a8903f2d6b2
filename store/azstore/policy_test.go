package azstore

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// recorder is a local server that records every request and answers a
// fixed success for its kind.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	srv  *httptest.Server
}

type recorded struct {
	method, path, rawPath string
	body                  string
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.Path, r.URL.EscapedPath(), string(b)})
		rec.mu.Unlock()
		w.Header().Set("ETag", `W/"1"`)
		switch {
		case strings.HasSuffix(r.URL.Path, "$batch"):
			// One success part per sub-request of the changeset.
			var parts []string
			for i := range strings.Count(string(b), "Content-Type: application/http") {
				parts = append(parts, fmt.Sprintf("HTTP/1.1 204 No Content\r\nContent-ID: %d\r\nETag: W/\"1\"\r\n\r\n", i+1))
			}
			changesetResponse(w, parts...)
		case strings.Contains(r.URL.Path, "/messages/"):
			w.Header().Set("x-ms-popreceipt", "r2")
			w.Header().Set("x-ms-time-next-visible", time.Now().UTC().Format(http.TimeFormat))
			w.WriteHeader(204)
		case r.Method == http.MethodPost:
			w.WriteHeader(201)
			_, _ = io.WriteString(w, `{}`)
		default:
			w.WriteHeader(204)
		}
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) store(t *testing.T) *Store {
	st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: rec.srv.URL + "/acct", Queue: rec.srv.URL + "/acct"}, &Options{Retry: fastRetry, Services: allServices()})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (rec *recorder) last(t *testing.T) recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("no request was sent")
	}
	return rec.reqs[len(rec.reqs)-1]
}

// TestEmptyPartitionKeyReachesTheWire proves an empty PartitionKey, which
// aztables refuses in a URL, is sent as PartitionKey=” in URLs and as ""
// in bodies, for single operations and a batch.
func TestEmptyPartitionKeyReachesTheWire(t *testing.T) {
	rec := newRecorder(t)
	tbl := rec.store(t).Table("tbl")
	ctx := t.Context()
	if err := tbl.Delete(ctx, "", "r", store.ETagAny); err != nil {
		t.Fatal(err)
	}
	if got := rec.last(t).path; !strings.HasSuffix(got, "tbl(PartitionKey='',RowKey='r')") {
		t.Errorf("Delete path = %q", got)
	}
	if _, err := tbl.Upsert(ctx, store.Entity{PartitionKey: "", RowKey: "r", Properties: map[string]any{"S": "\x01"}}, store.Replace); err != nil {
		t.Fatal(err)
	}
	r := rec.last(t)
	if !strings.HasSuffix(r.path, "tbl(PartitionKey='',RowKey='r')") || !strings.Contains(r.body, `"PartitionKey":""`) || !strings.Contains(r.body, `"S":"\u0001"`) {
		t.Errorf("Upsert sent %s %s", r.path, r.body)
	}
	_, err := tbl.Transact(ctx, []store.Action{
		{Kind: store.ActionUpdateMerge, Entity: store.Entity{RowKey: "a"}, IfMatch: store.ETagAny},
		{Kind: store.ActionDelete, Entity: store.Entity{RowKey: "b"}, IfMatch: store.ETagAny},
	})
	if err != nil {
		t.Fatal(err)
	}
	body := rec.last(t).body
	if strings.Contains(body, "%01") || strings.Contains(body, `\u0001`) || !strings.Contains(body, "(PartitionKey='',RowKey='b')") || !strings.Contains(body, `"PartitionKey":""`) {
		t.Errorf("batch body still holds the placeholder or lacks the empty key:\n%s", body)
	}
}

// TestBatchKeysWithQuotesAreEscaped proves batch sub-request URLs carry
// OData-escaped keys (” for ') while the JSON bodies carry the keys as
// they are.
func TestBatchKeysWithQuotesAreEscaped(t *testing.T) {
	rec := newRecorder(t)
	tbl := rec.store(t).Table("tbl")
	_, err := tbl.Transact(t.Context(), []store.Action{
		{Kind: store.ActionUpdateReplace, Entity: store.Entity{PartitionKey: "o'p", RowKey: "it''s", Properties: map[string]any{"V": "a''b"}}, IfMatch: store.ETagAny},
		{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "o'p", RowKey: "x'"}, IfMatch: store.ETagAny},
	})
	if err != nil {
		t.Fatal(err)
	}
	body := rec.last(t).body
	// The sub-request URL is percent-encoded: %27 is a single quote.
	for _, want := range []string{"(PartitionKey='o%27%27p',RowKey='it%27%27%27%27s')", "(PartitionKey='o%27%27p',RowKey='x%27%27')",
		`"PartitionKey":"o'p"`, `"RowKey":"it''s"`, `"V":"a''b"`} {
		if !strings.Contains(body, want) {
			t.Errorf("batch body lacks %s:\n%s", want, body)
		}
	}
}

// TestBigNonASCIIBodyIsSentAsASCII proves a body over 64 KiB goes out as
// ASCII JSON that still reads back as the same strings.
func TestBigNonASCIIBodyIsSentAsASCII(t *testing.T) {
	rec := newRecorder(t)
	v := strings.Repeat("😀é", 8000) + "\u2028end"
	if _, err := rec.store(t).Table("tbl").Insert(t.Context(), store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": v, "T": v, "U": v}}); err != nil {
		t.Fatal(err)
	}
	body := rec.last(t).body
	for i := 0; i < len(body); i++ {
		if body[i] >= 0x80 {
			t.Fatalf("byte %d of the body is %#x: not ASCII", i, body[i])
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil || m["S"] != v {
		t.Errorf("body does not read back as the value: %v", err)
	}
}

func TestAsciiJSON(t *testing.T) {
	for _, in := range []string{`{"a":"plain"}`, `{"a":"é中😀\u2028","ü":1}`, `{}`} {
		out := asciiJSON([]byte(in))
		var a, b any
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("asciiJSON(%s) = %s: %v", in, out, err)
		}
		if ja, _ := json.Marshal(a); string(ja) != func() string { jb, _ := json.Marshal(b); return string(jb) }() {
			t.Errorf("asciiJSON(%s) = %s reads back differently", in, out)
		}
	}
}

// TestMessageUpdateWithoutBodySendsNone proves Update with a nil body
// sends no message text (the service then keeps the current one), and
// with a body sends it.
func TestMessageUpdateWithoutBodySendsNone(t *testing.T) {
	rec := newRecorder(t)
	q := rec.store(t).Queue("jobs")
	if _, err := q.Update(t.Context(), "id1", "r1", nil, time.Second); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); r.method != http.MethodPut || r.body != "" {
		t.Errorf("nil-body Update sent %s with body %q, want no body", r.method, r.body)
	}
	if _, err := q.Update(t.Context(), "id1", "r2", []byte("v2"), time.Second); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); !strings.Contains(r.body, "<MessageText>v2</MessageText>") {
		t.Errorf("Update sent body %q", r.body)
	}
}
