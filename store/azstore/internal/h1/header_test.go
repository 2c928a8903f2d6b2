package h1

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func headerOf(t *testing.T, c *conn, text string) (http.Header, error) {
	t.Helper()
	c.br = bufio.NewReaderSize(strings.NewReader(text), 16<<10)
	return c.readHeader()
}

// TestReadHeader: names come back canonical (through the connection's
// cache on the second answer too), repeated names keep every value in
// order, a folded line continues its value, and malformed or oversized
// headers are refused with ErrBadResponse.
func TestReadHeader(t *testing.T) {
	c := &conn{}
	for round := range 2 {
		h, err := headerOf(t, c, "x-ms-request-id: a1\r\nETag:  W/\"1\" \r\nset-cookie: x\r\nSet-Cookie: y\r\nx-long: one\r\n two\r\n\r\n")
		if err != nil {
			t.Fatal(err)
		}
		if got := h["X-Ms-Request-Id"]; len(got) != 1 || got[0] != "a1" {
			t.Errorf("round %d: X-Ms-Request-Id %q", round, got)
		}
		if got := h.Get("etag"); got != `W/"1"` {
			t.Errorf("round %d: ETag %q", round, got)
		}
		if got := h["Set-Cookie"]; len(got) != 2 || got[0] != "x" || got[1] != "y" {
			t.Errorf("round %d: Set-Cookie %q", round, got)
		}
		if got := h.Get("X-Long"); got != "one two" {
			t.Errorf("round %d: folded X-Long %q", round, got)
		}
		// Appending to one value must not overwrite its neighbour.
		h["X-Ms-Request-Id"] = append(h["X-Ms-Request-Id"], "z")
		if h.Get("Etag") != `W/"1"` {
			t.Errorf("round %d: appending to one header changed another", round)
		}
	}
	if len(c.names) == 0 {
		t.Error("the connection cached no header name")
	}
	bad := map[string]string{
		"no colon":             "NoColon\r\n\r\n",
		"space in name":        "Bad Name: v\r\n\r\n",
		"folded first":         " cont\r\n\r\n",
		"cut short":            "A: b\r\n",
		"empty name":           ": v\r\n\r\n",
		"too many lines":       strings.Repeat("A: b\r\n", maxHeaderLines+1) + "\r\n",
		"values past the size": strings.Repeat("A: "+strings.Repeat("v", 10000)+"\r\n", maxHeaderBytes/10000+2) + "\r\n",
	}
	for name, text := range bad {
		_, err := headerOf(t, &conn{}, text)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if name != "cut short" && !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: %v, want ErrBadResponse", name, err)
		}
	}
}

// TestAnswerFramingRefusals: an answer framed in a way this transport does
// not read (a coding besides chunked, too many informational answers) and
// a request whose length has no body are errors, and the refused request
// sends nothing.
func TestAnswerFramingRefusals(t *testing.T) {
	answers := map[string]string{
		"gzip then chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
		"two codings":       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"identity":          "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nhi",
		"six 100s":          strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 6) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				c.Write([]byte(answer))
				time.Sleep(100 * time.Millisecond)
			}()
			tr := New(Options{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
			resp, err := tr.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("answer accepted: %d", resp.StatusCode)
			}
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("%v, want ErrBadResponse", err)
			}
		})
	}
	t.Run("length without a body", func(t *testing.T) {
		tr := New(Options{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
		req, _ := http.NewRequest(http.MethodPut, "http://127.0.0.1:1/", nil)
		req.ContentLength = 5
		var got bool
		if _, err := tr.DoWith(req, Extra{GotConn: func() { got = true }}); err == nil || !strings.Contains(err.Error(), "ContentLength 5") {
			t.Fatalf("%v", err)
		}
		if got {
			t.Fatal("the refused request took a connection")
		}
	})
}

// TestBodyLongerThanItsLength: a request body longer than its
// ContentLength fails the request, and the server never reads a whole
// request (the cut body is never sent as if it were the body).
func TestBodyLongerThanItsLength(t *testing.T) {
	for _, size := range []int{10, 64 << 10} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		whole := make(chan bool, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				whole <- false
				return
			}
			defer c.Close()
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err != nil {
				whole <- false
				return
			}
			_, err = io.Copy(io.Discard, req.Body)
			whole <- err == nil
		}()
		tr := New(Options{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }})
		req, _ := http.NewRequest(http.MethodPut, "http://"+ln.Addr().String()+"/", io.NopCloser(strings.NewReader(strings.Repeat("x", size+1))))
		req.ContentLength = int64(size)
		if _, err := tr.Do(req); err == nil || !strings.Contains(err.Error(), "longer than its ContentLength") {
			t.Fatalf("size %d: %v", size, err)
		}
		if <-whole {
			t.Fatalf("size %d: the server read a whole request", size)
		}
		ln.Close()
		tr.CloseIdleConnections()
	}
}
