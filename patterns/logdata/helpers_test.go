package logdata

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/faultproxy"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
)

// names makes container names unique within the process and across runs
// against one long-lived Azurite.
var (
	names = atomic.Int64{}
	runID = time.Now().UnixNano() % 1_000_000
)

// newContainer creates a container with a fresh name on st, deleted when
// the test ends.
func newContainer(t testing.TB, st store.Store) store.Container {
	t.Helper()
	c := st.Container(fmt.Sprintf("logdata%d-%d", runID, names.Add(1)))
	if err := c.Create(context.Background()); err != nil {
		t.Fatalf("create container %s: %v", c.Name(), err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background()) })
	return c
}

// containerOf is newContainer on a backend.
func containerOf(t testing.TB, b backendtest.Backend) store.Container {
	t.Helper()
	return newContainer(t, b.Store)
}

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// at is a time of 24 November 2026, UTC.
func at(hour, min, sec int) time.Time {
	return time.Date(2026, 11, 24, hour, min, sec, 0, time.UTC)
}

// mustWriter makes a writer, failing the test on an error.
func mustWriter(t testing.TB, c store.Container, prefix string, o Options) *Writer {
	t.Helper()
	w, err := NewWriter(c, prefix, &o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mustWrite writes a record, failing the test on an error.
func mustWrite(t testing.TB, w *Writer, s string) {
	t.Helper()
	if err := w.Write(context.Background(), []byte(s)); err != nil {
		t.Fatalf("Write(%q): %v", s, err)
	}
}

// readAll reads the records of [from, to), failing the test on an error.
func readAll(t testing.TB, c store.Container, prefix string, o ReaderOptions, from, to time.Time) []Record {
	t.Helper()
	r, err := NewReader(c, prefix, &o)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for rec, err := range r.Records(context.Background(), from, to) {
		if err != nil {
			t.Fatalf("Records: %v", err)
		}
		out = append(out, rec)
	}
	return out
}

// payloads returns the records' data as strings.
func payloads(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Data)
	}
	return out
}

// blobNames lists the container's blobs under prefix.
func blobNames(t testing.TB, c store.Container, prefix string) []store.BlobProps {
	t.Helper()
	var out []store.BlobProps
	opts := store.BlobListOptions{Prefix: prefix}
	for {
		page, err := c.List(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Blobs...)
		if page.NextMarker == "" {
			return out
		}
		opts.Marker = page.NextMarker
	}
}

// proxiedAzurite returns a store on Azurite whose blob requests pass
// through a fault-injecting proxy on loopback, and the proxy. It skips
// like backendtest.Azurite when Azurite is not running.
func proxiedAzurite(t *testing.T, decide func(*http.Request) faultproxy.Fault) (store.Store, *faultproxy.Proxy) {
	t.Helper()
	conn := azuritetest.Conn(t)
	var parts []string
	var p *faultproxy.Proxy
	for _, part := range strings.Split(conn, ";") {
		k, v, _ := strings.Cut(part, "=")
		if strings.EqualFold(strings.TrimSpace(k), "BlobEndpoint") {
			u, err := url.Parse(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			p, err = faultproxy.Start(u.Scheme+"://"+u.Host, decide)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			part = "BlobEndpoint=" + p.URL + u.Path
		}
		parts = append(parts, part)
	}
	if p == nil {
		t.Fatal("the Azurite connection string has no BlobEndpoint")
	}
	st, err := azstore.NewFromConnectionString(strings.Join(parts, ";"), &azstore.Options{
		Services: []azstore.Service{azblobs.Service()},
		Retry:    policy.RetryOptions{RetryDelay: 2 * time.Millisecond, MaxRetryDelay: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, p
}

// isAppend reports an Append Block request; isCreate a Create Append
// Blob; isRead a Get Blob.
func isAppend(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Get("comp") == "appendblock"
}
func isCreate(r *http.Request) bool {
	return r.Method == http.MethodPut && r.Header.Get("x-ms-blob-type") == "AppendBlob"
}
func isRead(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("restype") == "" && r.URL.Query().Get("comp") == ""
}
