package azstore

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/internal/faultproxy"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// proxiedStore returns a store on Azurite whose table and blob requests
// pass through fault-injecting proxies on loopback driven by sched.
func proxiedStore(t *testing.T, sched storetest.Schedule) store.Store {
	t.Helper()
	c, err := parseConnString(azuriteConn(t))
	if err != nil {
		t.Fatal(err)
	}
	decide := func(r *http.Request) faultproxy.Fault {
		switch sched(storetest.Request{Write: r.Method != http.MethodGet}) {
		case storetest.FaultBusy:
			return faultproxy.Busy
		case storetest.FaultInternalBefore:
			return faultproxy.InternalBefore
		case storetest.FaultLostBefore:
			return faultproxy.ResetBefore
		case storetest.FaultInternalAfter:
			return faultproxy.InternalAfter
		case storetest.FaultLostAfter:
			return faultproxy.DropAfter
		}
		return faultproxy.None
	}
	urls := c.urls
	urls.Table = proxy(t, c.urls.Table, decide)
	if c.urls.Blob != "" {
		urls.Blob = proxy(t, c.urls.Blob, decide)
	}
	st, err := NewWithSharedKey(c.account, c.key, urls, &Options{
		Retry:    policy.RetryOptions{RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 20 * time.Millisecond},
		Services: allServices(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// proxy starts a fault proxy in front of endpoint and returns the
// endpoint's URL through it.
func proxy(t *testing.T, endpoint string, decide func(*http.Request) faultproxy.Fault) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Start(u.Scheme+"://"+u.Host, decide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.URL + u.Path
}
