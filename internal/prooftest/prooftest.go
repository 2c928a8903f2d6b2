// Package prooftest holds what the patterns' crash and fault proofs share:
// a seeded fault schedule drawn by concurrent writers, applied either
// through storetest's interception kit (the typed lane kept) or on the
// wire by a fault proxy in front of Azurite, and the Azurite store behind
// that proxy.
package prooftest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/faultproxy"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
	"github.com/tablekit/tablekit/store/storetest"
)

// Faults is a seeded fault schedule shared by concurrent writers: each
// table request meets a fault with probability Rate, of a kind drawn from
// the same source. The order in which writers draw is not seeded, so the
// counts of one seed vary a little between runs.
type Faults struct {
	mu     sync.Mutex
	rng    *rand.Rand
	rate   float64
	counts map[string]int
}

// New returns a schedule of seed faulting a request with probability rate.
func New(seed uint64, rate float64) *Faults {
	return &Faults{rng: rand.New(rand.NewPCG(seed, 0x1dc)), rate: rate, counts: map[string]int{}}
}

// draw returns a kind index below n, or -1 for no fault.
func (f *Faults) draw(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.rate {
		return -1
	}
	return f.rng.IntN(n)
}

func (f *Faults) count(k string) {
	f.mu.Lock()
	f.counts[k]++
	f.mu.Unlock()
}

// Total is the number of faults injected so far.
func (f *Faults) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.counts {
		n += v
	}
	return n
}

// Counts returns the faults injected so far by kind.
func (f *Faults) Counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.counts)
}

// Hook faults table requests through storetest's kit, which keeps the
// typed lane: 503, 500 before, lost before, 500 after, lost after.
func (f *Faults) Hook() storetest.Hook { return f.HookOn("Table.") }

// HookOn is Hook for the requests whose kit name ("Table.Write",
// "Queue.Send", ...) starts with one of prefixes, so that an eventual
// pattern's queue requests can meet the same faults as its tables.
func (f *Faults) HookOn(prefixes ...string) storetest.Hook {
	kinds := []storetest.Fault{storetest.FaultBusy, storetest.FaultInternalBefore, storetest.FaultLostBefore, storetest.FaultInternalAfter, storetest.FaultLostAfter}
	return storetest.Faults(func(c storetest.Call) storetest.Fault {
		match := false
		for _, p := range prefixes {
			match = match || strings.HasPrefix(c.Op, p)
		}
		if !match {
			return storetest.FaultNone
		}
		i := f.draw(len(kinds))
		if i < 0 {
			return storetest.FaultNone
		}
		f.count(fmt.Sprint(kinds[i]))
		return kinds[i]
	})
}

// Decide faults requests on the wire, for a fault proxy: refused (503,
// 500), reset before forwarding, and forwarded then dropped, cut short,
// answered 500 or timed out.
func (f *Faults) Decide(*http.Request) faultproxy.Fault {
	kinds := []faultproxy.Fault{faultproxy.Busy, faultproxy.InternalBefore, faultproxy.ResetBefore, faultproxy.DropAfter,
		faultproxy.TruncateAfter, faultproxy.InternalAfter, faultproxy.TimeoutAfter}
	i := f.draw(len(kinds))
	if i < 0 {
		return faultproxy.None
	}
	f.count(kinds[i].String())
	return kinds[i]
}

// Proxied is the test's Azurite with its table endpoint behind a fault
// proxy on loopback driven by decide, and a short retry policy. It skips
// the test when Azurite is not configured, as azuritetest.Conn does.
func Proxied(t *testing.T, decide func(*http.Request) faultproxy.Fault) store.Store {
	t.Helper()
	return ProxiedServices(t, decide, "table")
}

// ProxiedServices is Proxied with the endpoints of the named services
// ("table", "queue", "blob") each behind its own fault proxy, all driven
// by decide; the other endpoints are reached directly. The eventual
// patterns put their queue behind a proxy as well as their tables.
func ProxiedServices(t *testing.T, decide func(*http.Request) faultproxy.Fault, services ...string) store.Store {
	t.Helper()
	if len(services) == 0 {
		t.Fatal("prooftest: no service to put behind a fault proxy")
	}
	want := map[string]bool{}
	for _, s := range services {
		switch s = strings.ToLower(s); s {
		case "table", "queue", "blob":
			want[s+"endpoint"] = true
		default:
			t.Fatalf("prooftest: unknown service %q", s)
		}
	}
	var parts []string
	for _, part := range strings.Split(azuritetest.Conn(t), ";") {
		k, v, _ := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if want[strings.ToLower(k)] {
			u, err := url.Parse(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			p, err := faultproxy.Start(u.Scheme+"://"+u.Host, decide)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			part = k + "=" + p.URL + u.Path
		}
		parts = append(parts, part)
	}
	st, err := azstore.NewFromConnectionString(strings.Join(parts, ";"), &azstore.Options{
		Retry:    policy.RetryOptions{RetryDelay: 2 * time.Millisecond, MaxRetryDelay: 10 * time.Millisecond},
		Services: []azstore.Service{azqueues.Service(), azblobs.Service()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Each runs a seeded-fault proof on the three backends every proof covers,
// each with its own schedule (seeds 1, 2 and 3, a fault on one request in
// five): memstore and Azurite with the faults applied through storetest's
// kit to the requests named by the prefixes of hook ("Table." when none
// are given), and Azurite with the endpoints of the named services ("table"
// when none are given) behind fault proxies on loopback. body gets the
// backend, a label for its log, the faulty store and the schedule.
func Each(t *testing.T, hook, services []string, body func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *Faults)) {
	if len(hook) == 0 {
		hook = []string{"Table."}
	}
	if len(services) == 0 {
		services = []string{"table"}
	}
	t.Run("memstore", func(t *testing.T) {
		b := backendtest.Memstore()
		f := New(1, 0.2)
		body(t, b, "memstore", storetest.WrapStore(b.Store, f.HookOn(hook...)), f)
	})
	t.Run("azurite", func(t *testing.T) {
		b := backendtest.Azurite(t)
		f := New(2, 0.2)
		body(t, b, "azurite", storetest.WrapStore(b.Store, f.HookOn(hook...)), f)
	})
	t.Run("azurite-faultproxy", func(t *testing.T) {
		b := backendtest.Azurite(t)
		f := New(3, 0.2)
		body(t, b, "azurite through the fault proxy ("+strings.Join(services, ", ")+")", ProxiedServices(t, f.Decide, services...), f)
	})
}
