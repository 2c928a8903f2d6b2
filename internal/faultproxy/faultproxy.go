// Package faultproxy is an HTTP proxy on 127.0.0.1 that injects the
// faults of a real network and a real service between a client and a
// server (Azurite, in tablekit's tests): a request refused before it is
// forwarded, and a request forwarded and applied whose answer is then
// lost, cut short, replaced by a 500 or held past the client's timeout.
//
//	p, err := faultproxy.Start("http://127.0.0.1:10002", func(r *http.Request) faultproxy.Fault {
//		if r.Method == http.MethodPost {
//			return faultproxy.DropAfter // the insert is applied, its answer lost
//		}
//		return faultproxy.None
//	})
//	defer p.Close()
//	// point the client at p.URL instead of the server
//
// The schedule function decides each request's fault; it is called from
// the proxy's handler goroutines, so it must be safe for concurrent use.
// Counts tells what the proxy did.
package faultproxy

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fault is what the proxy does to one request.
type Fault int

const (
	// None forwards the request and its answer.
	None Fault = iota
	// Busy answers 503 ServerBusy without forwarding: nothing applied.
	Busy
	// InternalBefore answers 500 InternalError without forwarding: the
	// client cannot tell it from InternalAfter.
	InternalBefore
	// ResetBefore closes the connection without forwarding, after reading
	// the request: nothing applied, and no answer.
	ResetBefore
	// DropAfter forwards the request, then closes the connection without
	// answering: applied, answer lost.
	DropAfter
	// TruncateAfter forwards the request, then sends the status, the
	// headers and half of the body (announced at full length) and closes
	// the connection: applied, answer cut short.
	TruncateAfter
	// InternalAfter forwards the request, then answers 500 InternalError
	// instead of the server's answer: applied, answer replaced.
	InternalAfter
	// TimeoutAfter forwards the request, then answers 500
	// OperationTimedOut instead of the server's answer.
	TimeoutAfter
	// DelayAfter forwards the request, then holds the answer for Delay
	// before sending it (past a client's timeout, typically).
	DelayAfter
	numFaults
)

var names = [...]string{"none", "busy", "internal-before", "reset-before", "drop-after", "truncate-after", "internal-after", "timeout-after", "delay-after"}

// String names the fault.
func (f Fault) String() string {
	if f >= 0 && f < numFaults {
		return names[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Applied reports whether the server received the request under f.
func (f Fault) Applied() bool { return f == None || f >= DropAfter }

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	// URL is the proxy's base URL, http://127.0.0.1:port.
	URL string
	// Delay is how long DelayAfter holds an answer; 0 means 2 s.
	Delay time.Duration

	target string
	decide func(*http.Request) Fault
	srv    *http.Server
	ln     net.Listener
	client *http.Client

	mu     sync.Mutex
	counts [numFaults]int
}

// Start starts a proxy to target (a base URL such as
// http://127.0.0.1:10002) on a free port of 127.0.0.1. decide chooses the
// fault of each request; nil means None for all.
func Start(target string, decide func(*http.Request) Fault) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		URL:    "http://" + ln.Addr().String(),
		target: strings.TrimRight(target, "/"),
		decide: decide,
		ln:     ln,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() error {
	p.client.CloseIdleConnections()
	return p.srv.Close()
}

// SetSchedule replaces the decide function.
func (p *Proxy) SetSchedule(decide func(*http.Request) Fault) {
	p.mu.Lock()
	p.decide = decide
	p.mu.Unlock()
}

// Counts returns how many requests met each fault (None included).
func (p *Proxy) Counts() map[Fault]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := map[Fault]int{}
	for f, n := range p.counts {
		if n > 0 {
			m[Fault(f)] = n
		}
	}
	return m
}

// Faults returns how many requests met a fault other than None.
func (p *Proxy) Faults() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for f, c := range p.counts {
		if Fault(f) != None {
			n += c
		}
	}
	return n
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		hangUp(w)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.mu.Lock()
	decide := p.decide
	p.mu.Unlock()
	f := None
	if decide != nil {
		f = decide(r)
	}
	if f < 0 || f >= numFaults {
		f = None
	}
	p.mu.Lock()
	p.counts[f]++
	p.mu.Unlock()

	switch f {
	case Busy:
		serviceError(w, 503, "ServerBusy", "The server is busy.")
		return
	case InternalBefore:
		serviceError(w, 500, "InternalError", "The server encountered an internal error.")
		return
	case ResetBefore:
		hangUp(w)
		return
	}
	resp, err := p.forward(r, body)
	if err != nil {
		hangUp(w)
		return
	}
	switch f {
	case DropAfter:
		hangUp(w)
	case TruncateAfter:
		copyHeaders(w, resp)
		w.Header().Set("Content-Length", fmt.Sprint(len(resp.body)+1))
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body[:len(resp.body)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		hangUp(w)
	case InternalAfter:
		serviceError(w, 500, "InternalError", "The server encountered an internal error.")
	case TimeoutAfter:
		serviceError(w, 500, "OperationTimedOut", "Operation could not be completed within the specified time.")
	case DelayAfter:
		d := p.Delay
		if d <= 0 {
			d = 2 * time.Second
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		resp.write(w)
	default:
		resp.write(w)
	}
}

// answer is a server's answer, read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a *answer) write(w http.ResponseWriter) {
	copyHeaders(w, a)
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

func copyHeaders(w http.ResponseWriter, a *answer) {
	for k, vs := range a.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
}

// forward sends r to the target and reads the whole answer.
func (p *Proxy) forward(r *http.Request, body []byte) (*answer, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Host = r.Host
	req.ContentLength = int64(len(body))
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	h := resp.Header.Clone()
	h.Del("Content-Length")
	return &answer{status: resp.StatusCode, header: h, body: data}, nil
}

// serviceError answers like the Table service does: the code in a header
// and an OData JSON body.
func serviceError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"odata.error":{"code":%q,"message":{"lang":"en-US","value":%q}}}`, code, msg)
}

// hangUp closes the client's connection without an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_ = conn.Close()
}
