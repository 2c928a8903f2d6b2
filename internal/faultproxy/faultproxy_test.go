package faultproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFaults: for every fault, whether the server saw the request and
// what the client got back.
func TestFaults(t *testing.T) {
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("ETag", "v1")
		w.WriteHeader(201)
		w.Write([]byte("stored:" + string(body)))
	}))
	defer srv.Close()
	var next atomic.Int64
	p, err := Start(srv.URL, func(*http.Request) Fault { return Fault(next.Load()) })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Delay = 300 * time.Millisecond
	cases := []struct {
		f        Fault
		received bool
		status   int    // 0: no answer (transport error)
		body     string // prefix of the body read, when answered
	}{
		{None, true, 201, "stored:hello"},
		{Busy, false, 503, `{"odata.error":{"code":"ServerBusy"`},
		{InternalBefore, false, 500, `{"odata.error":{"code":"InternalError"`},
		{ResetBefore, false, 0, ""},
		{DropAfter, true, 0, ""},
		{TruncateAfter, true, 201, ""},
		{InternalAfter, true, 500, `{"odata.error":{"code":"InternalError"`},
		{TimeoutAfter, true, 500, `{"odata.error":{"code":"OperationTimedOut"`},
		{DelayAfter, true, 201, "stored:hello"},
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, c := range cases {
		t.Run(c.f.String(), func(t *testing.T) {
			next.Store(int64(c.f))
			before := received.Load()
			start := time.Now()
			resp, err := client.Post(p.URL+"/acct/tbl?sig=x", "text/plain", strings.NewReader("hello"))
			if got := received.Load() - before; got != map[bool]int64{true: 1, false: 0}[c.received] {
				t.Fatalf("the server received %d requests, want received=%v", got, c.received)
			}
			if c.received != c.f.Applied() {
				t.Fatalf("Applied() = %v", c.f.Applied())
			}
			if c.status == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got %d, want no answer", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, rerr := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.f == TruncateAfter {
				if rerr == nil || len(body) >= len("stored:hello") {
					t.Fatalf("read %q, %v: want a body cut short", body, rerr)
				}
				return
			}
			if !strings.HasPrefix(string(body), c.body) {
				t.Fatalf("body %q, want %q", body, c.body)
			}
			if c.f == DelayAfter && time.Since(start) < p.Delay {
				t.Fatalf("answered after %v, want at least %v", time.Since(start), p.Delay)
			}
		})
	}
	counts := p.Counts()
	for _, c := range cases {
		if counts[c.f] != 1 {
			t.Fatalf("counts %v: want one of each", counts)
		}
	}
	if p.Faults() != len(cases)-1 {
		t.Fatalf("Faults() = %d", p.Faults())
	}
}
