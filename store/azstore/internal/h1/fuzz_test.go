package h1

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzAnswer feeds the transport arbitrary bytes as a server's answer and
// holds its parser to net/http's: whatever the transport accepts,
// http.ReadResponse accepts too, with the same status and the same body
// bytes. The transport may refuse more than net/http does (it is stricter
// about framing), never less, and it never panics, hangs or reads past
// the answer it framed. The seeds cover every framing the service uses;
// `go test -fuzz FuzzAnswer ./store/azstore/internal/h1/` explores from
// them.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		ok2,
		"HTTP/1.1 204 No Content\r\nETag: W/\"x\"\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-Sum: 1\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"a\":\"b\"}\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil the end",
		"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	// One server for the whole run: each connection answers the next
	// input, then closes, so an answer framed "until the end" ends.
	var current atomic.Pointer[[]byte]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				if b := current.Load(); b != nil {
					c.Write(*b)
				}
			}(c)
		}
	}()
	url := "http://" + ln.Addr().String() + "/fuzz"
	f.Fuzz(func(t *testing.T, answer []byte) {
		if len(answer) > 1<<16 {
			return
		}
		answer = append([]byte(nil), answer...)
		current.Store(&answer)
		tr := New(Options{Proxy: noProxy, DialTimeout: 5 * time.Second})
		defer tr.CloseIdleConnections()
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		var resp *http.Response
		var body []byte
		var derr, rerr error
		go func() {
			defer close(done)
			resp, derr = tr.Do(req)
			if derr == nil {
				body, rerr = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the transport hung on %q", answer)
		}
		if derr != nil || rerr != nil {
			return // refused: allowed, whatever net/http thinks
		}
		// Accepted: net/http must read the same answer from the same bytes.
		br := bufio.NewReader(bytes.NewReader(answer))
		want, err := http.ReadResponse(br, req)
		for err == nil && want.StatusCode == http.StatusContinue {
			want, err = http.ReadResponse(br, req)
		}
		if err != nil {
			t.Fatalf("the transport accepted %q (status %d, body %q); net/http refuses it: %v", answer, resp.StatusCode, body, err)
		}
		wantBody, err := io.ReadAll(want.Body)
		want.Body.Close()
		if err != nil {
			t.Fatalf("the transport read the body of %q as %q; net/http fails: %v", answer, body, err)
		}
		if resp.StatusCode != want.StatusCode || !bytes.Equal(body, wantBody) {
			t.Fatalf("answer %q: the transport read %d %q, net/http %d %q", answer, resp.StatusCode, body, want.StatusCode, wantBody)
		}
		for _, k := range []string{"Etag", "Content-Type", "Location"} {
			if got, w := strings.Join(resp.Header.Values(k), ","), strings.Join(want.Header.Values(k), ","); got != w {
				t.Fatalf("answer %q: header %s %q, net/http %q", answer, k, got, w)
			}
		}
	})
}
