package azbase

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/store/azstore/internal/h1"
)

// TestDefaultTransportIsNetHTTP: without a transport of the caller's, every
// request goes through net/http (one client shared by every store); the
// fast transport is taken only when asked for.
func TestDefaultTransportIsNetHTTP(t *testing.T) {
	co := ClientOptions(nil, policy.RetryOptions{}, false)
	tr, ok := co.Transport.(Transport)
	if !ok {
		t.Fatalf("transport %T, want the Transport wrapper", co.Transport)
	}
	c, ok := tr.Next.(*http.Client)
	if !ok {
		t.Fatalf("default transport %T, want *http.Client", tr.Next)
	}
	if c != NetHTTP() {
		t.Error("the default client is not the shared one")
	}
	if _, ok := c.Transport.(*http.Transport); !ok {
		t.Errorf("default client's transport %T, want *http.Transport", c.Transport)
	}
	fast := ClientOptions(FastTransport(), policy.RetryOptions{}, false)
	if _, ok := fast.Transport.(Transport).Next.(*h1.Transport); !ok {
		t.Errorf("FastTransport gives %T, want *h1.Transport", fast.Transport.(Transport).Next)
	}
}

// TestNoRequestHangsByDefault: each try of a request has a bound unless
// the caller sets a negative one; a value of the caller's is kept.
func TestNoRequestHangsByDefault(t *testing.T) {
	cases := []struct {
		set, def, want time.Duration
	}{
		{0, DefaultTryTimeout, 60 * time.Second},
		{0, DefaultBlobTryTimeout, 10 * time.Minute},
		{-1, DefaultTryTimeout, 0},
		{5 * time.Second, DefaultTryTimeout, 5 * time.Second},
	}
	for _, c := range cases {
		if got := TryTimeout(c.set, c.def); got != c.want {
			t.Errorf("TryTimeout(%v, %v) = %v, want %v", c.set, c.def, got, c.want)
		}
	}
	if got := ClientOptions(nil, policy.RetryOptions{}, false).Retry.TryTimeout; got != DefaultTryTimeout {
		t.Errorf("default per-try timeout %v, want %v", got, DefaultTryTimeout)
	}
	if got := ClientOptions(nil, policy.RetryOptions{TryTimeout: -1}, false).Retry.TryTimeout; got != 0 {
		t.Errorf("per-try timeout with -1: %v, want none (0)", got)
	}
	if got := WriteRetry(ClientOptions(nil, policy.RetryOptions{}, false)).TryTimeout; got != DefaultTryTimeout {
		t.Errorf("writes' per-try timeout %v, want %v", got, DefaultTryTimeout)
	}
}
