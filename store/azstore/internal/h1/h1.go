// Package h1 is azstore's default HTTP transport: HTTP/1.1 over pooled
// connections, each exchange made start to finish on the caller's
// goroutine.
//
// The storage services speak HTTP/1.1, one request at a time per
// connection. net/http serves such an exchange with three goroutines (the
// caller, the connection's write loop and its read loop) and hands the
// request and the answer between them; on a small request those hand-offs
// and the scheduler wake-ups behind them cost more client CPU than the
// request itself. Here the caller writes the request and reads the answer
// itself, and the connection goes back to the pool when the body has been
// read.
//
// Transport is a policy.Transporter: the SDK's pipeline (authentication,
// retries, logging) runs above it unchanged. Requests through a proxy (the
// HTTP_PROXY and HTTPS_PROXY environment) go to the fallback transport.
package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Transport. Zero fields take the defaults.
type Options struct {
	// DialTimeout bounds a connection's dial and TLS handshake (30 s).
	DialTimeout time.Duration
	// TLSConfig is cloned for every TLS connection (TLS 1.2 or later, the
	// system's roots). Its NextProtos is set to HTTP/1.1.
	TLSConfig *tls.Config
	// MaxIdlePerHost is the number of idle connections kept per host (64).
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle for longer (90 s), or for
	// longer than the server's Keep-Alive timeout, less a second.
	IdleTimeout time.Duration
	// Proxy picks a proxy for a request (http.ProxyFromEnvironment);
	// a request with one goes to Fallback.
	Proxy func(*http.Request) (*url.URL, error)
	// Fallback sends the requests that go through a proxy; without it
	// they fail.
	Fallback interface {
		Do(*http.Request) (*http.Response, error)
	}
}

// Transport sends HTTP/1.1 requests over pooled connections. It is safe
// for concurrent use.
type Transport struct {
	o      Options
	dialer net.Dialer

	mu   sync.Mutex
	idle map[hostKey][]*conn
}

// hostKey names the connections of one host: the URL's host as it is
// written (a key built without allocating).
type hostKey struct {
	tls  bool
	host string
}

// New returns a Transport.
func New(o Options) *Transport {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.MaxIdlePerHost <= 0 {
		o.MaxIdlePerHost = 64
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	if o.TLSConfig == nil {
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if o.Proxy == nil {
		o.Proxy = http.ProxyFromEnvironment
	}
	return &Transport{o: o, dialer: net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}, idle: map[hostKey][]*conn{}}
}

// conn is one connection and its buffers.
type conn struct {
	nc  net.Conn
	tcp net.Conn // the TCP connection under nc (nc itself without TLS)
	br  *bufio.Reader
	bw  *bufio.Writer
	key hostKey
	// idleFor is how long the connection may sit idle: IdleTimeout, or
	// less when the last answer's Keep-Alive header said so.
	idleFor time.Duration
	// expires is when the idle connection must no longer be reused (set
	// when it goes back to the pool).
	expires time.Time
	// tlsState is the connection's TLS state after its handshake (nil
	// without TLS), shared by every answer it carries as Response.TLS.
	tlsState *tls.ConnectionState
	// peek looks at the socket without reading it (see newProbe).
	peek func() sockState
	// names maps the header names the server sent to their canonical
	// form; hbuf is readHeader's scratch buffer.
	names map[string]string
	hbuf  []byte
}

// ErrBadResponse reports an answer that is not HTTP/1.1 as this transport
// reads it.
var ErrBadResponse = errors.New("h1: malformed HTTP response")

// Do sends req and returns its answer. The answer's body must be read to
// the end or closed. Like net/http, Do closes the request's body, on
// errors too (a request that goes to Fallback leaves that to it).
func (t *Transport) Do(req *http.Request) (*http.Response, error) {
	return t.DoWith(req, Extra{})
}

// Extra is what a caller that knows this transport can add to a request
// without copying it (as a context value or a new body would).
type Extra struct {
	// Body, when not nil, is the request's body: the same bytes as
	// req.Body, which is then not read (but closed, as by Do).
	Body []byte
	// GotConn is called when the request has a connection (after the TLS
	// handshake), before any of it is written.
	GotConn func()
}

// DoWith is Do with x.
func (t *Transport) DoWith(req *http.Request, x Extra) (*http.Response, error) {
	proxied, err := t.proxied(req)
	if err == nil && proxied {
		resp, err := t.o.Fallback.Do(req)
		if err != nil {
			var ue *url.Error
			if !errors.As(err, &ue) {
				err = &url.Error{Op: urlOp(req.Method), URL: req.URL.String(), Err: err}
			}
			return nil, err
		}
		return resp, nil
	}
	var resp *http.Response
	if err == nil {
		resp, err = t.roundTrip(req, x)
	}
	// The body has been sent whole, or will not be.
	if req.Body != nil {
		req.Body.Close()
	}
	if err != nil {
		u := ""
		if req.URL != nil {
			u = req.URL.String()
		}
		return nil, &url.Error{Op: urlOp(req.Method), URL: u, Err: err}
	}
	return resp, nil
}

// CloseIdleConnections closes the connections waiting in the pool.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[hostKey][]*conn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
}

func urlOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// proxied checks req's URL and reports whether req goes to Fallback.
func (t *Transport) proxied(req *http.Request) (bool, error) {
	u := req.URL
	if u == nil {
		return false, errors.New("h1: request without a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return false, fmt.Errorf("h1: unsupported scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return false, errors.New("h1: request URL without a host")
	}
	proxy, err := t.o.Proxy(req)
	if err != nil {
		return false, err
	}
	if proxy != nil && t.o.Fallback == nil {
		return false, errors.New("h1: the request goes through a proxy and there is no fallback transport")
	}
	return proxy != nil, nil
}

func (t *Transport) roundTrip(req *http.Request, x Extra) (*http.Response, error) {
	// A request that cannot be sent fails before it takes a connection:
	// nothing reaches the server, no pooled connection is spent, and
	// httptrace's GotConn (which tells that a request may have left) is
	// not called.
	hd, err := validRequest(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	body := x.Body
	if body == nil {
		if body, err = bodyBytes(req); err != nil {
			return nil, err
		}
	}
	// stream is the body of known length, sent as it is read; a replay
	// sends a fresh copy from GetBody (closed here; Do closes req.Body).
	var stream io.ReadCloser
	if body == nil && req.Body != nil && req.Body != http.NoBody {
		stream = req.Body
	}
	defer func() {
		if stream != nil && stream != req.Body {
			stream.Close()
		}
	}()
	u := req.URL
	key := hostKey{tls: u.Scheme == "https", host: u.Host}
	trace := httptrace.ContextClientTrace(ctx)
	for try := 0; ; try++ {
		c, reused := t.get(key)
		if c == nil {
			if c, err = t.dial(ctx, u); err != nil {
				return nil, err
			}
		}
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: reused})
		}
		if x.GotConn != nil {
			x.GotConn()
		}
		resp, got, err := t.exchange(ctx, c, req, hd, body, stream)
		if err == nil {
			return resp, nil
		}
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A reused connection the server closed while it sat idle fails
		// before any answer arrives. Only a request that is safe to send
		// twice is sent again, once, on a new connection: any other may
		// have reached the server. A streamed body has been consumed: it
		// is sent again only from a fresh copy (GetBody).
		if reused && !got && try == 0 && replayable(req) {
			if stream == nil {
				continue
			}
			if req.GetBody != nil {
				if fresh, gerr := req.GetBody(); gerr == nil {
					if stream != req.Body {
						stream.Close()
					}
					stream = fresh
					continue
				}
			}
		}
		return nil, err
	}
}

// replayable reports a request that changes nothing (net/http's rule).
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// bodyBytes returns the request's body, read into memory when its length
// is not known. A body of known length is nil here and streamed by write.
func bodyBytes(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength > 0 {
		return nil, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// sockState is what a peek at an idle connection's socket saw.
type sockState int

const (
	// sockIdle: nothing to read, the connection is open.
	sockIdle sockState = iota
	// sockData: bytes nobody asked for are waiting.
	sockData
	// sockGone: the server closed the connection, or it failed.
	sockGone
)

// tlsSettle is how long usable lets a TLS connection read what its
// server sent while it sat idle.
const tlsSettle = 2 * time.Millisecond

// usable reports whether an idle connection can carry a request: its
// server has not closed it and sent nothing unasked. On TLS, bytes that
// arrived while it was idle may be the protocol's own (TLS 1.3 session
// tickets or a key update, which a server may send at any time after the
// handshake): crypto/tls consumes those on a read, so the connection is
// read once, briefly, and is usable if that read finds no data and the
// socket is then quiet.
func (c *conn) usable() bool {
	switch c.peek() {
	case sockIdle:
		return true
	case sockGone:
		return false
	}
	if c.nc == c.tcp {
		return false // plain HTTP: an answer nobody asked for
	}
	c.nc.SetReadDeadline(time.Now().Add(tlsSettle))
	var b [1]byte
	n, err := c.nc.Read(b[:])
	c.nc.SetReadDeadline(time.Time{})
	var ne net.Error
	return n == 0 && errors.As(err, &ne) && ne.Timeout() && c.peek() == sockIdle
}

// get takes the most recently used idle connection of key that is still
// usable, or returns nil.
func (t *Transport) get(key hostKey) (*conn, bool) {
	now := time.Now()
	for {
		t.mu.Lock()
		cs := t.idle[key]
		if len(cs) == 0 {
			t.mu.Unlock()
			return nil, false
		}
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[key] = cs[:len(cs)-1]
		t.mu.Unlock()
		// The socket is peeked at, one system call: a connection the
		// server closed, or that holds bytes nobody asked for, is dropped.
		if now.Before(c.expires) && c.br.Buffered() == 0 && c.usable() {
			return c, true
		}
		c.nc.Close()
	}
}

// put returns c to the pool.
func (t *Transport) put(c *conn) {
	now := time.Now()
	c.expires = now.Add(c.idleFor)
	if c.idleFor <= 0 {
		c.nc.Close()
		return
	}
	t.mu.Lock()
	cs := t.idle[c.key]
	// Drop expired connections from the old end.
	drop := 0
	for drop < len(cs) && !now.Before(cs[drop].expires) {
		drop++
	}
	var closing []*conn
	if drop > 0 {
		closing = append(closing, cs[:drop]...)
		cs = append(cs[:0], cs[drop:]...)
	}
	if len(cs) >= t.o.MaxIdlePerHost {
		closing = append(closing, c)
	} else {
		cs = append(cs, c)
	}
	t.idle[c.key] = cs
	t.mu.Unlock()
	for _, c := range closing {
		c.nc.Close()
	}
}

func (t *Transport) dial(ctx context.Context, u *url.URL) (*conn, error) {
	addr := hostPort(u)
	dctx, cancel := context.WithTimeout(ctx, t.o.DialTimeout)
	defer cancel()
	tcp, err := t.dialer.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	nc := tcp
	if u.Scheme == "https" {
		cfg := t.o.TLSConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(tcp, cfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			tcp.Close()
			return nil, err
		}
		nc = tc
	}
	var state *tls.ConnectionState
	if tc, ok := nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		state = &st
	}
	return &conn{
		tlsState: state,
		nc:       nc,
		tcp:      tcp,
		br:       bufio.NewReaderSize(nc, 16<<10),
		bw:       bufio.NewWriterSize(nc, 16<<10),
		key:      hostKey{tls: u.Scheme == "https", host: u.Host},
		peek:     newProbe(tcp),
		idleFor:  t.o.IdleTimeout,
	}, nil
}

// protos are the answer's protocol names by minor version.
var protos = [2]string{"HTTP/1.0", "HTTP/1.1"}

// aLongTimeAgo is a deadline in the past: it ends a blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)

// earlyAnswerWait bounds the read of an answer on a connection that failed
// while the request was being written.
const earlyAnswerWait = 5 * time.Second

// exchange writes req on c and reads the answer's head. got reports that
// some of the answer arrived.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request, hd head, body []byte, stream io.Reader) (resp *http.Response, got bool, err error) {
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		stop = context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	}
	fail := func(err error) (*http.Response, bool, error) {
		if stop != nil {
			stop()
		}
		return nil, got, err
	}
	werr := writeRequest(c.bw, req, hd, body, stream)
	if werr != nil {
		if errors.Is(werr, errBodySource) {
			return fail(werr)
		}
		// The connection failed under the request. A server that refuses
		// a request early (413, 403) answers and closes before reading the
		// whole body: its answer waits in the socket and says more than
		// the write error does. The connection is dead, so the read ends
		// at once; the deadline is only a bound (the context's, set by
		// stop's function, still wins: it is checked after).
		c.nc.SetReadDeadline(time.Now().Add(earlyAnswerWait))
		if ctx.Err() != nil {
			return fail(werr)
		}
	}
	var code, minor int
	var status string
	var h http.Header
	for informational := 0; ; informational++ {
		if informational > maxInformational {
			return fail(fmt.Errorf("%w: more than %d informational (1xx) answers", ErrBadResponse, maxInformational))
		}
		line, err := c.br.ReadSlice('\n')
		if len(line) > 0 {
			got = true
		}
		if err != nil {
			if werr != nil {
				return fail(werr)
			}
			if err == bufio.ErrBufferFull {
				err = fmt.Errorf("%w: status line too long", ErrBadResponse)
			}
			return fail(err)
		}
		code, status, minor, err = parseStatus(line)
		if err != nil {
			if werr != nil {
				return fail(werr)
			}
			return fail(err)
		}
		if h, err = c.readHeader(); err != nil {
			if werr != nil {
				return fail(werr)
			}
			return fail(err)
		}
		if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			continue // 100 Continue and the like precede the answer
		}
		break
	}
	resp = &http.Response{
		Status: status, StatusCode: code, Proto: protos[minor], ProtoMajor: 1, ProtoMinor: minor,
		Header: h, Request: req, ContentLength: -1, TLS: c.tlsState,
	}
	keep := werr == nil && !req.Close && !hasToken(h["Connection"], "close") && !hasToken(req.Header["Connection"], "close")
	if minor == 0 && !hasToken(h["Connection"], "keep-alive") {
		keep = false // HTTP/1.0 closes unless it says otherwise
	}
	c.idleFor = t.o.IdleTimeout
	if ka := h.Get("Keep-Alive"); ka != "" {
		if d, ok := keepAliveTimeout(ka); ok && d-time.Second < c.idleFor {
			c.idleFor = d - time.Second
		}
	}
	b := &respBody{t: t, c: c, ctx: ctx, stop: stop, keep: keep}
	switch {
	case req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified:
		resp.ContentLength = 0
		if cl := h["Content-Length"]; len(cl) > 0 && req.Method == http.MethodHead {
			// The length of the body a GET would have had.
			n, err := contentLength(cl)
			if err != nil {
				return fail(err)
			}
			resp.ContentLength = n
		}
		b.done(nil)
		resp.Body = http.NoBody
		return resp, true, nil
	case len(h["Transfer-Encoding"]) > 0:
		// HTTP/1.0 has no transfer codings: such an answer's framing is
		// faulty (RFC 9112, section 6.1).
		if minor == 0 {
			return fail(fmt.Errorf("%w: Transfer-Encoding in an HTTP/1.0 answer", ErrBadResponse))
		}
		// Only chunked framing is read: the request asked for no coding.
		if te := h["Transfer-Encoding"]; len(te) != 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
			return fail(fmt.Errorf("%w: Transfer-Encoding %q", ErrBadResponse, strings.Join(te, ", ")))
		}
		b.r = &chunked{br: c.br}
		resp.TransferEncoding = []string{"chunked"}
		h.Del("Content-Length")
	case len(h["Content-Length"]) > 0:
		n, err := contentLength(h["Content-Length"])
		if err != nil {
			return fail(err)
		}
		resp.ContentLength = n
		if n == 0 {
			b.done(nil)
			resp.Body = http.NoBody
			return resp, true, nil
		}
		b.r = io.LimitReader(c.br, n)
		b.n = n
	default:
		// The body ends when the server closes the connection.
		b.keep = false
		b.r = c.br
		b.toEOF = true
	}
	resp.Close = !b.keep
	resp.Body = b
	return resp, true, nil
}

// maxInformational is how many 1xx answers may precede the answer (as
// many as net/http allows).
const maxInformational = 5

// validRequest checks what writeRequest writes of req's head.
func validRequest(req *http.Request) (head, error) {
	if req.ContentLength > 0 && (req.Body == nil || req.Body == http.NoBody) {
		return head{}, fmt.Errorf("h1: request ContentLength %d with no body", req.ContentLength)
	}
	hd := head{method: req.Method, uri: req.URL.RequestURI(), host: req.Host}
	if hd.method == "" {
		hd.method = http.MethodGet
	}
	if hd.host == "" {
		hd.host = req.URL.Host
	}
	if !validHeaderValue(hd.uri) || strings.ContainsAny(hd.uri, " ") || !validHeaderValue(hd.host) || !validToken(hd.method) {
		return head{}, fmt.Errorf("h1: invalid method, target or host in request %s %q", hd.method, hd.uri)
	}
	for k, vs := range req.Header {
		if ownHeader(k) {
			continue
		}
		if !validToken(k) {
			return head{}, fmt.Errorf("h1: invalid header name %q", k)
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return head{}, fmt.Errorf("h1: invalid value of header %q", k)
			}
		}
	}
	return hd, nil
}

// head is a request's first line and Host, as validRequest checked them.
type head struct{ method, uri, host string }

// ownHeader reports a header the transport writes itself (or not at all)
// whatever the request's Header says, in any letter case.
func ownHeader(k string) bool {
	switch len(k) {
	case 4:
		return strings.EqualFold(k, "Host")
	case 7:
		return strings.EqualFold(k, "Trailer")
	case 10:
		return strings.EqualFold(k, "Connection")
	case 14:
		return strings.EqualFold(k, "Content-Length")
	case 17:
		return strings.EqualFold(k, "Transfer-Encoding")
	}
	return false
}

// writeRequest writes req's head (checked by validRequest) and body: body,
// or stream, of req.ContentLength bytes.
func writeRequest(w *bufio.Writer, req *http.Request, hd head, body []byte, stream io.Reader) error {
	method := hd.method
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(hd.uri)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(hd.host)
	w.WriteString("\r\n")
	for k, vs := range req.Header {
		if ownHeader(k) {
			continue
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if req.Close || hasToken(req.Header["Connection"], "close") {
		// The connection is closed after the answer: the server is told.
		w.WriteString("Connection: close\r\n")
	}
	var n int64
	switch {
	case body != nil:
		n = int64(len(body))
	case stream != nil:
		n = req.ContentLength
	}
	if n > 0 || (method != http.MethodGet && method != http.MethodHead && method != http.MethodDelete && method != http.MethodOptions) {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(n, 10))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	switch {
	case body != nil:
		w.Write(body)
	case n > 0:
		src := &source{r: stream}
		// A body that fits the buffer goes out with the head in one write.
		// Its last byte is held back until the body is known to end there:
		// one longer than its length fails before the request is whole,
		// rather than being cut and sent as if the cut were the body.
		if n <= int64(w.Available()) {
			if m, err := io.CopyN(w, src, n-1); err != nil {
				return bodyError(src, m, n, err)
			}
		} else if err := w.Flush(); err != nil {
			return err
		} else if m, err := io.CopyN(w, src, n-1); err != nil {
			return bodyError(src, m, n, err)
		}
		var last [2]byte
		k, err := io.ReadFull(stream, last[:])
		switch {
		case k == 2:
			return fmt.Errorf("%w: the body is longer than its ContentLength %d", errBodySource, n)
		case k == 0:
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("%w: wrote %d of its %d bytes: %w", errBodySource, n-1, n, err)
		case err != io.ErrUnexpectedEOF:
			return fmt.Errorf("%w: %w", errBodySource, err)
		}
		w.WriteByte(last[0])
	}
	return w.Flush()
}

// source is a request body that records its own failure (a body shorter
// than its length, or a reader error), as opposed to the connection's.
type source struct {
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// errBodySource marks a request that failed because its body could not
// be read: the server is waiting for the rest, no answer can be there.
var errBodySource = errors.New("h1: reading the request body")

func bodyError(src *source, m, n int64, err error) error {
	if src.err != nil {
		return fmt.Errorf("%w: wrote %d of its %d bytes: %w", errBodySource, m, n, err)
	}
	return fmt.Errorf("h1: request body: wrote %d of its %d bytes: %w", m, n, err)
}

// parseStatus reads "HTTP/1.x NNN Reason": the code, the status ("NNN
// Reason") and x.
func parseStatus(line []byte) (int, string, int, error) {
	s := strings.TrimRight(string(line), "\r\n")
	proto, rest, ok := strings.Cut(s, " ")
	if !ok || (proto != "HTTP/1.1" && proto != "HTTP/1.0") || len(rest) < 3 {
		return 0, "", 0, fmt.Errorf("%w: status line %q", ErrBadResponse, s)
	}
	code, err := strconv.Atoi(rest[:3])
	if err != nil || code < 100 || code > 999 || (len(rest) > 3 && rest[3] != ' ') {
		return 0, "", 0, fmt.Errorf("%w: status line %q", ErrBadResponse, s)
	}
	return code, rest, int(proto[7] - '0'), nil
}

// contentLength reads the Content-Length header's values: decimal digits,
// the same in every copy (net/http's rule: a length that is signed, a
// list, or differs between copies is refused, since client and server
// could each take a different one).
func contentLength(vs []string) (int64, error) {
	v := strings.TrimSpace(vs[0])
	for _, o := range vs[1:] {
		if strings.TrimSpace(o) != v {
			return 0, fmt.Errorf("%w: conflicting Content-Length headers %q", ErrBadResponse, vs)
		}
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, fmt.Errorf("%w: Content-Length %q", ErrBadResponse, v)
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: Content-Length %q", ErrBadResponse, v)
	}
	return n, nil
}

// keepAliveTimeout reads "timeout=N" of a Keep-Alive header.
func keepAliveTimeout(v string) (time.Duration, bool) {
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && strings.EqualFold(k, "timeout") {
			if n, err := strconv.Atoi(strings.TrimSpace(val)); err == nil && n > 0 {
				return time.Duration(n) * time.Second, true
			}
		}
	}
	return 0, false
}

// hasToken reports whether a comma-separated header holds token.
func hasToken(vs []string, token string) bool {
	for _, v := range vs {
		for _, part := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}

// validFieldValue reports whether an answer's header value holds only
// visible characters, spaces, tabs and bytes of 0x80 and above, as RFC
// 9110 allows (net/http refuses the same answers).
func validFieldValue(v []byte) bool {
	for _, c := range v {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func validToken(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// respBody is an answer's body. Read to its end, it returns the
// connection to the pool; closed early, it closes the connection.
type respBody struct {
	t     *Transport
	c     *conn
	ctx   context.Context
	r     io.Reader
	n     int64 // bytes left of a Content-Length body
	toEOF bool  // the body ends with the connection
	stop  func() bool
	keep  bool

	// mu is held by Read (and by Close once no Read runs).
	mu sync.Mutex
	// state guards the fields below, which Close sets while a Read may
	// be blocked in another goroutine.
	state    sync.Mutex
	finished bool
	closed   bool
	err      error
}

// errBodyClosed is what Read returns after Close.
var errBodyClosed = errors.New("h1: read on a closed body")

func (b *respBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Lock()
	finished, err := b.finished, b.err
	b.state.Unlock()
	if finished {
		if err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if b.n > 0 {
		b.n -= int64(n)
		if b.n == 0 && err == nil {
			err = io.EOF
		}
	}
	switch {
	case err == io.EOF && b.toEOF:
		b.done(nil)
	case err == io.EOF && b.n > 0:
		err = b.done(io.ErrUnexpectedEOF)
	case err == io.EOF:
		b.done(nil)
	case err != nil:
		if cerr := b.ctx.Err(); cerr != nil {
			// The context ended the read (its deadline cut the connection).
			err = cerr
		}
		err = b.done(err)
	}
	return n, err
}

// done ends the exchange: the connection goes back to the pool when the
// answer was read whole and nothing cut the exchange short. It returns
// err, or errBodyClosed when Close cut the read short.
func (b *respBody) done(err error) error {
	b.state.Lock()
	defer b.state.Unlock()
	if err != nil && b.closed {
		err = errBodyClosed
	}
	b.finished, b.err = true, err
	stopped := true
	if b.stop != nil {
		stopped = b.stop()
	}
	if err == nil && b.keep && stopped && !b.closed {
		b.t.put(b.c)
		return nil
	}
	b.c.nc.Close()
	return err
}

// Close ends the body. Unread, the connection is closed rather than
// drained. A Read blocked in another goroutine returns at once.
func (b *respBody) Close() error {
	b.state.Lock()
	if !b.finished && !b.closed {
		b.closed = true
		// The connection is still this body's (done has not returned it
		// to the pool): cut a blocked Read short.
		b.c.nc.SetReadDeadline(aLongTimeAgo)
	}
	b.state.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Lock()
	finished := b.finished
	b.state.Unlock()
	if !finished {
		b.done(errBodyClosed)
	}
	return nil
}

// chunked reads a chunked body and the trailer after it.
type chunked struct {
	br   *bufio.Reader
	left int64 // bytes left in the current chunk
	eof  bool
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.eof {
		return 0, io.EOF
	}
	if c.left == 0 {
		line, err := readChunkLine(c.br)
		if err != nil {
			return 0, err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(line)), 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: chunk size %q", ErrBadResponse, line)
		}
		if n == 0 {
			// The trailer: header lines up to an empty one.
			for {
				line, err := readLine(c.br)
				if err != nil {
					return 0, err
				}
				if len(line) == 0 {
					break
				}
			}
			c.eof = true
			return 0, io.EOF
		}
		c.left = n
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	if c.left == 0 && err == nil {
		var crlf [2]byte
		if _, err = io.ReadFull(c.br, crlf[:]); err == nil && (crlf[0] != '\r' || crlf[1] != '\n') {
			err = fmt.Errorf("%w: chunk not followed by CRLF", ErrBadResponse)
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// readChunkLine reads a chunk-size line without its CRLF. It must end
// with CRLF: a bare LF there is how one reader's framing is made to differ
// from another's, and net/http refuses it too.
func readChunkLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: line too long", ErrBadResponse)
	}
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: chunk size line %q does not end with CRLF", ErrBadResponse, line)
	}
	return line[:len(line)-2], nil
}

// readLine reads a line without its CRLF.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: line too long", ErrBadResponse)
	}
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// An answer's header may hold at most maxHeaderLines lines and
// maxHeaderBytes bytes of values (net/http allows 1 MB).
const (
	maxHeaderLines = 1000
	maxHeaderBytes = 1 << 20
)

// readHeader reads the header lines of an answer up to the empty line.
// The values share one string and one slice; the names are canonical
// (the connection remembers the canonical form of the names it has seen).
func (c *conn) readHeader() (http.Header, error) {
	type line struct {
		key        string
		start, end int
	}
	var lines [24]line
	ls := lines[:0]
	buf := c.hbuf[:0]
	for {
		raw, err := readLine(c.br)
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 {
			break
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			// An obsolete folded line continues the previous value.
			if len(ls) == 0 {
				return nil, fmt.Errorf("%w: header starts with a folded line", ErrBadResponse)
			}
			buf = append(buf, ' ')
			buf = append(buf, bytes.TrimSpace(raw)...)
			ls[len(ls)-1].end = len(buf)
			continue
		}
		colon := bytes.IndexByte(raw, ':')
		if colon <= 0 {
			return nil, fmt.Errorf("%w: header line %q", ErrBadResponse, raw)
		}
		name := raw[:colon]
		key, ok := c.names[string(name)]
		if !ok {
			if !validToken(string(name)) {
				return nil, fmt.Errorf("%w: header name %q", ErrBadResponse, name)
			}
			key = textproto.CanonicalMIMEHeaderKey(string(name))
			if c.names == nil {
				c.names = map[string]string{}
			}
			if len(c.names) < 64 {
				c.names[string(name)] = key
			}
		}
		if !validFieldValue(raw[colon+1:]) {
			return nil, fmt.Errorf("%w: header %s holds a control character", ErrBadResponse, key)
		}
		start := len(buf)
		buf = append(buf, bytes.TrimSpace(raw[colon+1:])...)
		ls = append(ls, line{key, start, len(buf)})
		if len(ls) > maxHeaderLines || len(buf) > maxHeaderBytes {
			return nil, fmt.Errorf("%w: more than %d header lines or %d bytes", ErrBadResponse, maxHeaderLines, maxHeaderBytes)
		}
	}
	c.hbuf = buf
	block := string(buf)
	vals := make([]string, len(ls))
	h := make(http.Header, len(ls))
	for i, l := range ls {
		vals[i] = block[l.start:l.end]
		if prev, ok := h[l.key]; ok {
			h[l.key] = append(prev, vals[i])
			continue
		}
		h[l.key] = vals[i : i+1 : i+1]
	}
	return h, nil
}
