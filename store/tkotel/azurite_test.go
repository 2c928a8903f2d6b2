package tkotel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/meter"
	"github.com/tablekit/tablekit/store/tkotel"
)

// countingTransport counts every HTTP request azcore hands the transport,
// retries included, and plays the service's faults the test schedules: a
// 503 or a 500 answered without sending, or an answer lost after the
// request was applied.
type countingTransport struct {
	next     policy.Transporter
	requests atomic.Int64
	mu       sync.Mutex
	faults   []fault
}

type fault struct {
	method string // the request's method
	status int    // 503 or 500: answered so without sending; 0: sent, answer lost
}

func (c *countingTransport) inject(method string, status int) {
	c.mu.Lock()
	c.faults = append(c.faults, fault{method, status})
	c.mu.Unlock()
}

func (c *countingTransport) Do(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	c.mu.Lock()
	var f *fault
	for i := range c.faults {
		if c.faults[i].method == req.Method {
			ff := c.faults[i]
			f = &ff
			c.faults = append(c.faults[:i], c.faults[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	if f == nil {
		return c.next.Do(req)
	}
	if f.status == 0 {
		resp, err := c.next.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, io.ErrUnexpectedEOF
	}
	code := "ServerBusy"
	if f.status == 500 {
		code = "InternalError"
	}
	body := `{"odata.error":{"code":"` + code + `","message":{"lang":"en-US","value":"injected"}}}`
	h := http.Header{}
	h.Set("Content-Type", "application/json;odata=minimalmetadata")
	h.Set("x-ms-error-code", code)
	return &http.Response{StatusCode: f.status, Status: fmt.Sprintf("%d %s", f.status, http.StatusText(f.status)),
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// TestSpansMetricsAndMeterAzurite runs the workload on Azurite through a
// counting transport: the meter, the request spans and azcore's HTTP
// spans each count what the transport counted, and every HTTP span is a
// child of tablekit's request span.
func TestSpansMetricsAndMeterAzurite(t *testing.T) {
	conn := azuritetest.Conn(t)
	k := newKit(t)
	tr := &countingTransport{next: http.DefaultClient}
	az, err := azstore.NewFromConnectionString(conn, &azstore.Options{
		Transport:       tr,
		TracingProvider: k.in.AzureProvider(),
		Retry:           policy.RetryOptions{RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, m := meter.Wrap(k.in.Store(az))
	name := fmt.Sprintf("otel%d", time.Now().UnixNano()%1e12)
	t.Cleanup(func() { az.DeleteTable(context.Background(), name) })
	runOn(t, st, name, nil)

	ctx := context.Background()
	repo := mapper.NewRepository[Order](st, name)
	// A throttled insert: azcore retries the 503, which is not billed.
	tr.inject(http.MethodPost, 503)
	if err := repo.Insert(ctx, &Order{Customer: "c", ID: "busy"}); err != nil {
		t.Fatalf("throttled insert: %v", err)
	}
	// An upsert answered with a 500: idempotent, azcore sends it again.
	tr.inject(http.MethodPatch, 500)
	tr.inject(http.MethodPut, 500)
	if err := repo.Upsert(ctx, &Order{Customer: "c", ID: "u"}, store.Replace); err != nil {
		t.Fatalf("retried upsert: %v", err)
	}
	tr.mu.Lock()
	left := len(tr.faults)
	tr.faults = nil
	tr.mu.Unlock()
	if left != 1 {
		t.Fatalf("%d injected faults left, want 1 (one of PATCH and PUT)", left)
	}
	// An insert whose answer is lost after it applied: settled by a
	// read-back.
	tr.inject(http.MethodPost, 0)
	if err := repo.Insert(ctx, &Order{Customer: "c", ID: "lost"}); err != nil {
		t.Fatalf("lost insert: %v", err)
	}

	total := m.Total()
	t.Logf("\n%s", m)
	requests := tr.requests.Load()
	if total.Requests != requests {
		t.Errorf("meter: %d requests, the transport %d", total.Requests, requests)
	}
	if total.Throttled != 1 || total.Billed != requests-2 || total.NoAnswer != 1 {
		t.Errorf("meter: %+v; want 1 throttled, 1 without answer, the rest of %d billed", total, requests)
	}
	if c := m.Op("Table.Query"); c.Billed != 3 {
		t.Errorf("a 3-page query billed %d", c.Billed)
	}
	if c := m.Op("Table.Upsert"); c.Requests != 2 || c.Billed != 2 {
		t.Errorf("retried upsert: %+v", c)
	}

	spans := k.spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	var httpSpans, reqAttr int64
	parents, direct := map[string]int{}, map[string]int{}
	for _, s := range spans {
		if s.InstrumentationScope().Name == tkotel.ScopeName && s.SpanKind() == trace.SpanKindClient {
			v, _ := attr(s, tkotel.AttrRequests)
			reqAttr += v.AsInt64()
		}
		if !strings.HasPrefix(s.Name(), "HTTP ") {
			continue
		}
		httpSpans++
		if d, ok := byID[s.Parent().SpanID()]; ok {
			direct[d.Name()]++
		}
		// azcore's HTTP span is below tablekit's request span (directly, or
		// through a lost answer's read-back, driver.Settle).
		p, ok := byID[s.Parent().SpanID()]
		for ok && !(p.InstrumentationScope().Name == tkotel.ScopeName && p.SpanKind() == trace.SpanKindClient) {
			p, ok = byID[p.Parent().SpanID()]
		}
		if !ok {
			t.Errorf("HTTP span %s has no tablekit request span above it", s.Name())
			continue
		}
		if p.SpanContext().TraceID() != s.SpanContext().TraceID() {
			t.Errorf("HTTP span %s is in another trace", s.Name())
		}
		parents[p.Name()]++
	}
	t.Logf("HTTP spans under: %v; their parents: %v", parents, direct)
	// in.AzureProvider makes no span for the SDK's call inside a request:
	// tablekit's request span stands for it, and each HTTP span's parent
	// is one of tablekit's spans.
	for _, s := range spans {
		if p, ok := byID[s.Parent().SpanID()]; ok && strings.HasPrefix(s.Name(), "HTTP ") && p.InstrumentationScope().Name != tkotel.ScopeName {
			t.Errorf("HTTP span %s's parent is %s of %s", s.Name(), p.Name(), p.InstrumentationScope().Name)
		}
		if strings.HasPrefix(s.Name(), "Client.") {
			t.Errorf("an SDK call's span %s inside a tablekit request", s.Name())
		}
	}
	if httpSpans != requests {
		t.Errorf("%d azcore HTTP spans, the transport counted %d requests", httpSpans, requests)
	}
	if reqAttr != requests {
		t.Errorf("request spans count %d requests, the transport %d", reqAttr, requests)
	}
	if n := len(spansNamed(spans, "driver.Settle")); n != 1 {
		t.Errorf("%d driver.Settle spans, want 1", n)
	}
	if n := len(spansNamed(spans, "Table.Query "+name)); n != 3 {
		t.Errorf("%d page spans, want 3", n)
	}
	// Secrets never reach a span.
	key := accountKey(conn)
	for _, s := range spans {
		for _, a := range s.Attributes() {
			v := a.Value.String()
			if strings.Contains(v, "sig=") || (key != "" && strings.Contains(v, key)) || strings.Contains(v, "AccountKey") {
				t.Errorf("span %s attribute %s carries a secret", s.Name(), a.Key)
			}
		}
	}

	ms := k.metrics(t)
	if n := sum(ms["tablekit.client.billed_transactions"]); n != total.Billed {
		t.Errorf("billed metric %d, meter %d", n, total.Billed)
	}
	if n := sum(ms["tablekit.client.throttles"]); n != 1 {
		t.Errorf("throttles metric %d", n)
	}
	if n := sum(ms["tablekit.client.retries"]); n != total.Retries() {
		t.Errorf("retries metric %d, meter %d", n, total.Retries())
	}
	if n := histCount(ms["db.client.operation.duration"], nil); int64(n) != total.Calls {
		t.Errorf("duration histogram: %d calls, meter %d", n, total.Calls)
	}
}

// accountKey is the AccountKey of a connection string.
func accountKey(conn string) string {
	for _, part := range strings.Split(conn, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(k, "AccountKey") {
			return v
		}
	}
	return ""
}

// The SDK call's span is left out only where tablekit's request span
// stands for it: tkotel.AzureProvider keeps it under tablekit's span, and
// in.AzureProvider keeps it for a call made outside in's requests.
func TestAzureProviderSDKCallSpans(t *testing.T) {
	conn := azuritetest.Conn(t)
	ctx := context.Background()
	name := fmt.Sprintf("otelsdk%d", time.Now().UnixNano()%1e12)
	for _, c := range []struct {
		name    string
		wrapped bool
		free    bool // tkotel.AzureProvider rather than in.AzureProvider
		parent  string
	}{
		{"free function, wrapped", true, true, "Table.Get " + name},
		{"method, not wrapped", false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKit(t)
			p := k.in.AzureProvider()
			if c.free {
				p = tkotel.AzureProvider(k.tp)
			}
			az, err := azstore.NewFromConnectionString(conn, &azstore.Options{TracingProvider: p})
			if err != nil {
				t.Fatal(err)
			}
			st := store.Store(az)
			if c.wrapped {
				st = k.in.Store(az)
			}
			if _, err := st.Table(name).Get(ctx, "p", "r", nil); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("get from a missing table: %v", err)
			}
			spans := k.spans.Ended()
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, s := range spans {
				byID[s.SpanContext().SpanID()] = s
			}
			calls := spansNamed(spans, "Client.GetEntity")
			if len(calls) != 1 {
				t.Fatalf("%d Client.GetEntity spans, want 1", len(calls))
			}
			parent := ""
			if p, ok := byID[calls[0].Parent().SpanID()]; ok {
				parent = p.Name()
			}
			if parent != c.parent {
				t.Errorf("Client.GetEntity's parent is %q, want %q", parent, c.parent)
			}
			// Each HTTP span is a child of an SDK call's span (the get's,
			// or the pager's of the table lookup that follows a 404).
			sdk := calls[0].InstrumentationScope().Name
			for _, s := range spans {
				if p, ok := byID[s.Parent().SpanID()]; strings.HasPrefix(s.Name(), "HTTP ") && (!ok || p.InstrumentationScope().Name != sdk) {
					t.Errorf("HTTP span %s is not a child of an SDK call's span", s.Name())
				}
			}
		})
	}
}
