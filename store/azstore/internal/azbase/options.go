package azbase

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Per-try timeouts: a try of a table or queue request that has no answer
// after DefaultTryTimeout is abandoned (the service's own limit for one is
// 30 seconds, so by then it has answered or given up), a blob request
// after DefaultBlobTryTimeout (a transfer of a large block needs longer).
// An abandoned write's outcome is unknown and settled as for any lost
// answer, never resent blindly.
const (
	DefaultTryTimeout     = 60 * time.Second
	DefaultBlobTryTimeout = 10 * time.Minute
)

// TryTimeout returns the per-try timeout a configured value d stands for:
// def when d is 0, none (0, azcore's "no timeout") when d is negative.
func TryTimeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// DefaultRetry fills zero fields of r with tablekit's defaults.
func DefaultRetry(r policy.RetryOptions) policy.RetryOptions {
	r.TryTimeout = TryTimeout(r.TryTimeout, DefaultTryTimeout)
	if r.MaxRetries == 0 {
		r.MaxRetries = 4
	}
	if r.RetryDelay == 0 {
		r.RetryDelay = 500 * time.Millisecond
	}
	if r.MaxRetryDelay == 0 {
		r.MaxRetryDelay = 30 * time.Second
	}
	if r.StatusCodes == nil {
		r.StatusCodes = []int{http.StatusRequestTimeout, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	}
	return r
}

// RefusedOnly retries a request only when the service certainly did not
// act on it: a 503 ServerBusy (throttled before any work) or a connection
// that was never established (and might be, soon). A lost response, a 500
// OperationTimedOut or a reset connection may hide a write that was
// applied, so those are returned to the caller instead of replayed.
func RefusedOnly(resp *http.Response, err error) bool {
	if err != nil {
		return IsDialError(err) && !PermanentDialError(err)
	}
	return resp.StatusCode == http.StatusServiceUnavailable
}

// Retryable is the retry rule of requests that are safe to repeat: the
// configured statuses, and transport errors other than a refused
// connection or an unknown host, which fail fast instead of after the
// whole backoff schedule.
func Retryable(statuses []int) func(*http.Response, error) bool {
	return func(resp *http.Response, err error) bool {
		if err != nil {
			return !PermanentDialError(err)
		}
		return slices.Contains(statuses, resp.StatusCode)
	}
}

// ClientOptions are the azcore options of every client of a store: the
// transport (next, or NetHTTP) wrapped in Transport, and the
// retry policy of requests that are safe to repeat.
func ClientOptions(next policy.Transporter, retry policy.RetryOptions, insecureHTTP bool) azcore.ClientOptions {
	if next == nil {
		next = NetHTTP()
	}
	co := azcore.ClientOptions{Transport: Transport{Next: next}, Retry: DefaultRetry(retry), InsecureAllowCredentialWithHTTP: insecureHTTP}
	if co.Retry.ShouldRetry == nil {
		co.Retry.ShouldRetry = Retryable(co.Retry.StatusCodes)
	}
	return co
}

// WriteRetry is the retry policy of writes that are not idempotent: the
// client's, resending only what the service refused outright.
func WriteRetry(co azcore.ClientOptions) policy.RetryOptions {
	r := co.Retry
	r.ShouldRetry = RefusedOnly
	return r
}

// Once returns ctx with the retry policy wr of non-idempotent writes.
func Once(ctx context.Context, wr policy.RetryOptions) context.Context {
	return policy.WithRetryOptions(ctx, wr)
}

// Quote quotes a name or key for a message, cutting long values.
func Quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// Deref returns *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DerefTime returns *t in UTC, or the zero time for nil.
func DerefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
