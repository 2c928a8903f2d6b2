package h1

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// tlsPair dials a TLS server of its own on loopback with the transport's
// dial and hands back the client's conn and the server's end, both after
// the handshake.
func tlsPair(t *testing.T) (*conn, *tls.Conn) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan *tls.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		sc := tls.Server(nc, srv.TLS.Clone())
		if sc.Handshake() != nil {
			close(accepted)
			return
		}
		accepted <- sc
	}()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	tr := newTransport(t, Options{TLSConfig: &tls.Config{RootCAs: roots, ServerName: "example.com"}})
	u, _ := url.Parse("https://" + ln.Addr().String())
	c, err := tr.dial(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.nc.Close() })
	// The client's handshake ends before the server's: read nothing,
	// briefly, so that both sides are done.
	sc, ok := <-accepted
	if !ok {
		t.Fatal("the server's handshake failed")
	}
	t.Cleanup(func() { sc.Close() })
	return c, sc
}

// TestUsableTLS: bytes waiting on an idle TLS connection are read through
// crypto/tls before the connection is judged. The stand-in peek says
// "bytes waiting" once (as it would for a session ticket or a key update
// that arrived while the connection sat idle, which crypto/tls consumes
// without returning data); then the real socket decides. Data the server
// sent unasked, or its close, makes the connection unusable; nothing
// else does, and a usable connection still works afterwards.
func TestUsableTLS(t *testing.T) {
	once := func(c *conn) {
		real := c.peek
		first := true
		c.peek = func() sockState {
			if first {
				first = false
				return sockData
			}
			return real()
		}
	}
	t.Run("nothing for the application", func(t *testing.T) {
		c, sc := tlsPair(t)
		once(c)
		start := time.Now()
		if !c.usable() {
			t.Fatal("an idle TLS connection was judged unusable")
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("the check took %v", d)
		}
		// The connection still carries data both ways.
		go sc.Write([]byte("hello\n"))
		c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c.nc).ReadString('\n')
		if err != nil || line != "hello\n" {
			t.Fatalf("after the check: %q %v", line, err)
		}
	})
	t.Run("data nobody asked for", func(t *testing.T) {
		c, sc := tlsPair(t)
		if _, err := sc.Write([]byte("HTTP/1.1 408 Request Timeout\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for c.peek() != sockData && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if c.usable() {
			t.Fatal("a TLS connection holding an unasked answer was judged usable")
		}
	})
	t.Run("closed by the server", func(t *testing.T) {
		c, sc := tlsPair(t)
		sc.Close() // a close_notify alert, then the end of the stream
		deadline := time.Now().Add(5 * time.Second)
		for c.peek() == sockIdle && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if c.usable() {
			t.Fatal("a TLS connection the server closed was judged usable")
		}
	})
	t.Run("plain TCP with bytes waiting", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			nc, err := ln.Accept()
			if err == nil {
				nc.Write([]byte("x"))
				time.Sleep(time.Second)
				nc.Close()
			}
		}()
		tr := newTransport(t, Options{})
		u, _ := url.Parse("http://" + ln.Addr().String())
		c, err := tr.dial(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		defer c.nc.Close()
		deadline := time.Now().Add(5 * time.Second)
		for c.peek() != sockData && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if c.usable() {
			t.Fatal("a plain connection holding unasked bytes was judged usable")
		}
	})
}
