package mapper

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// wireDoc has every annotated type and a whole-number Double, whose ".0"
// is what tells the service it is a Double and not an Int32.
type wireDoc struct {
	PK     string     `table:",pk"`
	RK     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Title  string
	Rating float64
	Count  int32
	Big    int64
	When   time.Time
	Blob   []byte
	ID     store.GUID
}

func wireDocs(n int) []wireDoc {
	out := make([]wireDoc, n)
	for i := range out {
		out[i] = wireDoc{PK: "p'1", RK: fmt.Sprintf("r %03d", i), Title: "naïve \"quoted\" <b>&</b>",
			Rating: float64(4 + i), Count: int32(i), Big: 1<<40 + int64(i),
			When: time.Date(2026, 11, 24, 12, 0, 0, 100*i, time.UTC), Blob: []byte{0, 1, byte(i)},
			ID: store.GUID{15: byte(i)}}
	}
	return out
}

// recorder is an HTTP transport that keeps a copy of every request body
// before passing the request on.
type recorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	bodies []string
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.bodies
	r.bodies = nil
	return b
}

// subBodies returns the JSON bodies of a $batch request's sub-requests,
// each read by its Content-Length header.
func subBodies(t *testing.T, batch string) []string {
	t.Helper()
	var out []string
	for _, part := range strings.Split(batch, "Content-Type: application/http")[1:] {
		i := strings.Index(part, "Content-Length: ")
		if i < 0 {
			continue // a delete
		}
		rest := part[i+len("Content-Length: "):]
		eol := strings.Index(rest, "\r\n")
		n, err := strconv.Atoi(rest[:eol])
		if err != nil {
			t.Fatalf("bad Content-Length in %q", part)
		}
		body := rest[eol+len("\r\n\r\n"):]
		out = append(out, body[:n])
	}
	return out
}

// fakeService answers writes and transactions as the Table service does
// when they succeed, for the run without Azurite. The bodies it received
// go to got, when not nil.
func fakeService(t *testing.T, got *recorder) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if got != nil && len(body) > 0 {
			got.mu.Lock()
			got.bodies = append(got.bodies, string(body))
			got.mu.Unlock()
		}
		w.Header().Set("ETag", `W/"datetime'2026-11-24T12%3A00%3A00.0000000Z'"`)
		if !strings.HasSuffix(r.URL.Path, "$batch") {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, "--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n")
		for range strings.Count(string(body), "Content-Type: application/http") {
			fmt.Fprint(w, "--changesetresponse_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"+
				"HTTP/1.1 204 No Content\r\nETag: W/\"datetime'2026-11-24T12%3A00%3A00.0000000Z'\"\r\n\r\n\r\n")
		}
		fmt.Fprint(w, "--changesetresponse_1--\r\n--batchresponse_1--\r\n")
	}))
	t.Cleanup(srv.Close)
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=" + srv.URL + "/devstoreaccount1;"
}

// The bytes the mapper encodes (AppendJSON) are the bytes that reach the
// transport: for Insert, Update and Upsert, and for every sub-request of a
// transaction (Batch) and of a bulk write. A whole-number Double keeps its
// ".0" and every annotation is there. On Azurite the values also read back
// with their types.
func TestTypedWritesSendTheEncodedBytes(t *testing.T) {
	// "fake" records the bodies at a net/http transport in front of a
	// fake service; "fake-default-transport" records them where the
	// fake service received them, sent by azstore's own transport.
	services := map[string]string{"fake": "", "fake-default-transport": ""}
	if conn := azuritetestConn(); conn != "" {
		services["azurite"] = conn
	}
	for name, conn := range services {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{next: http.DefaultTransport}
			opts := &azstore.Options{Transport: rec}
			switch name {
			case "fake":
				conn = fakeService(t, nil)
			case "fake-default-transport":
				conn = fakeService(t, rec)
				opts = nil
			}
			st, err := azstore.NewFromConnectionString(conn, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			table := fmt.Sprintf("WireBytes%d", time.Now().UnixNano()%1e9)
			if name == "azurite" {
				if err := st.CreateTable(ctx, table); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.DeleteTable(context.Background(), table) })
			}
			r := NewRepository[wireDoc](st, table)
			docs := wireDocs(6)
			want := func(v *wireDoc) string {
				b, err := AppendJSON(nil, v)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(b, []byte(`"Rating":`+strconv.Itoa(int(v.Rating))+`.0`)) ||
					!bytes.Contains(b, []byte(`"Big@odata.type":"Edm.Int64"`)) ||
					!bytes.Contains(b, []byte(`"When@odata.type":"Edm.DateTime"`)) ||
					!bytes.Contains(b, []byte(`"Blob@odata.type":"Edm.Binary"`)) ||
					!bytes.Contains(b, []byte(`"ID@odata.type":"Edm.Guid"`)) {
					t.Fatalf("AppendJSON lost a Double's .0 or an annotation: %s", b)
				}
				return string(b)
			}
			rec.take()
			single := 0
			for i, op := range []func(*wireDoc) error{
				func(v *wireDoc) error { return r.Insert(ctx, v) },
				func(v *wireDoc) error { return r.Update(ctx, v, store.Replace) },
				func(v *wireDoc) error { return r.Upsert(ctx, v, store.Merge) },
			} {
				if err := op(&docs[0]); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				sent := rec.take()
				if len(sent) != 1 || sent[0] != want(&docs[0]) {
					t.Fatalf("write %d sent %q\nwant %q", i, sent, want(&docs[0]))
				}
				single++
			}
			b := r.Batch()
			for i := 1; i < 4; i++ {
				if err := b.Insert(&docs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Run(ctx); err != nil {
				t.Fatal(err)
			}
			sent := rec.take()
			if len(sent) != 1 {
				t.Fatalf("a transaction made %d requests", len(sent))
			}
			subs := subBodies(t, sent[0])
			if len(subs) != 3 {
				t.Fatalf("transaction body has %d entity bodies, want 3:\n%s", len(subs), sent[0])
			}
			for i, s := range subs {
				if s != want(&docs[i+1]) {
					t.Fatalf("sub-request %d sent %q\nwant %q", i, s, want(&docs[i+1]))
				}
			}
			bulk := []*wireDoc{&docs[4], &docs[5]}
			if _, err := r.BulkWrite(ctx, store.ActionUpsertReplace, bulk, store.BulkOptions{}); err != nil {
				t.Fatal(err)
			}
			sent = rec.take()
			subs = subBodies(t, strings.Join(sent, ""))
			if len(subs) != 2 || subs[0] != want(&docs[4]) || subs[1] != want(&docs[5]) {
				t.Fatalf("bulk write sent %q", subs)
			}
			t.Logf("%s: %d single writes and %d transaction sub-requests sent byte for byte as encoded", name, single, 5)
			if name != "azurite" {
				return
			}
			raw, err := st.Table(table).Get(ctx, docs[1].PK, docs[1].RK, nil)
			if err != nil {
				t.Fatal(err)
			}
			if x, ok := raw.Properties["Rating"].(float64); !ok || x != 5 {
				t.Fatalf("Rating read back as %T %v, want the Double 5", raw.Properties["Rating"], raw.Properties["Rating"])
			}
			for i := range docs {
				got, err := r.Get(ctx, docs[i].PK, docs[i].RK)
				if err != nil {
					t.Fatal(err)
				}
				got.ETag, docs[i].ETag = "", ""
				if fmt.Sprint(got) != fmt.Sprint(docs[i]) {
					t.Fatalf("read back %+v\nwant %+v", got, docs[i])
				}
			}
		})
	}
}

// azuritetestConn is the Azurite connection string when make test runs
// one, else "".
func azuritetestConn() string {
	return os.Getenv(azuritetest.ConnEnv)
}
