package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/store"
)

// fake is a scripted Table service on 127.0.0.1: handle answers request
// number n (0-based).
type fake struct {
	srv   *httptest.Server
	count atomic.Int32
}

func newFake(t *testing.T, tls bool, handle func(w http.ResponseWriter, r *http.Request, n int)) *fake {
	t.Helper()
	f := &fake{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.count.Add(1)) - 1
		_, _ = io.Copy(io.Discard, r.Body)
		handle(w, r, n)
	})
	if tls {
		f.srv = httptest.NewTLSServer(h)
	} else {
		f.srv = httptest.NewServer(h)
	}
	t.Cleanup(f.srv.Close)
	return f
}

// fastRetry keeps retry tests quick.
var fastRetry = policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond}

func (f *fake) sharedKeyStore(t *testing.T) *Store {
	t.Helper()
	st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: f.srv.URL + "/acct", Queue: f.srv.URL + "/acct", Blob: f.srv.URL + "/acct"},
		&Options{Retry: fastRetry, Services: allServices()})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func odataError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
	if code != "" {
		w.Header().Set("x-ms-error-code", code)
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"odata.error":{"code":%q,"message":{"lang":"en-US","value":%q}}}`, code, msg+"\nRequestId:1\nTime:2024-01-01T00:00:00Z")
}

func entity(pk, rk string) store.Entity {
	return store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"A": int64(1)}}
}

// TestAuthFailureKeepsKeySecret forces an authentication failure and
// checks the error carries the service's code and status but not the key.
func TestAuthFailureKeepsKeySecret(t *testing.T) {
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "SharedKey") {
			t.Errorf("Authorization = %q, want a SharedKey or SharedKeyLite signature", r.Header.Get("Authorization"))
		}
		odataError(w, 403, store.CodeAuthenticationFailed, "Server failed to authenticate the request. Signature: "+r.Header.Get("Authorization"))
	})
	_, err := f.sharedKeyStore(t).Table("tbl").Get(t.Context(), "p", "r", nil)
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeAuthenticationFailed || se.Status != 403 {
		t.Fatalf("error = %v, want AuthenticationFailed (403)", err)
	}
	if strings.Contains(err.Error(), secretKey) {
		t.Errorf("error leaks the key: %v", err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 403 {
		t.Errorf("errors.As(*azcore.ResponseError) = %v", re)
	}
}

// fakeCredential is an azcore.TokenCredential that hands out one token.
type fakeCredential struct{ calls atomic.Int32 }

func (c *fakeCredential) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.calls.Add(1)
	return azcore.AccessToken{Token: "fake-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestTokenCredentialSendsBearer proves a token credential authenticates
// every service with a bearer token (over TLS, as azcore requires).
func TestTokenCredentialSendsBearer(t *testing.T) {
	var bearer atomic.Int32
	f := newFake(t, true, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Header.Get("Authorization") == "Bearer fake-token" {
			bearer.Add(1)
		}
		odataError(w, 404, store.CodeResourceNotFound, "The specified resource does not exist.")
	})
	cred := &fakeCredential{}
	st, err := NewWithTokenCredential(Endpoints{Table: f.srv.URL + "/acct", Queue: f.srv.URL + "/acct", Blob: f.srv.URL + "/acct"}, cred,
		&Options{Transport: f.srv.Client(), Retry: fastRetry, Services: allServices()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Table("tbl").Get(t.Context(), "p", "r", nil)
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get error = %v, want not found", err)
	}
	_, _ = st.Queue("q1x").Peek(t.Context(), 1)
	_, _, _ = st.Container("c1x").Get(t.Context(), "b")
	if got := bearer.Load(); got != 3 || cred.calls.Load() == 0 {
		t.Errorf("%d of %d requests carried the bearer token (credential called %d times), want 3 of 3", got, f.count.Load(), cred.calls.Load())
	}
	if _, err := NewWithTokenCredential(Endpoints{}, nil, nil); err == nil {
		t.Error("a nil credential was accepted")
	}
}

// TestSASURLKeptAndRedacted proves a SAS URL's query reaches the service
// and never shows in an error, even a transport error that names the URL.
func TestSASURLKeptAndRedacted(t *testing.T) {
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Query().Get("sig") != "topsecret" {
			t.Errorf("request %s lacks the SAS signature", r.URL.Path)
		}
		odataError(w, 404, store.CodeResourceNotFound, "missing")
	})
	st, err := NewFromSASURL(Endpoints{Table: f.srv.URL + "/acct?sv=2020&sig=topsecret"}, &Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Table("tbl").Get(t.Context(), "p", "r", nil); !errors.Is(err, store.ErrNotFound) || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("Get error = %v", err)
	}
	f.srv.Close()
	_, err = st.Table("tbl").Get(t.Context(), "p", "r", nil)
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("transport error = %v: want an error without the signature", err)
	}
	// The queue and blob services were not attached: their handles say
	// how to attach them.
	if err := st.Queue("qqq").Create(t.Context()); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "azqueues.Service()") {
		t.Errorf("queue without the service: %v", err)
	}
	if _, _, err := st.Container("ccc").Get(t.Context(), "b"); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "azblobs.Service()") {
		t.Errorf("container without the service: %v", err)
	}
	// Attached, but without an endpoint: the handles say that.
	sas, err := NewFromSASURL(Endpoints{Table: f.srv.URL + "/acct?sv=2020&sig=topsecret"}, &Options{Retry: fastRetry, Services: allServices()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sas.Queue("qqq").Create(t.Context()); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "queue endpoint") {
		t.Errorf("queue without endpoint: %v", err)
	}
	if err := sas.Container("ccc").Create(t.Context()); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "blob endpoint") {
		t.Errorf("container without endpoint: %v", err)
	}
}

// TestRetryOnlyWhatIsSafe proves an insert or delete answered with a 500
// is never sent again (it may have been applied) but read back, and the
// read-back decides; a 503 (refused before any work) is resent; an
// idempotent upsert and a read are resent after a 500.
func TestRetryOnlyWhatIsSafe(t *testing.T) {
	cases := []struct {
		name    string
		first   int
		op      func(tbl store.Table) error
		methods string // the requests that reached the server, in order
		ok      bool
		class   error // what a failure matches
	}{
		// The read-back finds the entity as written: the insert happened.
		{"InsertAfter500", 500, func(tbl store.Table) error { _, err := tbl.Insert(context.Background(), entity("p", "r")); return err }, "POST GET", true, nil},
		{"InsertAfter503", 503, func(tbl store.Table) error { _, err := tbl.Insert(context.Background(), entity("p", "r")); return err }, "POST POST", true, nil},
		{"UpsertAfter500", 500, func(tbl store.Table) error {
			_, err := tbl.Upsert(context.Background(), entity("p", "r"), store.Merge)
			return err
		}, "PATCH PATCH", true, nil},
		// The read-back finds the row still there: the delete did not
		// happen, and saying so makes a resend safe.
		{"DeleteAfter500", 500, func(tbl store.Table) error { return tbl.Delete(context.Background(), "p", "r", store.ETagAny) }, "DELETE GET", false, store.ErrTransient},
		{"GetAfter500", 500, func(tbl store.Table) error { _, err := tbl.Get(context.Background(), "p", "r", nil); return err }, "GET GET", true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
				mu.Lock()
				m := r.Method
				if o := r.Header.Get("X-HTTP-Method"); o != "" {
					m = o
				}
				methods = append(methods, m)
				mu.Unlock()
				if n == 0 {
					code := store.CodeOperationTimedOut
					if tc.first == 503 {
						code = store.CodeServerBusy
					}
					odataError(w, tc.first, code, "try again")
					return
				}
				w.Header().Set("ETag", `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
				w.Header().Set("Content-Type", "application/json")
				switch r.Method {
				case http.MethodPost:
					w.WriteHeader(201)
					fmt.Fprint(w, `{"PartitionKey":"p","RowKey":"r"}`)
				case http.MethodGet:
					fmt.Fprint(w, `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":"1"}`)
				default:
					w.WriteHeader(204)
				}
			})
			err := tc.op(f.sharedKeyStore(t).Table("tbl"))
			if got := strings.Join(methods, " "); got != tc.methods {
				t.Errorf("requests %q, want %q", got, tc.methods)
			}
			if tc.ok != (err == nil) {
				t.Errorf("error = %v, want success %v", err, tc.ok)
			}
			if err != nil && (!errors.Is(err, tc.class) || errors.Is(err, store.ErrThrottled) || errors.Is(err, store.ErrUnknownOutcome)) {
				t.Errorf("error = %v, want it to match %v and neither ErrThrottled nor ErrUnknownOutcome", err, tc.class)
			}
		})
	}
}

// changesetResponse builds a $batch response with the given inner parts.
func changesetResponse(w http.ResponseWriter, parts ...string) {
	w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
	w.WriteHeader(202)
	var b strings.Builder
	b.WriteString("--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n")
	for _, p := range parts {
		b.WriteString("--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(p)
		b.WriteString("\r\n")
	}
	b.WriteString("--changesetresponse_2--\r\n--batchresponse_1--\r\n")
	fmt.Fprint(w, b.String())
}

// TestTransactReadsChangeset proves the ETag of each action is read from
// a successful changeset and the failing index from a failed one.
func TestTransactReadsChangeset(t *testing.T) {
	acts := []store.Action{
		{Kind: store.ActionInsert, Entity: entity("p", "1")},
		{Kind: store.ActionUpsertMerge, Entity: entity("p", "2")},
		{Kind: store.ActionDelete, Entity: entity("p", "3"), IfMatch: store.ETagAny},
	}
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		if !strings.HasSuffix(r.URL.Path, "/$batch") {
			t.Errorf("request to %s, want $batch", r.URL.Path)
		}
		if n == 0 {
			changesetResponse(w,
				"HTTP/1.1 204 No Content\r\nContent-ID: 1\r\nETag: W/\"e1\"\r\n\r\n",
				"HTTP/1.1 204 No Content\r\nContent-ID: 2\r\nETag: W/\"e2\"\r\n\r\n",
				"HTTP/1.1 204 No Content\r\nContent-ID: 3\r\n\r\n")
			return
		}
		changesetResponse(w, "HTTP/1.1 409 Conflict\r\nContent-ID: 1\r\nContent-Type: application/json\r\n\r\n"+
			`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists.\nRequestId:x"}}}`)
	})
	tbl := f.sharedKeyStore(t).Table("tbl")
	res, err := tbl.Transact(t.Context(), acts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].ETag != `W/"e1"` || res[1].ETag != `W/"e2"` || res[2].ETag != "" {
		t.Errorf("results = %+v", res)
	}
	_, err = tbl.Transact(t.Context(), acts)
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeEntityAlreadyExists || se.Status != 409 || se.Index != 1 {
		t.Errorf("error = %#v, want EntityAlreadyExists (409) at action 1", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `PartitionKey "p", RowKey "2"`) {
		t.Errorf("error %q does not name the failing action's keys", msg)
	}
	if f.count.Load() != 2 {
		t.Errorf("%d requests, want 2 (a failed transaction is not replayed)", f.count.Load())
	}
}

// TestBadInputSendsNothing proves client-side validation refuses bad input
// before any request, including continuation tokens this store did not
// issue and responses with an empty error code (as Azurite sends).
func TestBadInputSendsNothing(t *testing.T) {
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(400) })
	st := f.sharedKeyStore(t)
	tbl := st.Table("tbl")
	for _, tok := range []string{"x", "aze1.", "aze1.!!!", "aze1." + "AA", "azt1.abc"} {
		_, err := tbl.Query(t.Context(), store.Query{Continuation: tok})
		if store.Code(err) != store.CodeInvalidInput {
			t.Errorf("Query with token %q: %v, want InvalidInput", tok, err)
		}
	}
	if _, err := st.ListTables(t.Context(), store.ListTablesOptions{Continuation: "aze1.AA"}); store.Code(err) != store.CodeInvalidInput {
		t.Errorf("ListTables with an entity token: %v", err)
	}
	if _, err := st.Table("bad-name").Get(t.Context(), "p", "r", nil); store.Code(err) != store.CodeInvalidResourceName {
		t.Errorf("bad table name: %v", err)
	}
	if n := f.count.Load(); n != 0 {
		t.Errorf("%d requests were sent for bad input", n)
	}
	_, err := tbl.Get(t.Context(), "p", "r", nil)
	if se := (*store.Error)(nil); !errors.As(err, &se) || se.Code != store.CodeInvalidInput || se.Status != 400 {
		t.Errorf("a 400 without code = %v, want InvalidInput (400)", err)
	}
}

func TestContinuationTokenRoundTrip(t *testing.T) {
	for _, pair := range [][2]string{{"1!8!cGsx", "1!8!cms1"}, {"1!4!YQ--", ""}} {
		npk, nrk, err := decodeEntityToken(encodeEntityToken(7, pair[0], pair[1]), 7)
		if err != nil || npk != pair[0] || nrk != pair[1] {
			t.Errorf("token of %q = %q, %q, %v", pair, npk, nrk, err)
		}
	}
}

// TestInsertAsksForNoEcho checks the request an insert sends (its own
// body as JSON, Prefer: return-no-content, no $format) and that the
// service's answer comes back whole through the stand-in aztables sees:
// the ETag of a 204, and the code, status and message of a refusal.
func TestInsertAsksForNoEcho(t *testing.T) {
	type seen struct{ prefer, ctype, query string }
	var mu sync.Mutex
	var got []seen
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		got = append(got, seen{r.Header.Get("Prefer"), r.Header.Get("Content-Type"), r.URL.RawQuery})
		mu.Unlock()
		if n == 1 {
			odataError(w, http.StatusConflict, store.CodeEntityAlreadyExists, "The specified entity already exists.")
			return
		}
		w.Header().Set("ETag", `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
		w.WriteHeader(http.StatusNoContent)
	})
	tbl := f.sharedKeyStore(t).Table("tbl")
	etag, err := tbl.Insert(context.Background(), entity("p", "r"))
	if err != nil || etag != `W/"datetime'2024-01-01T00%3A00%3A00Z'"` {
		t.Fatalf("Insert = %q, %v; want the answer's ETag", etag, err)
	}
	_, err = tbl.Insert(context.Background(), entity("p", "r"))
	var se *store.Error
	if !errors.Is(err, store.ErrAlreadyExists) || !errors.As(err, &se) || se.Code != store.CodeEntityAlreadyExists || se.Status != http.StatusConflict || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second Insert: %v; want the service's EntityAlreadyExists (409)", err)
	}
	if errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("a refusal reported as an unknown outcome: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("%d requests reached the service, want 2", len(got))
	}
	for i, s := range got {
		if s.prefer != "return-no-content" || s.ctype != "application/json" || strings.Contains(s.query, "format") {
			t.Errorf("request %d: Prefer %q, Content-Type %q, query %q; want return-no-content, application/json and no $format", i, s.prefer, s.ctype, s.query)
		}
	}
}

// TestRawCallOutcome checks the error an insert reports when aztables'
// own error (from the null stand-in) says nothing: the pipeline's error,
// the service's answer, or a wrapped aztables error when nothing was sent.
func TestRawCallOutcome(t *testing.T) {
	stubErr := errors.New("aztables: entity must have a PartitionKey and RowKey")
	if err := (&rawCall{}).outcome(nil); err != nil {
		t.Errorf("success reported as %v", err)
	}
	if err := (&rawCall{}).outcome(stubErr); !errors.Is(err, stubErr) || !strings.Contains(err.Error(), "did not send") {
		t.Errorf("unsent call: %v; want aztables' error, saying nothing was sent", err)
	}
	pipeErr := errors.New("connection reset")
	if err := (&rawCall{sent: true, err: pipeErr}).outcome(stubErr); err != pipeErr {
		t.Errorf("pipeline error: got %v, want %v", err, pipeErr)
	}
	resp := &http.Response{StatusCode: http.StatusConflict, Header: http.Header{"X-Ms-Error-Code": {"EntityAlreadyExists"}},
		Body: io.NopCloser(strings.NewReader(`{"odata.error":{"code":"EntityAlreadyExists"}}`)), Request: httptest.NewRequest(http.MethodPost, "http://127.0.0.1/tbl", nil)}
	var re *azcore.ResponseError
	if err := (&rawCall{sent: true, resp: resp}).outcome(stubErr); !errors.As(err, &re) || re.StatusCode != http.StatusConflict || re.ErrorCode != "EntityAlreadyExists" {
		t.Errorf("error answer: %v; want the service's 409 EntityAlreadyExists", err)
	}
}

// TestReadsAskForTypesByAccept checks that a point read and a query ask
// for minimal metadata (the type annotations) in their Accept header
// alone, with no $format, and read the typed answer.
func TestReadsAskForTypesByAccept(t *testing.T) {
	var mu sync.Mutex
	var accepts, queries []string
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		accepts, queries = append(accepts, r.Header.Get("Accept")), append(queries, r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		if n == 0 {
			w.Header().Set("ETag", `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
			fmt.Fprint(w, `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":"1"}`)
			return
		}
		fmt.Fprint(w, `{"value":[{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":"2"}]}`)
	})
	tbl := f.sharedKeyStore(t).Table("tbl")
	e, err := tbl.Get(context.Background(), "p", "r", nil)
	if err != nil || e.Properties["A"] != int64(1) {
		t.Fatalf("Get = %+v, %v; want A as the Int64 1", e, err)
	}
	page, err := tbl.Query(context.Background(), store.Query{Filter: "PartitionKey eq 'p'"})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].Properties["A"] != int64(2) {
		t.Fatalf("Query = %+v, %v; want one entity with A as the Int64 2", page, err)
	}
	for i := range accepts {
		if accepts[i] != "application/json;odata=minimalmetadata" || strings.Contains(queries[i], "format") {
			t.Errorf("request %d: Accept %q, query %q; want application/json;odata=minimalmetadata and no $format", i, accepts[i], queries[i])
		}
	}
	if len(accepts) != 2 {
		t.Errorf("%d requests, want 2", len(accepts))
	}
}
