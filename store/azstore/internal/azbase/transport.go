package azbase

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/store/azstore/internal/h1"
	"github.com/tablekit/tablekit/store/driver"
)

// attempt records what happened to the requests of one call: whether any
// of them got a connection, after which it may have reached the service.
// Every store method puts one in the context it hands the SDK (track);
// the transport fills it in.
type attempt struct {
	connected atomic.Bool
	// ambiguous is set once a request of the call got no definite answer
	// (a transport error after connecting, or a 500, 502 or 504): a write
	// retried after that may have been applied by the earlier try, whatever
	// the last try answers.
	ambiguous atomic.Bool
}

type attemptKey struct{}

// bodyKey marks a request whose body is Body's bytes.
type bodyKey struct{}

// Body is a request body held in memory, which the transport hands
// net/http as such (see Transport.Do).
type Body struct {
	// Data is the body.
	Data []byte
}

// WithBody returns ctx marking its request's body as b.Data.
func WithBody(ctx context.Context, b *Body) context.Context {
	return context.WithValue(ctx, bodyKey{}, b)
}

// track returns ctx carrying a fresh attempt record.
func track(ctx context.Context) (context.Context, *attempt) {
	a := &attempt{}
	return context.WithValue(ctx, attemptKey{}, a), a
}

// attemptOf returns the record ctx carries, or nil.
func attemptOf(ctx context.Context) *attempt {
	if ctx == nil {
		return nil
	}
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a
}

// Transport wraps the HTTP transport every request goes through. It
//
//   - notes in the call's attempt record when a request got a connection:
//     before that the request certainly never left, so a failure then
//     means "not applied" (CodeConnectionFailed); after it, a failure
//     leaves a write's outcome unknown;
//   - returns transport errors with every URL's query removed, so that no
//     SAS signature reaches azcore's retry and logging policies (which
//     print the error) or the caller.
type Transport struct {
	// Next is the transport that sends the requests.
	Next policy.Transporter
}

func (t Transport) Do(req *http.Request) (*http.Response, error) {
	a := attemptOf(req.Context())
	var body []byte
	if b, _ := req.Context().Value(bodyKey{}).(*Body); b != nil && req.Body != nil && req.ContentLength == int64(len(b.Data)) {
		body = b.Data
	}
	var resp *http.Response
	var err error
	if h, ok := t.Next.(*h1.Transport); ok {
		// The default transport takes the hook and the in-memory body as
		// they are, without a copy of the request.
		x := h1.Extra{Body: body}
		if a != nil {
			x.GotConn = a.gotConn
		}
		resp, err = h.DoWith(req, x)
	} else {
		resp, err = t.Next.Do(withHooks(req, a, body))
	}
	if a != nil && ((err != nil && a.connected.Load()) || (resp != nil && driver.AmbiguousStatus(resp.StatusCode))) {
		a.ambiguous.Store(true)
	}
	if err != nil {
		return resp, redactErr(err)
	}
	return resp, nil
}

// withHooks is req for any other transport: a ClientTrace reports the
// connection to a, and an in-memory body goes as a reader net/http knows
// to be in memory (it then writes the headers and a small body in one
// system call instead of two; it flushes the headers first for any other
// reader, such as the SDK's rewindable wrapper).
func withHooks(req *http.Request, a *attempt, body []byte) *http.Request {
	if a == nil && body == nil {
		return req
	}
	ctx := req.Context()
	if a != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { a.gotConn() }})
	}
	req = req.WithContext(ctx)
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return req
}

// gotConn records that a request of the call got a connection.
func (a *attempt) gotConn() { a.connected.Store(true) }

// redactedError is a transport error shown with redacted URLs; errors.As
// and errors.Is still reach the original (*url.Error, *net.OpError,
// context errors).
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &redactedError{msg: RedactURLs(err.Error()), err: err}
	}
	msg := RedactURLs(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// FastTransport is azstore's own HTTP/1.1 transport (package h1), which
// makes each exchange on the caller's goroutine, with NetHTTP for requests
// that go through a proxy. A caller opts in with Options.Transport. One is
// shared by every store of the process, like net/http's default
// transport, so that stores opened for the same account share their idle
// connections.
func FastTransport() policy.Transporter {
	fastOnce.Do(func() {
		fastTransport = h1.New(h1.Options{
			DialTimeout:    30 * time.Second,
			TLSConfig:      &tls.Config{MinVersion: tls.VersionTLS12},
			MaxIdlePerHost: 64,
			IdleTimeout:    90 * time.Second,
			Proxy:          http.ProxyFromEnvironment,
			Fallback:       NetHTTP(),
		})
	})
	return fastTransport
}

var (
	fastOnce      sync.Once
	fastTransport *h1.Transport
	netOnce       sync.Once
	netClient     *http.Client
)

// NetHTTP is the transport azstore uses when Options.Transport is nil:
// net/http set up as azcore sets it up, with enough idle connections per
// host for the bulk writer's concurrent transactions. One client is
// shared by every store of the process.
func NetHTTP() *http.Client {
	netOnce.Do(func() { netClient = DefaultHTTPClient() })
	return netClient
}

// DefaultHTTPClient is net/http with azcore's usual settings, and enough
// idle connections per host for the bulk writer's concurrent
// transactions: the transport of proxied requests.
func DefaultHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
	}}
}

// PermanentDialError reports a connection that cannot succeed on a retry
// soon: the host refused it, or its name does not resolve. Retrying those
// only delays the error by the whole backoff schedule.
func PermanentDialError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) && dns.IsNotFound
}
