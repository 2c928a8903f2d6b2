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

// proxiedStore returns a store on Azurite whose table requests pass
// through a fault-injecting proxy on loopback driven by sched.
func proxiedStore(t *testing.T, sched storetest.Schedule) store.Store {
	t.Helper()
	c, err := parseConnString(azuriteConn(t))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.urls.Table)
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Start(u.Scheme+"://"+u.Host, func(r *http.Request) faultproxy.Fault {
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
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	urls := c.urls
	urls.Table = p.URL + u.Path
	st, err := NewWithSharedKey(c.account, c.key, urls, &Options{Retry: policy.RetryOptions{RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
