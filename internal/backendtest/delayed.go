package backendtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/faultproxy"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// AzuriteBehindDelay returns the Azurite backend with every table, queue
// and blob request delayed by rtt through loopback proxies, as a network
// round trip to the service would delay it (rtt 0: Azurite directly). The
// proxies stop when the test ends. Benchmarks use it to show what
// concurrency buys against a real network, which Azurite on loopback
// hides.
func AzuriteBehindDelay(tb testing.TB, rtt time.Duration) Backend {
	tb.Helper()
	if rtt == 0 {
		return Azurite(tb)
	}
	var name, key string
	var ep azstore.Endpoints
	proxied := func(endpoint string) string {
		u, err := url.Parse(endpoint)
		if err != nil {
			tb.Fatal(err)
		}
		p, err := faultproxy.Start(u.Scheme+"://"+u.Host, func(*http.Request) faultproxy.Fault { return faultproxy.DelayAfter })
		if err != nil {
			tb.Fatal(err)
		}
		p.Delay = rtt
		tb.Cleanup(func() { _ = p.Close() })
		return p.URL + u.Path
	}
	for _, part := range strings.Split(azuritetest.Conn(tb), ";") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "AccountName":
			name = v
		case "AccountKey":
			key = v
		case "TableEndpoint":
			ep.Table = proxied(v)
		case "QueueEndpoint":
			ep.Queue = proxied(v)
		case "BlobEndpoint":
			ep.Blob = proxied(v)
		}
	}
	st, err := azstore.NewWithSharedKey(name, key, ep,
		&azstore.Options{Services: []azstore.Service{azqueues.Service(), azblobs.Service()}})
	if err != nil {
		tb.Fatalf("azstore: %v", err)
	}
	return Backend{Name: "azurite", Store: st}
}
