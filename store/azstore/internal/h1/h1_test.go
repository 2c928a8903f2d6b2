package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// noProxy keeps every test request direct whatever the environment says.
func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

func newTransport(t *testing.T, o Options) *Transport {
	t.Helper()
	if o.Proxy == nil {
		o.Proxy = noProxy
	}
	tr := New(o)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// counted starts an httptest server that counts the connections it
// accepted.
func counted(t *testing.T, h http.HandlerFunc, useTLS bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	if useTLS {
		// The test of an unknown certificate fails a handshake on purpose.
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &n
}

// rawServer is a loopback server that answers with hand-made bytes.
type rawServer struct {
	url   string
	ln    net.Listener
	conns atomic.Int32 // connections accepted
	reqs  atomic.Int32 // requests read
	done  chan struct{}
	wg    sync.WaitGroup

	mu   sync.Mutex
	open []net.Conn
	log  []string // "METHOD path" of every request read, in order
}

// rawAnswer answers request ri (0-based) of connection ci (0-based) by
// writing to c; it returns false to close the connection.
type rawAnswer func(s *rawServer, ci, ri int, req *http.Request, body []byte, c net.Conn) bool

func newRawServer(t *testing.T, answer rawAnswer) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{url: "http://" + ln.Addr().String(), ln: ln, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for ci := 0; ; ci++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func(ci int) {
				defer s.wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for ri := 0; ; ri++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, err := io.ReadAll(req.Body)
					if err != nil {
						return
					}
					s.reqs.Add(1)
					s.mu.Lock()
					s.log = append(s.log, req.Method+" "+req.URL.Path)
					s.mu.Unlock()
					if !answer(s, ci, ri, req, body, c) {
						return
					}
				}
			}(ci)
		}
	}()
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *rawServer) count(what string) int {
	n := 0
	for _, r := range s.requests() {
		if r == what {
			n++
		}
	}
	return n
}

// ok2 is a small complete answer.
const ok2 = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

func write(c net.Conn, s string) bool {
	_, err := io.WriteString(c, s)
	return err == nil
}

func newReq(t *testing.T, ctx context.Context, method, u string, body io.Reader) *http.Request {
	t.Helper()
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// fetch sends req and reads the whole answer.
func fetch(tr *Transport, req *http.Request) (*http.Response, []byte, error) {
	resp, err := tr.Do(req)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b, err
}

func mustFetch(t *testing.T, tr *Transport, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, b, err := fetch(tr, req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return resp, b
}

// seen is what the server read of one request.
type seen struct {
	method, uri, host string
	header            http.Header
	te                []string
	contentLength     int64
	body              []byte
}

func TestRoundTripMethodsURIHeadersBodies(t *testing.T) {
	got := make(chan seen, 1)
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Clone(), r.TransferEncoding, r.ContentLength, b}
		w.Header().Set("X-Echo-Method", r.Method)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)+len(r.Method)))
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, r.Method)
		w.Write(b)
	}, false)
	tr := newTransport(t, Options{})
	const target = "/Tables('t%20x')?$filter=PartitionKey%20eq%20'a'%20and%20RowKey%20ge%20'%2F'&$top=5"
	cases := []struct {
		method string
		body   []byte
		cl     string // the Content-Length header expected, "" for none
	}{
		{"GET", nil, ""},
		{"POST", []byte(`{"PartitionKey":"a","RowKey":"b"}`), "33"},
		{"PUT", []byte("x"), "1"},
		{"PUT", nil, "0"},
		{"MERGE", []byte("merge\r\nbody\x00"), "12"},
		{"POST", nil, "0"},
		{"DELETE", nil, ""},
		{"DELETE", []byte("del"), "3"},
		{"HEAD", nil, ""},
	}
	for i, c := range cases {
		var body io.Reader
		if c.body != nil {
			body = bytes.NewReader(c.body)
		}
		req := newReq(t, nil, c.method, srv.URL+target, body)
		req.Header.Set("X-Ms-Date", "Mon, 02 Jan 2006 15:04:05 GMT")
		req.Header.Add("X-Multi", "one")
		req.Header.Add("X-Multi", "two")
		req.Header["x-lower-case"] = []string{"v"}
		// Framing headers set by hand are the transport's to write.
		req.Header.Set("Content-Length", "999")
		req.Header.Set("Transfer-Encoding", "chunked")
		if i%2 == 1 {
			req.Host = "account.table.core.windows.net"
		}
		resp, b := mustFetch(t, tr, req)
		s := <-got
		if s.method != c.method || s.uri != target {
			t.Errorf("%s: server saw %s %s, want %s %s", c.method, s.method, s.uri, c.method, target)
		}
		wantHost := srv.Listener.Addr().String()
		if i%2 == 1 {
			wantHost = req.Host
		}
		if s.host != wantHost {
			t.Errorf("%s: Host %q, want %q", c.method, s.host, wantHost)
		}
		if v := s.header.Get("X-Ms-Date"); v != "Mon, 02 Jan 2006 15:04:05 GMT" {
			t.Errorf("%s: X-Ms-Date %q", c.method, v)
		}
		if v := s.header.Values("X-Multi"); len(v) != 2 || v[0] != "one" || v[1] != "two" {
			t.Errorf("%s: X-Multi %q", c.method, v)
		}
		if v := s.header.Get("X-Lower-Case"); v != "v" {
			t.Errorf("%s: x-lower-case %q", c.method, v)
		}
		if len(s.te) != 0 {
			t.Errorf("%s: Transfer-Encoding %q sent", c.method, s.te)
		}
		cl := s.header.Values("Content-Length")
		switch {
		case c.cl == "" && len(cl) != 0:
			t.Errorf("%s: Content-Length %q sent, want none", c.method, cl)
		case c.cl != "" && (len(cl) != 1 || cl[0] != c.cl):
			t.Errorf("%s: Content-Length %q, want exactly [%s]", c.method, cl, c.cl)
		}
		if !bytes.Equal(s.body, c.body) {
			t.Errorf("%s: server read body %q, want %q", c.method, s.body, c.body)
		}
		if resp.StatusCode != http.StatusCreated || resp.Status != "201 Created" || resp.Header.Get("X-Echo-Method") != c.method {
			t.Errorf("%s: answer %q %v", c.method, resp.Status, resp.Header)
		}
		if resp.Request != req || resp.ProtoMajor != 1 || resp.ProtoMinor != 1 {
			t.Errorf("%s: answer's Request or Proto wrong: %v %d.%d", c.method, resp.Request == req, resp.ProtoMajor, resp.ProtoMinor)
		}
		want := c.method + string(c.body)
		if c.method == "HEAD" {
			if len(b) != 0 || resp.ContentLength != int64(len(want)) {
				t.Errorf("HEAD: body %q, ContentLength %d, want none and %d", b, resp.ContentLength, len(want))
			}
		} else if string(b) != want || resp.ContentLength != int64(len(want)) {
			t.Errorf("%s: answer body %q (ContentLength %d), want %q", c.method, b, resp.ContentLength, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for %d sequential requests, want 1", n, len(cases))
	}
}

// TestResponseFraming reads every way an answer can end, then sends a
// second request to learn whether the connection was (correctly) reused.
func TestResponseFraming(t *testing.T) {
	cases := []struct {
		name   string
		method string
		answer string
		close  bool // the server closes after the answer
		body   string
		cl     int64
		reuse  bool
		check  func(t *testing.T, resp *http.Response)
	}{
		{name: "content-length", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", body: "hello", cl: 5, reuse: true},
		{name: "content-length zero", answer: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", cl: 0, reuse: true},
		{name: "content-length padded", answer: "HTTP/1.1 200 OK\r\nContent-Length:   3  \r\n\r\nabc", body: "abc", cl: 3, reuse: true},
		{name: "chunked", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", body: "hello world", cl: -1, reuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
					t.Errorf("TransferEncoding %q", resp.TransferEncoding)
				}
			}},
		{name: "chunked upper-case hex and extensions", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA;name=value\r\n0123456789\r\n1 ; ext=\"q;x\"\r\n!\r\n0;last\r\n\r\n", body: "0123456789!", cl: -1, reuse: true},
		{name: "chunked with trailers", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", body: "abc", cl: -1, reuse: true},
		{name: "chunked wins over content-length", answer: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", body: "hi", cl: -1, reuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Header.Get("Content-Length") != "" {
					t.Errorf("Content-Length kept beside chunked: %q", resp.Header.Get("Content-Length"))
				}
			}},
		{name: "close-delimited", answer: "HTTP/1.1 200 OK\r\n\r\nuntil the end", close: true, body: "until the end", cl: -1, reuse: false,
			check: func(t *testing.T, resp *http.Response) {
				if !resp.Close {
					t.Error("Close false on a close-delimited answer")
				}
			}},
		{name: "204", answer: "HTTP/1.1 204 No Content\r\nETag: W/\"x\"\r\n\r\n", cl: 0, reuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Header.Get("ETag") != `W/"x"` {
					t.Errorf("ETag %q", resp.Header.Get("ETag"))
				}
			}},
		{name: "304", answer: "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", cl: 0, reuse: true},
		{name: "head", method: "HEAD", answer: "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nContent-Type: text/plain\r\n\r\n", cl: 1234, reuse: true},
		{name: "head padded", method: "HEAD", answer: "HTTP/1.1 200 OK\r\nContent-Length:  77 \r\n\r\n", cl: 77, reuse: true},
		{name: "head chunked", method: "HEAD", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", cl: 0, reuse: true},
		{name: "100 continue", method: "PUT", answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc", body: "abc", cl: 3, reuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.StatusCode != 201 {
					t.Errorf("status %d, want the final 201", resp.StatusCode)
				}
			}},
		{name: "two informational answers", answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nX-Final: yes\r\nContent-Length: 1\r\n\r\nz", body: "z", cl: 1, reuse: true,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Header.Get("X-Final") != "yes" || resp.Header.Get("Link") != "" {
					t.Errorf("headers %v mix the informational answer in", resp.Header)
				}
			}},
		{name: "connection close", answer: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye", close: true, body: "bye", cl: 3, reuse: false,
			check: func(t *testing.T, resp *http.Response) {
				if !resp.Close {
					t.Error("Close false on Connection: close")
				}
			}},
		{name: "connection close among tokens", answer: "HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\nContent-Length: 3\r\n\r\nbye", body: "bye", cl: 3, reuse: false},
		{name: "error status with body", answer: "HTTP/1.1 409 Conflict\r\nContent-Length: 8\r\n\r\nconflict", body: "conflict", cl: 8, reuse: true},
		{name: "status without reason", answer: "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", body: "x", cl: 1, reuse: true},
		{name: "http/1.0 without keep-alive", answer: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", body: "hi", cl: 2, reuse: false,
			check: func(t *testing.T, resp *http.Response) {
				if resp.Proto != "HTTP/1.0" || resp.ProtoMinor != 0 || !resp.Close {
					t.Errorf("Proto %q (minor %d), Close %v, want HTTP/1.0 and Close", resp.Proto, resp.ProtoMinor, resp.Close)
				}
			}},
		{name: "http/1.0 keep-alive", answer: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi", body: "hi", cl: 2, reuse: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRawServer(t, func(_ *rawServer, ci, ri int, req *http.Request, _ []byte, conn net.Conn) bool {
				if req.URL.Path == "/next" {
					return write(conn, ok2)
				}
				return write(conn, c.answer) && !c.close
			})
			tr := newTransport(t, Options{})
			method := c.method
			if method == "" {
				method = "GET"
			}
			req := newReq(t, nil, method, s.url+"/first", nil)
			resp, b := mustFetch(t, tr, req)
			if string(b) != c.body || resp.ContentLength != c.cl {
				t.Errorf("body %q ContentLength %d, want %q %d", b, resp.ContentLength, c.body, c.cl)
			}
			if c.check != nil {
				c.check(t, resp)
			}
			if resp.Close == c.reuse {
				t.Errorf("resp.Close %v, but the connection is reusable: %v", resp.Close, c.reuse)
			}
			_, b = mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/next", nil))
			if string(b) != "ok" {
				t.Errorf("second answer %q", b)
			}
			want := int32(2)
			if c.reuse {
				want = 1
			}
			if n := s.conns.Load(); n != want {
				t.Errorf("%d connections, want %d (reuse %v)", n, want, c.reuse)
			}
		})
	}
}

// TestStrayBytesAfterAnswer: a server that sends more than the answer
// (a body after a HEAD or a 204) does not get the extra bytes read as the
// next answer.
func TestStrayBytesAfterAnswer(t *testing.T) {
	for _, c := range []struct{ method, answer string }{
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"},
		{"DELETE", "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray"},
	} {
		t.Run(c.method, func(t *testing.T) {
			s := newRawServer(t, func(_ *rawServer, ci, _ int, req *http.Request, _ []byte, conn net.Conn) bool {
				if req.URL.Path == "/next" {
					return write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nmine")
				}
				return write(conn, c.answer)
			})
			tr := newTransport(t, Options{})
			mustFetch(t, tr, newReq(t, nil, c.method, s.url+"/first", nil))
			resp, b := mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/next", nil))
			if resp.StatusCode != 200 || string(b) != "mine" {
				t.Errorf("next answer %d %q, want 200 \"mine\"", resp.StatusCode, b)
			}
			if n := s.count("GET /next"); n != 1 {
				t.Errorf("the server read GET /next %d times", n)
			}
		})
	}
}

// TestTrickledAnswer: an answer that arrives a byte at a time splits
// every line and chunk across reads.
func TestTrickledAnswer(t *testing.T) {
	answers := map[string]string{
		"/cl":      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-A: 1\r\n\r\nhello world",
		"/chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 2\r\n\r\n",
	}
	s := newRawServer(t, func(_ *rawServer, _, _ int, req *http.Request, _ []byte, c net.Conn) bool {
		for _, b := range []byte(answers[req.URL.Path]) {
			if _, err := c.Write([]byte{b}); err != nil {
				return false
			}
		}
		return true
	})
	tr := newTransport(t, Options{})
	for i := 0; i < 4; i++ {
		path := []string{"/cl", "/chunked"}[i%2]
		resp, b := mustFetch(t, tr, newReq(t, nil, "GET", s.url+path, nil))
		if resp.StatusCode != 200 || string(b) != "hello world" {
			t.Errorf("%s: %d %q", path, resp.StatusCode, b)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestSequentialRequestsReuseOneConnection(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no length known: chunked
		}
		w.Write(b)
		w.Write([]byte(r.URL.RawQuery))
	}, false)
	tr := newTransport(t, Options{})
	for i := 0; i < 40; i++ {
		method, body := "GET", ""
		if i%3 == 1 {
			method, body = "POST", strings.Repeat("b", i*100)
		}
		q := "i=" + strconv.Itoa(i)
		if i%2 == 0 {
			q += "&chunked=1"
		}
		_, b := mustFetch(t, tr, newReq(t, nil, method, srv.URL+"/?"+q, strings.NewReader(body)))
		if string(b) != body+q {
			t.Fatalf("request %d: answer %q", i, b)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 40 sequential requests, want 1", n)
	}
}

func TestBodyClosedEarlyClosesTheConnection(t *testing.T) {
	big := strings.Repeat("0123456789", 100_000)
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			io.WriteString(w, big)
			return
		}
		io.WriteString(w, "small")
	}, false)
	tr := newTransport(t, Options{})
	for _, path := range []string{"/big", "/big?chunked"} {
		resp, err := tr.Do(newReq(t, nil, "GET", srv.URL+path, nil))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n, err := resp.Body.Read(buf); n != 0 || err == nil || err == io.EOF {
			t.Errorf("Read after Close: %d, %v; want an error", n, err)
		}
		// The next answer must be its own, not the rest of the big body.
		_, b := mustFetch(t, tr, newReq(t, nil, "GET", srv.URL+"/small", nil))
		if string(b) != "small" {
			t.Fatalf("answer after an early close: %.40q", b)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (one per early-closed body, then reuse)", n)
	}
	tr.mu.Lock()
	idle := 0
	for _, cs := range tr.idle {
		idle += len(cs)
	}
	tr.mu.Unlock()
	if idle != 1 {
		t.Errorf("%d idle connections, want 1", idle)
	}
}

func TestConcurrentRequestsGetTheirOwnAnswers(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := r.Header.Get("X-Id")
		w.Header().Set("X-Id", id)
		if len(id)%2 == 0 {
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "%s:%s:%s", r.Method, id, b)
	}, false)
	const workers, each = 32, 50
	tr := newTransport(t, Options{})
	var wg sync.WaitGroup
	var failures atomic.Int32
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := fmt.Sprintf("%d-%d", g, i)
				method, body := "GET", ""
				if i%2 == 1 {
					method, body = "PUT", strings.Repeat(id, i)
				}
				req, _ := http.NewRequest(method, srv.URL+"/x?id="+id, strings.NewReader(body))
				req.Header.Set("X-Id", id)
				resp, err := tr.Do(req)
				if err != nil {
					t.Errorf("%s: %v", id, err)
					failures.Add(1)
					return
				}
				if i%7 == 3 {
					// Some callers give up on the body: their connection must not
					// come back dirty.
					resp.Body.Close()
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := method + ":" + id + ":" + body; err != nil || string(b) != want || resp.Header.Get("X-Id") != id {
					t.Errorf("%s: answer %q (%v), X-Id %q, want %q", id, b, err, resp.Header.Get("X-Id"), want)
					failures.Add(1)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	t.Logf("requests %d, connections %d, failures %d", workers*each, conns.Load(), failures.Load())
	// Each worker holds one connection at a time; an early-closed body
	// costs a new one.
	maxConns := int32(workers + workers*((each+3)/7))
	if n := conns.Load(); n > maxConns {
		t.Errorf("%d connections, want at most %d", n, maxConns)
	}
}

// closeAfterAnswer answers ok2 without saying Connection: close, then
// closes the connection and reports it on closed.
func closeAfterAnswer(closed chan<- struct{}) rawAnswer {
	return func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool {
		write(c, ok2)
		c.Close()
		closed <- struct{}{}
		return false
	}
}

// waitDead waits until the server's close of tr's one idle connection
// has reached this side.
func waitDead(t *testing.T, tr *Transport) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		tr.mu.Lock()
		var c *conn
		for _, cs := range tr.idle {
			if len(cs) > 0 {
				c = cs[len(cs)-1]
			}
		}
		tr.mu.Unlock()
		if c == nil || !alive(c.tcp) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the server's close never arrived")
}

func TestIdleConnectionClosedByServer(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			closed := make(chan struct{}, 10)
			s := newRawServer(t, closeAfterAnswer(closed))
			tr := newTransport(t, Options{})
			for i := 0; i < 5; i++ {
				_, b := mustFetch(t, tr, newReq(t, nil, method, s.url+"/r"+strconv.Itoa(i), strings.NewReader("payload")))
				if string(b) != "ok" {
					t.Fatalf("answer %q", b)
				}
				<-closed
				waitDead(t, tr)
			}
			if n := s.reqs.Load(); n != 5 {
				t.Errorf("the server read %d requests, want 5: %q", n, s.requests())
			}
			if n := s.conns.Load(); n != 5 {
				t.Errorf("%d connections, want 5", n)
			}
		})
	}
}

// TestIdleConnectionClosedByServerRacing does not wait for the server's
// close to arrive: a POST may then fail, but the server never reads one
// twice.
func TestIdleConnectionClosedByServerRacing(t *testing.T) {
	s := newRawServer(t, func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool {
		write(c, ok2)
		return false
	})
	tr := newTransport(t, Options{})
	failed := 0
	for i := 0; i < 50; i++ {
		method := "GET"
		if i%2 == 1 {
			method = "POST"
		}
		path := "/r" + strconv.Itoa(i)
		_, b, err := fetch(tr, newReq(t, nil, method, s.url+path, strings.NewReader("x")))
		if err != nil {
			if method == "GET" {
				t.Errorf("GET %s: %v", path, err)
			}
			failed++
		} else if string(b) != "ok" {
			t.Errorf("%s %s: answer %q", method, path, b)
		}
	}
	dup := 0
	for i := 0; i < 50; i++ {
		if i%2 == 1 && s.count("POST /r"+strconv.Itoa(i)) > 1 {
			dup++
		}
	}
	t.Logf("requests 50, failed POSTs %d, duplicated 0 (found %d), server reads %d", failed, dup, s.reqs.Load())
	if dup != 0 {
		t.Errorf("%d POSTs reached the server twice: %q", dup, s.requests())
	}
}

// dropSecond answers the first request of the first connection, reads the
// second one and closes without an answer (a server that closed an idle
// connection just as the request arrived); every later connection answers
// normally.
func dropSecond(_ *rawServer, ci, ri int, _ *http.Request, _ []byte, c net.Conn) bool {
	if ci == 0 && ri == 1 {
		return false
	}
	return write(c, ok2)
}

func TestStaleConnectionReplay(t *testing.T) {
	t.Run("GET is sent again once", func(t *testing.T) {
		s := newRawServer(t, dropSecond)
		tr := newTransport(t, Options{})
		mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/a", nil))
		var gotConn []bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { gotConn = append(gotConn, i.Reused) }})
		_, b := mustFetch(t, tr, newReq(t, ctx, "GET", s.url+"/b", nil))
		if string(b) != "ok" {
			t.Errorf("answer %q", b)
		}
		if n := s.count("GET /b"); n != 2 {
			t.Errorf("the server read GET /b %d times, want 2 (dropped, then sent again)", n)
		}
		if len(gotConn) != 2 || !gotConn[0] || gotConn[1] {
			t.Errorf("GotConn reused %v, want [true false]", gotConn)
		}
	})
	for _, method := range []string{"POST", "PUT", "MERGE", "PATCH", "DELETE"} {
		t.Run(method+" is not sent again", func(t *testing.T) {
			s := newRawServer(t, dropSecond)
			tr := newTransport(t, Options{})
			mustFetch(t, tr, newReq(t, nil, method, s.url+"/a", strings.NewReader("1")))
			_, _, err := fetch(tr, newReq(t, nil, method, s.url+"/b", strings.NewReader("2")))
			if err == nil {
				t.Error("no error for a request the server dropped")
			}
			if n := s.count(method + " /b"); n != 1 {
				t.Errorf("the server read %s /b %d times, want 1", method, n)
			}
			if n := s.conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1 (no second try)", n)
			}
		})
	}
	t.Run("GET with a streamed body and no GetBody is not sent again", func(t *testing.T) {
		s := newRawServer(t, dropSecond)
		tr := newTransport(t, Options{})
		mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/a", nil))
		req := newReq(t, nil, "GET", s.url+"/b", nil)
		req.Body = io.NopCloser(strings.NewReader("query body"))
		req.ContentLength = int64(len("query body"))
		_, _, err := fetch(tr, req)
		if err == nil {
			t.Fatal("no error: the body was already consumed, yet the request was sent again")
		}
		if n := s.count("GET /b"); n != 1 {
			t.Errorf("the server read GET /b %d times, want 1", n)
		}
	})
	t.Run("GET with GetBody is sent again with the whole body", func(t *testing.T) {
		var bodies []string
		var mu sync.Mutex
		s := newRawServer(t, func(s *rawServer, ci, ri int, req *http.Request, body []byte, c net.Conn) bool {
			mu.Lock()
			bodies = append(bodies, string(body))
			mu.Unlock()
			return dropSecond(s, ci, ri, req, body, c)
		})
		tr := newTransport(t, Options{})
		mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/a", nil))
		mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/b", strings.NewReader("query body")))
		mu.Lock()
		defer mu.Unlock()
		if len(bodies) != 3 || bodies[1] != "query body" || bodies[2] != "query body" {
			t.Errorf("bodies read %q, want the body twice after the first request", bodies)
		}
	})
	t.Run("only one replay", func(t *testing.T) {
		// Every connection answers its first request only: the replay on a
		// new connection reaches a server that drops it too.
		s := newRawServer(t, func(_ *rawServer, ci, ri int, _ *http.Request, _ []byte, c net.Conn) bool {
			if ci == 0 && ri == 0 {
				return write(c, ok2)
			}
			return false
		})
		tr := newTransport(t, Options{})
		mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/a", nil))
		if _, _, err := fetch(tr, newReq(t, nil, "GET", s.url+"/b", nil)); err == nil {
			t.Error("no error")
		}
		if n := s.count("GET /b"); n != 2 {
			t.Errorf("the server read GET /b %d times, want 2", n)
		}
	})
}

func TestUnsolicitedBytesOnIdleConnection(t *testing.T) {
	// The server answers, then times the idle connection out with an
	// answer to nothing and keeps it open: in the same write (the bytes
	// wait in the connection's buffer) or later (they wait in the socket).
	for _, later := range []bool{false, true} {
		t.Run(fmt.Sprintf("later=%v", later), func(t *testing.T) {
			const timeout = "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n"
			read, sent := make(chan struct{}), make(chan struct{})
			s := newRawServer(t, func(_ *rawServer, ci, ri int, _ *http.Request, _ []byte, c net.Conn) bool {
				if ci == 0 {
					if later {
						write(c, ok2)
						<-read
						write(c, timeout)
					} else {
						write(c, ok2+timeout)
					}
					close(sent)
					return true
				}
				return write(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal")
			})
			tr := newTransport(t, Options{})
			mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/a", nil))
			close(read)
			<-sent
			if later {
				waitDead(t, tr)
			}
			for _, method := range []string{"POST", "GET"} {
				resp, b := mustFetch(t, tr, newReq(t, nil, method, s.url+"/b", nil))
				if resp.StatusCode != 200 || string(b) != "real" {
					t.Errorf("%s: answer %d %q, want 200 \"real\"", method, resp.StatusCode, b)
				}
			}
			if n := s.count("GET /b") + s.count("POST /b"); n != 2 {
				t.Errorf("the server read %d requests to /b, want 2", n)
			}
			if n := s.conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
		})
	}
}

func TestRequestConnectionClose(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%v", r.Close)
	}, false)
	tr := newTransport(t, Options{})
	for i := 0; i < 3; i++ {
		req := newReq(t, nil, "GET", srv.URL, nil)
		switch i {
		case 0:
			req.Close = true
		case 1:
			req.Header.Set("Connection", "close")
		}
		resp, b := mustFetch(t, tr, req)
		if want := fmt.Sprint(i < 2); string(b) != want || resp.Close != (i < 2) {
			t.Errorf("request %d: server saw Close %s, resp.Close %v; want %s", i, b, resp.Close, want)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
	if n := len(idleConns(tr)); n != 1 {
		t.Errorf("%d idle connections, want 1", n)
	}
}

func TestContextEndsAfterTheAnswer(t *testing.T) {
	// A context canceled once its answer was read leaves the connection
	// usable: nothing of that context reaches the next exchange.
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "HEAD" || r.URL.Path == "/204" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		io.WriteString(w, "ok")
	}, false)
	tr := newTransport(t, Options{})
	for _, c := range []struct{ method, path string }{{"GET", "/"}, {"HEAD", "/"}, {"DELETE", "/204"}, {"GET", "/"}} {
		ctx, cancel := context.WithCancel(context.Background())
		resp, b := mustFetch(t, tr, newReq(t, ctx, c.method, srv.URL+c.path, nil))
		cancel()
		if resp.StatusCode/100 != 2 || (c.method == "GET" && string(b) != "ok") {
			t.Errorf("%s %s: %d %q", c.method, c.path, resp.StatusCode, b)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestContextCanceledWhileSendingTheBody(t *testing.T) {
	got := make(chan string, 1)
	// A server that reads the head and then nothing: the body fills the
	// socket buffers and the write blocks.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- line
		<-done
	}()
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	tr := newTransport(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got // the head is in: the body is being written
		cancel()
	}()
	const size = 64 << 20
	req := newReq(t, ctx, "PUT", "http://"+ln.Addr().String()+"/blob", nil)
	req.Body, req.ContentLength = io.NopCloser(io.LimitReader(zeros{}, size)), size
	start := time.Now()
	_, err = tr.Do(req)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Do returned %v after the cancel", d)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestTLSHandshakeStall(t *testing.T) {
	// A server that accepts and never answers the TLS hello.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var cs []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				break
			}
			cs = append(cs, c)
		}
		<-done
		for _, c := range cs {
			c.Close()
		}
	}()
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	u := "https://" + ln.Addr().String() + "/"

	tr := newTransport(t, Options{DialTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err = tr.Do(newReq(t, nil, "GET", u, nil))
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("DialTimeout: error %v, want a timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("DialTimeout 100ms: Do took %v", d)
	}

	tr = newTransport(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = tr.Do(newReq(t, ctx, "GET", u, nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context deadline: error %v, want context.DeadlineExceeded", err)
	}
}

func idleConns(tr *Transport) []*conn {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var all []*conn
	for _, cs := range tr.idle {
		all = append(all, cs...)
	}
	return all
}

func TestKeepAliveTimeout(t *testing.T) {
	t.Run("timeout=3 shortens the idle expiry", func(t *testing.T) {
		s := newRawServer(t, func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool {
			return write(c, "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=3, max=100\r\nContent-Length: 2\r\n\r\nok")
		})
		tr := newTransport(t, Options{})
		for i := 0; i < 2; i++ {
			before := time.Now()
			mustFetch(t, tr, newReq(t, nil, "GET", s.url, nil))
			after := time.Now()
			cs := idleConns(tr)
			if len(cs) != 1 {
				t.Fatalf("%d idle connections, want 1", len(cs))
			}
			// The server closes after 3 s idle: the connection is not used
			// after 2 s idle.
			if exp := cs[0].expires; exp.Before(before.Add(2*time.Second)) || exp.After(after.Add(2*time.Second)) {
				t.Errorf("request %d: expires in %v, want 2s", i, exp.Sub(after))
			}
		}
		if n := s.conns.Load(); n != 1 {
			t.Errorf("%d connections, want 1", n)
		}
	})
	t.Run("timeout=1 is not reused", func(t *testing.T) {
		s := newRawServer(t, func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool {
			return write(c, "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\nContent-Length: 2\r\n\r\nok")
		})
		tr := newTransport(t, Options{})
		mustFetch(t, tr, newReq(t, nil, "GET", s.url, nil))
		mustFetch(t, tr, newReq(t, nil, "GET", s.url, nil))
		if n := s.conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
	})
	t.Run("bad values are ignored", func(t *testing.T) {
		s := newRawServer(t, func(_ *rawServer, _, ri int, _ *http.Request, _ []byte, c net.Conn) bool {
			ka := []string{"timeout=abc", "timeout=-5", "max=3", "timeout=0"}[ri%4]
			return write(c, "HTTP/1.1 200 OK\r\nKeep-Alive: "+ka+"\r\nContent-Length: 2\r\n\r\nok")
		})
		tr := newTransport(t, Options{})
		for i := 0; i < 5; i++ {
			mustFetch(t, tr, newReq(t, nil, "GET", s.url, nil))
		}
		if n := s.conns.Load(); n != 1 {
			t.Errorf("%d connections, want 1", n)
		}
	})
}

func TestIdleTimeoutCountsIdleTime(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, false)
	tr := newTransport(t, Options{IdleTimeout: 250 * time.Millisecond})
	// A connection in steady use outlives IdleTimeout.
	start := time.Now()
	for time.Since(start) < 400*time.Millisecond {
		mustFetch(t, tr, newReq(t, nil, "GET", srv.URL, nil))
		time.Sleep(20 * time.Millisecond)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for requests 20 ms apart with a 250 ms IdleTimeout, want 1", n)
	}
	// One idle for longer is not reused.
	time.Sleep(300 * time.Millisecond)
	mustFetch(t, tr, newReq(t, nil, "GET", srv.URL, nil))
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections after an idle time over IdleTimeout, want 2", n)
	}
}

// stall is a server that reads each request, reports it on got and
// answers nothing until the test ends.
func stall(got chan<- string) rawAnswer {
	return func(s *rawServer, _, _ int, req *http.Request, _ []byte, _ net.Conn) bool {
		got <- req.Method + " " + req.URL.Path
		<-s.done
		return false
	}
}

func TestContextCanceledWhileWaitingForTheAnswer(t *testing.T) {
	got := make(chan string, 1)
	s := newRawServer(t, stall(got))
	tr := newTransport(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got
		cancel()
	}()
	start := time.Now()
	_, err := tr.Do(newReq(t, ctx, "POST", s.url+"/x", strings.NewReader("body")))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || ue.Op != "Post" {
		t.Errorf("error %#v, want a *url.Error with Op Post", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Do returned %v after the cancel", d)
	}
	if idle := idleConns(tr); len(idle) != 0 {
		t.Errorf("%d idle connections after a canceled exchange", len(idle))
	}
}

func TestContextDeadline(t *testing.T) {
	got := make(chan string, 1)
	s := newRawServer(t, stall(got))
	tr := newTransport(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := tr.Do(newReq(t, ctx, "GET", s.url+"/x", nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || !ue.Timeout() {
		t.Errorf("error %#v: want a *url.Error that is a timeout", err)
	}
	if r := <-got; r != "GET /x" {
		t.Errorf("server read %q", r)
	}
}

func TestContextCanceledWhileReadingTheBody(t *testing.T) {
	for _, framing := range []string{"Content-Length: 100\r\n", "Transfer-Encoding: chunked\r\n", ""} {
		t.Run(framing, func(t *testing.T) {
			half := make(chan struct{})
			s := newRawServer(t, func(s *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool {
				body := "first half"
				if strings.Contains(framing, "chunked") {
					body = "a\r\nfirst half\r\n"
				}
				write(c, "HTTP/1.1 200 OK\r\n"+framing+"\r\n"+body)
				close(half)
				<-s.done
				return false
			})
			tr := newTransport(t, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resp, err := tr.Do(newReq(t, ctx, "GET", s.url, nil))
			if err != nil {
				t.Fatal(err)
			}
			<-half
			buf := make([]byte, 10)
			if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first half" {
				t.Fatalf("read %q, %v", buf, err)
			}
			time.AfterFunc(20*time.Millisecond, cancel)
			n, err := resp.Body.Read(buf)
			if n != 0 || !errors.Is(err, context.Canceled) {
				t.Errorf("Read after the cancel: %d, %v; want context.Canceled", n, err)
			}
			if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
				t.Errorf("second Read: %v, want context.Canceled again", err)
			}
			resp.Body.Close()
			if idle := idleConns(tr); len(idle) != 0 {
				t.Errorf("%d idle connections after a canceled body", len(idle))
			}
		})
	}
}

func TestContextDoneBeforeTheRequest(t *testing.T) {
	s := newRawServer(t, func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool { return write(c, ok2) })
	tr := newTransport(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, pooled := range []bool{false, true} {
		if pooled {
			mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/warm", nil))
		}
		gotConn := 0
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { gotConn++ }})
		body := &trackedBody{Reader: strings.NewReader("x")}
		req := newReq(t, tctx, "POST", s.url+"/never", body)
		_, err := tr.Do(req)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("pooled %v: error %v, want context.Canceled", pooled, err)
		}
		if gotConn != 0 {
			t.Errorf("pooled %v: GotConn called for a request that could not start", pooled)
		}
		if !body.closed.Load() {
			t.Errorf("pooled %v: request body not closed", pooled)
		}
	}
	if n := s.count("POST /never"); n != 0 {
		t.Errorf("the server read %d requests sent with a done context", n)
	}
	// The pooled connection was not spent on the failed request.
	mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/after", nil))
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestDialError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tr := newTransport(t, Options{})
	gotConn := false
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { gotConn = true }})
	_, err = tr.Do(newReq(t, ctx, "PUT", "http://"+addr+"/t", strings.NewReader("x")))
	var ue *url.Error
	if !errors.As(err, &ue) || ue.Op != "Put" || ue.URL != "http://"+addr+"/t" {
		t.Fatalf("error %#v, want a *url.Error for Put of the URL", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		t.Errorf("error %v: want a *net.OpError with Op dial", err)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v: want ECONNREFUSED", err)
	}
	if gotConn {
		t.Error("GotConn called without a connection")
	}
}

func TestMalformedAnswers(t *testing.T) {
	cases := []struct {
		name    string
		method  string // GET when empty
		answer  string
		atDo    bool  // the error comes from Do, else from reading the body
		is      error // the error wraps this, when set
		partial string
	}{
		{name: "status code not a number", answer: "HTTP/1.1 2x0 OK\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "status code too short", answer: "HTTP/1.1 99 Low\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "status code glued to reason", answer: "HTTP/1.1 200OK\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "unknown protocol", answer: "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "not http", answer: "SSH-2.0-OpenSSH_9.6\r\n", atDo: true, is: ErrBadResponse},
		{name: "no status line", answer: "", atDo: true},
		{name: "status line cut", answer: "HTTP/1.1 200", atDo: true},
		{name: "headers cut", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", atDo: true},
		{name: "header without colon", answer: "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "content-length not a number", answer: "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "content-length negative", answer: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "content-length signed", answer: "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", atDo: true, is: ErrBadResponse},
		{name: "content-length list", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok", atDo: true, is: ErrBadResponse},
		{name: "head content-length bad", method: "HEAD", answer: "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", atDo: true, is: ErrBadResponse},
		{name: "content-length conflicting", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", atDo: true, is: ErrBadResponse},
		{name: "content-length body cut", answer: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", is: io.ErrUnexpectedEOF, partial: "abc"},
		{name: "chunk cut", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", is: io.ErrUnexpectedEOF, partial: "hel"},
		{name: "chunk without CRLF", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n", is: ErrBadResponse, partial: "hello"},
		{name: "no last chunk", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", is: io.ErrUnexpectedEOF, partial: "hello"},
		{name: "chunk size cut", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5", is: io.ErrUnexpectedEOF},
		{name: "chunk size not hex", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", is: ErrBadResponse},
		{name: "chunk size negative", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", is: ErrBadResponse},
		{name: "chunk size huge", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nhello\r\n0\r\n\r\n", is: ErrBadResponse},
		{name: "trailer cut", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-Sum: 1\r\n", is: io.ErrUnexpectedEOF, partial: "hi"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRawServer(t, func(_ *rawServer, ci, _ int, _ *http.Request, _ []byte, conn net.Conn) bool {
				if ci > 0 {
					return write(conn, ok2)
				}
				write(conn, c.answer)
				return false
			})
			tr := newTransport(t, Options{})
			method := c.method
			if method == "" {
				method = "GET"
			}
			resp, err := tr.Do(newReq(t, nil, method, s.url+"/bad", nil))
			if c.atDo {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("no error for %q", c.answer)
				}
				var ue *url.Error
				if !errors.As(err, &ue) {
					t.Errorf("error %v is not a *url.Error", err)
				}
			} else {
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				b, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr == nil {
					t.Fatalf("no error reading the body of %q (read %q)", c.answer, b)
				}
				if string(b) != c.partial {
					t.Errorf("read %q before the error, want %q", b, c.partial)
				}
				err = rerr
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v, want one wrapping %v", err, c.is)
			}
			if n := s.count(method + " /bad"); n != 1 {
				t.Errorf("the server read the request %d times, want 1", n)
			}
			_, b := mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/next", nil))
			if string(b) != "ok" || s.conns.Load() != 2 {
				t.Errorf("next answer %q on %d connections, want \"ok\" on a new one", b, s.conns.Load())
			}
		})
	}
}

func TestInvalidRequestsAreNotSent(t *testing.T) {
	s := newRawServer(t, func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool { return write(c, ok2) })
	tr := newTransport(t, Options{})
	mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/warm", nil))
	cases := []struct {
		name string
		edit func(r *http.Request)
	}{
		{"CRLF in a value", func(r *http.Request) { r.Header.Set("X-Ms-Meta", "a\r\nX-Injected: 1") }},
		{"LF in a value", func(r *http.Request) { r.Header.Set("X-Ms-Meta", "a\nb") }},
		{"CR in a value", func(r *http.Request) { r.Header.Set("X-Ms-Meta", "a\rb") }},
		{"NUL in a value", func(r *http.Request) { r.Header.Set("X-Ms-Meta", "a\x00b") }},
		{"CRLF in a second value", func(r *http.Request) { r.Header["X-Two"] = []string{"fine", "bad\r\n"} }},
		{"colon in a name", func(r *http.Request) { r.Header["X-Bad:Name"] = []string{"v"} }},
		{"space in a name", func(r *http.Request) { r.Header["X Bad"] = []string{"v"} }},
		{"CRLF in a name", func(r *http.Request) { r.Header["X-Bad\r\nX-Injected"] = []string{"v"} }},
		{"empty name", func(r *http.Request) { r.Header[""] = []string{"v"} }},
		{"CRLF in Host", func(r *http.Request) { r.Host = "h\r\nX-Injected: 1" }},
		{"space in method", func(r *http.Request) { r.Method = "GET /x" }},
		{"CRLF in the target", func(r *http.Request) { r.URL.Opaque = "/x\r\nX-Injected: 1" }},
		{"space in the target", func(r *http.Request) { r.URL.Opaque = "/x HTTP/1.0" }},
		{"large headers, then a bad one", func(r *http.Request) {
			for i := 0; i < 40; i++ {
				r.Header.Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("v", 1000))
			}
			r.Header.Set("X-Bad", "a\r\nb")
		}},
	}
	for _, c := range cases {
		req := newReq(t, nil, "PUT", s.url+"/x", strings.NewReader("body"))
		// Some headers the server would accept, so that valid ones precede
		// the bad one in some map orders.
		for i := 0; i < 8; i++ {
			req.Header.Set(fmt.Sprintf("X-Fine-%d", i), "v")
		}
		c.edit(req)
		gotConn := false
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { gotConn = true }}))
		if _, err := tr.Do(req); err == nil {
			t.Errorf("%s: no error", c.name)
		} else if gotConn {
			t.Errorf("%s: GotConn called for a request refused before sending", c.name)
		}
	}
	// Nothing reached the server, and the pooled connection survived.
	mustFetch(t, tr, newReq(t, nil, "GET", s.url+"/after", nil))
	if got := s.requests(); len(got) != 2 || got[0] != "GET /warm" || got[1] != "GET /after" {
		t.Errorf("the server read %q, want only GET /warm and GET /after", got)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestBadRequestURLs(t *testing.T) {
	tr := newTransport(t, Options{})
	for _, u := range []*url.URL{nil, {Scheme: "ftp", Host: "127.0.0.1:1"}, {Scheme: "http"}} {
		req := &http.Request{Method: "GET", URL: u, Header: http.Header{}}
		if _, err := tr.Do(req); err == nil {
			t.Errorf("URL %v: no error", u)
		}
	}
}

func TestGotConnTrace(t *testing.T) {
	srv, _ := counted(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, false)
	tr := newTransport(t, Options{})
	var reused []bool
	for i := 0; i < 3; i++ {
		calls := 0
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			calls++
			reused = append(reused, info.Reused)
			if info.Conn == nil {
				t.Error("GotConn without the connection")
			}
		}})
		mustFetch(t, tr, newReq(t, ctx, "GET", srv.URL, nil))
		if calls != 1 {
			t.Errorf("request %d: GotConn called %d times", i, calls)
		}
	}
	if fmt.Sprint(reused) != "[false true true]" {
		t.Errorf("Reused %v, want [false true true]", reused)
	}
}

func TestTLS(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.TLS == nil || r.ProtoMajor != 1 {
			http.Error(w, "not TLS HTTP/1.1", 500)
			return
		}
		fmt.Fprintf(w, "%s %s", r.Method, b)
	}, true)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr := newTransport(t, Options{TLSConfig: &tls.Config{RootCAs: pool}})
	for i := 0; i < 5; i++ {
		body := strings.Repeat("s", i*5000)
		resp, b := mustFetch(t, tr, newReq(t, nil, "POST", srv.URL+"/tls", strings.NewReader(body)))
		if resp.TLS == nil || !resp.TLS.HandshakeComplete || resp.TLS.NegotiatedProtocol != "http/1.1" {
			t.Errorf("Response.TLS %+v, want the connection's state after its handshake, http/1.1", resp.TLS)
		}
		if resp.StatusCode != 200 || string(b) != "POST "+body {
			t.Fatalf("answer %d %.40q", resp.StatusCode, b)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d TLS connections for 5 requests, want 1", n)
	}
	// An unknown certificate fails the handshake.
	strict := newTransport(t, Options{})
	if _, err := strict.Do(newReq(t, nil, "GET", srv.URL, nil)); err == nil {
		t.Error("no error for a certificate signed by an unknown authority")
	}
}

func TestTLSServerClosesIdleConnection(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, true)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr := newTransport(t, Options{TLSConfig: &tls.Config{RootCAs: pool}})
	for i := 0; i < 3; i++ {
		_, b := mustFetch(t, tr, newReq(t, nil, "POST", srv.URL, strings.NewReader("x")))
		if string(b) != "ok" {
			t.Fatalf("answer %q", b)
		}
		srv.CloseClientConnections()
		waitDead(t, tr)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

// trackedBody is a request body that records being closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func TestRequestBodies(t *testing.T) {
	type got struct {
		cl   []string
		sum  [32]byte
		n    int64
		body string
		err  error
	}
	ch := make(chan got, 1)
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		var first bytes.Buffer
		n, err := io.Copy(io.MultiWriter(h, &first), r.Body)
		var g got
		g.cl, g.n, g.err = r.Header.Values("Content-Length"), n, err
		copy(g.sum[:], h.Sum(nil))
		if n < 100 {
			g.body = first.String()
		}
		ch <- g
		io.WriteString(w, "ok")
	}, false)
	tr := newTransport(t, Options{})

	t.Run("unknown length", func(t *testing.T) {
		for _, cl := range []int64{0, -1} {
			body := &trackedBody{Reader: strings.NewReader("no length known")}
			req := newReq(t, nil, "PUT", srv.URL, nil)
			req.Body, req.ContentLength = body, cl
			mustFetch(t, tr, req)
			g := <-ch
			if g.body != "no length known" || len(g.cl) != 1 || g.cl[0] != "15" {
				t.Errorf("ContentLength %d: server read %q with Content-Length %q", cl, g.body, g.cl)
			}
			if !body.closed.Load() {
				t.Errorf("ContentLength %d: body not closed", cl)
			}
		}
	})
	t.Run("unknown length empty", func(t *testing.T) {
		req := newReq(t, nil, "POST", srv.URL, nil)
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("")), 0
		mustFetch(t, tr, req)
		if g := <-ch; g.n != 0 || len(g.cl) != 1 || g.cl[0] != "0" {
			t.Errorf("server read %d bytes with Content-Length %q", g.n, g.cl)
		}
	})
	t.Run("known length is closed after sending", func(t *testing.T) {
		body := &trackedBody{Reader: strings.NewReader("12345")}
		req := newReq(t, nil, "PUT", srv.URL, nil)
		req.Body, req.ContentLength = body, 5
		mustFetch(t, tr, req)
		if g := <-ch; g.body != "12345" {
			t.Errorf("server read %q", g.body)
		}
		if !body.closed.Load() {
			t.Error("request body not closed after the exchange")
		}
	})
	t.Run("large streamed", func(t *testing.T) {
		const size = 5 << 20
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i>>11)
		}
		want := sha256.Sum256(data)
		pr, pw := io.Pipe()
		go func() {
			// Odd-sized writes, so that no write lines up with a buffer.
			for off := 0; off < size; off += 12345 {
				end := min(off+12345, size)
				if _, err := pw.Write(data[off:end]); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req := newReq(t, nil, "PUT", srv.URL+"/large", nil)
		req.Body, req.ContentLength = pr, size
		mustFetch(t, tr, req)
		g := <-ch
		if g.n != size || g.sum != want || len(g.cl) != 1 || g.cl[0] != strconv.Itoa(size) {
			t.Errorf("server read %d bytes (sum match %v, Content-Length %q), want %d", g.n, g.sum == want, g.cl, size)
		}
	})
	t.Run("large unknown length", func(t *testing.T) {
		data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
		req := newReq(t, nil, "POST", srv.URL+"/large", nil)
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(data)), 0
		mustFetch(t, tr, req)
		if g := <-ch; g.n != int64(len(data)) || g.sum != sha256.Sum256(data) {
			t.Errorf("server read %d bytes, want %d", g.n, len(data))
		}
	})
	t.Run("shorter than ContentLength", func(t *testing.T) {
		req := newReq(t, nil, "PUT", srv.URL+"/short", nil)
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("abc")), 10
		if _, err := tr.Do(req); err == nil {
			t.Error("no error for a body shorter than its ContentLength")
		}
		// A body that fits the write buffer runs short before anything is
		// sent; a longer one after the head went out. Either way the
		// server never reads a whole request.
		select {
		case g := <-ch:
			if g.err == nil {
				t.Errorf("the server read a whole request: %+v", g)
			}
		case <-time.After(200 * time.Millisecond):
		}
	})
	t.Logf("connections %d", conns.Load())
}

func TestLargeAnswer(t *testing.T) {
	const size = 5 << 20
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*13 + i>>9)
	}
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		for off := 0; off < size; off += 70001 {
			w.Write(data[off:min(off+70001, size)])
		}
	}, false)
	tr := newTransport(t, Options{})
	for _, q := range []string{"", "?chunked=1", ""} {
		resp, b := mustFetch(t, tr, newReq(t, nil, "GET", srv.URL+q, nil))
		if !bytes.Equal(b, data) {
			t.Errorf("%q: read %d bytes, not the answer's %d", q, len(b), size)
		}
		if q == "" && resp.ContentLength != size {
			t.Errorf("ContentLength %d", resp.ContentLength)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// recorder is a fallback transport that records what it was given.
type recorder struct {
	reqs []*http.Request
	err  error
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	r.reqs = append(r.reqs, req)
	if r.err != nil {
		return nil, r.err
	}
	return &http.Response{StatusCode: 299, Body: io.NopCloser(strings.NewReader("via proxy")), Request: req}, nil
}

func TestProxyGoesToFallback(t *testing.T) {
	s := newRawServer(t, func(_ *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool { return write(c, ok2) })
	proxyURL, _ := url.Parse("http://proxy.invalid:3128")
	proxy := func(*http.Request) (*url.URL, error) { return proxyURL, nil }

	fb := &recorder{}
	tr := newTransport(t, Options{Proxy: proxy, Fallback: fb})
	req := newReq(t, nil, "POST", s.url+"/p", strings.NewReader("x"))
	resp, b := mustFetch(t, tr, req)
	if resp.StatusCode != 299 || string(b) != "via proxy" || len(fb.reqs) != 1 || fb.reqs[0] != req {
		t.Errorf("answer %d %q, fallback saw %d requests", resp.StatusCode, b, len(fb.reqs))
	}

	fb.err = errors.New("fallback failed")
	_, err := tr.Do(newReq(t, nil, "GET", s.url+"/p", nil))
	if !errors.Is(err, fb.err) {
		t.Errorf("error %v, want the fallback's", err)
	}

	bare := newTransport(t, Options{Proxy: proxy})
	if _, err := bare.Do(newReq(t, nil, "GET", s.url+"/p", nil)); err == nil || !strings.Contains(err.Error(), "proxy") {
		t.Errorf("error %v, want one about the proxy", err)
	}

	bad := newTransport(t, Options{Proxy: func(*http.Request) (*url.URL, error) { return nil, errors.New("bad proxy setting") }})
	if _, err := bad.Do(newReq(t, nil, "GET", s.url+"/p", nil)); err == nil || !strings.Contains(err.Error(), "bad proxy setting") {
		t.Errorf("error %v, want the Proxy function's", err)
	}

	// The environment's proxy settings never apply to loopback.
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	env := New(Options{})
	defer env.CloseIdleConnections()
	mustFetch(t, env, newReq(t, nil, "GET", s.url+"/direct", nil))
	if n := s.reqs.Load(); n != 1 {
		t.Errorf("the server read %d requests, want only the direct one", n)
	}
}

func TestCloseIdleConnections(t *testing.T) {
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, false)
	tr := newTransport(t, Options{})
	mustFetch(t, tr, newReq(t, nil, "GET", srv.URL, nil))
	tr.CloseIdleConnections()
	mustFetch(t, tr, newReq(t, nil, "GET", srv.URL, nil))
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestMaxIdlePerHost(t *testing.T) {
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(5)
	srv, conns := counted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			arrived.Done()
			<-release
		}
		io.WriteString(w, "ok")
	}, false)
	tr := newTransport(t, Options{MaxIdlePerHost: 2})
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := fetch(tr, newReq(t, nil, "GET", srv.URL+"/hold", nil)); err != nil {
				t.Error(err)
			}
		}()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	if n := len(idleConns(tr)); n != 2 {
		t.Errorf("%d idle connections, want 2", n)
	}
	for i := 0; i < 2; i++ {
		mustFetch(t, tr, newReq(t, nil, "GET", srv.URL+"/x", nil))
	}
	if n := conns.Load(); n != 5 {
		t.Errorf("%d connections, want the 5 first ones", n)
	}
}

func TestCloseUnblocksARead(t *testing.T) {
	s := newRawServer(t, func(s *rawServer, _, _ int, _ *http.Request, _ []byte, c net.Conn) bool {
		write(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome")
		<-s.done
		return false
	})
	tr := newTransport(t, Options{})
	resp, err := tr.Do(newReq(t, nil, "GET", s.url, nil))
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(resp.Body)
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read block
	closed := make(chan struct{})
	go func() {
		resp.Body.Close()
		close(closed)
	}()
	select {
	case err := <-read:
		if err == nil {
			t.Error("the read of a closed body ended without an error")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end a blocked Read")
	}
	<-closed
	if n := len(idleConns(tr)); n != 0 {
		t.Errorf("%d idle connections", n)
	}
}

func TestReadAfterEOFAndDoubleClose(t *testing.T) {
	srv, _ := counted(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, false)
	tr := newTransport(t, Options{})
	resp, err := tr.Do(newReq(t, nil, "GET", srv.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if n, err := resp.Body.Read(make([]byte, 4)); string(b) != "ok" || n != 0 || err != io.EOF {
		t.Errorf("read %q, then %d %v; want io.EOF", b, n, err)
	}
	resp.Body.Close()
	resp.Body.Close()
	// The connection went back once, not twice.
	if n := len(idleConns(tr)); n != 1 {
		t.Errorf("%d idle connections, want 1", n)
	}
}

// TestEarlyAnswerWhileSendingTheBody: a server that refuses a large body
// answers and closes before reading it. The client's write then fails, and
// the answer waiting in the socket is what Do returns (net/http returns it
// only when its read loop wins the race with the write error).
func TestEarlyAnswerWhileSendingTheBody(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 7\r\n\r\ntoo big")
			}
			c.Close() // the unread body makes this a reset
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	tr := newTransport(t, Options{})
	for i := 0; i < 5; i++ {
		const size = 16 << 20
		req := newReq(t, nil, "PUT", "http://"+ln.Addr().String()+"/blob", nil)
		req.Body, req.ContentLength = io.NopCloser(io.LimitReader(zeros{}, size)), size
		resp, b, err := fetch(tr, req)
		if err != nil {
			t.Fatalf("try %d: %v, want the server's 413", i, err)
		}
		if resp.StatusCode != 413 || string(b) != "too big" || !resp.Close {
			t.Errorf("try %d: %d %q (Close %v), want 413 \"too big\" and Close", i, resp.StatusCode, b, resp.Close)
		}
	}
	if n := len(idleConns(tr)); n != 0 {
		t.Errorf("%d idle connections", n)
	}
}

// failingBody fails after its first bytes.
type failingBody struct{ sent bool }

var errDiskGone = errors.New("disk gone")

func (b *failingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "first bytes"), nil
	}
	return 0, errDiskGone
}

func (b *failingBody) Close() error { return nil }

func TestRequestBodyReadError(t *testing.T) {
	got := make(chan string, 1)
	s := newRawServer(t, stall(got))
	tr := newTransport(t, Options{})
	req := newReq(t, nil, "PUT", s.url+"/x", nil)
	req.Body, req.ContentLength = &failingBody{}, 1000
	start := time.Now()
	_, err := tr.Do(req)
	if !errors.Is(err, errDiskGone) {
		t.Errorf("error %v, want the body's", err)
	}
	// The server waits for the rest of the body: no answer can come, and
	// Do does not wait for one.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Do took %v", d)
	}
}
