// Package meter counts what a data layer's requests cost, as Azure
// Table storage bills them: each request is one billable transaction, a
// query page one, an entity group transaction (a batch of up to 100
// writes) one, a retry one more; a request the service refused with 503
// ServerBusy (throttled) is not billed.
//
// Wrap a store, run the code, read the counts:
//
//	st, m := meter.Wrap(memstore.New())
//	// ... use st ...
//	fmt.Println(m.Total().Billed)
//
// The wrapped store keeps every capability of the one it wraps (a table is
// a store.TypedTable exactly when the inner table is one). The meter
// counts the tries the backend reports (driver.ReportTry) for each call:
// azstore reports each HTTP request from its pipeline, below azcore's
// retries, so a retried request counts each try; memstore reports where
// its engine plays the service, including the resends and read-backs it
// makes after a lost answer. A backend that reports nothing is counted one
// request per call that was sent. The counts work on every backend, so a
// test can assert what a code path costs.
//
// The package depends on nothing but store: no OpenTelemetry (see
// store/tkotel for spans and metrics).
package meter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/intercept"
)

// Key names what a count is of: a service, a resource and an operation.
type Key struct {
	// Service is "table", "queue" or "blob".
	Service string
	// Name is the table, queue or container ("" for a table listing).
	Name string
	// Op is the call as store/intercept names it, with a typed request
	// counted as its entity-lane twin: "Table.Get" (GetInto too),
	// "Table.Insert" (a typed Write of an insert too), "Table.Query"
	// (QueryInto too), "Table.Transact", "Store.CreateTable",
	// "Queue.Put", "Container.Get", ...
	Op string
}

// Count is what calls cost.
type Count struct {
	// Calls are the calls made through the wrapped store that sent at
	// least one request; a call refused by tablekit's own checks before
	// anything was sent costs nothing and is not counted.
	Calls int64
	// Requests are the requests sent: every try, retries included.
	Requests int64
	// Billed are the billable transactions: Requests less Throttled and
	// NoAnswer.
	Billed int64
	// OK, ClientErrors and ServerErrors are the requests answered with a
	// 2xx or 3xx, a 4xx, and a 5xx other than 503.
	OK, ClientErrors, ServerErrors int64
	// Throttled are the requests refused with 503 ServerBusy: not billed.
	Throttled int64
	// NoAnswer are the requests that got no answer (a failed connection,
	// a lost answer): whether the service saw them is unknown, and they
	// are not counted as billed.
	NoAnswer int64
}

// Retries are the requests beyond each call's first.
func (c Count) Retries() int64 { return c.Requests - c.Calls }

func (c *Count) add(d Count) {
	c.Calls += d.Calls
	c.Requests += d.Requests
	c.Billed += d.Billed
	c.OK += d.OK
	c.ClientErrors += d.ClientErrors
	c.ServerErrors += d.ServerErrors
	c.Throttled += d.Throttled
	c.NoAnswer += d.NoAnswer
}

// String is the count in one line.
func (c Count) String() string {
	return fmt.Sprintf("calls %d, requests %d, billed %d (ok %d, 4xx %d, 5xx %d, throttled %d, no answer %d)",
		c.Calls, c.Requests, c.Billed, c.OK, c.ClientErrors, c.ServerErrors, c.Throttled, c.NoAnswer)
}

// Entry is one Key's Count.
type Entry struct {
	Key
	Count
}

// Meter counts the requests of the stores it wraps. It is safe for
// concurrent use.
type Meter struct {
	mu     sync.Mutex
	counts map[Key]*Count
}

// New returns an empty Meter.
func New() *Meter { return &Meter{counts: map[Key]*Count{}} }

// Wrap returns st wrapped by a new Meter, and the Meter.
func Wrap(st store.Store) (store.Store, *Meter) {
	m := New()
	return m.Store(st), m
}

// Store returns st with its requests counted by m.
func (m *Meter) Store(st store.Store) store.Store { return intercept.Observe(st, m.Hook, nil) }

// Table returns t with its requests counted by m.
func (m *Meter) Table(t store.Table) store.Table { return intercept.ObserveTable(t, m.Hook, nil) }

// tries counts the tries of one call.
type tries struct {
	n     atomic.Int64
	count Count
	mu    sync.Mutex
}

func (t *tries) ObserveTry(tr driver.Try) {
	t.n.Add(1)
	t.mu.Lock()
	t.count.add(classify(tr.Status))
	t.mu.Unlock()
}

// classify is the count of one try answered with status (0: none).
func classify(status int) Count {
	c := Count{Requests: 1}
	switch {
	case status == 0:
		c.NoAnswer = 1
		return c
	case status == 503:
		c.Throttled = 1
		return c
	case status < 400:
		c.OK = 1
	case status < 500:
		c.ClientErrors = 1
	default:
		c.ServerErrors = 1
	}
	c.Billed = 1
	return c
}

// Hook is m's intercept.Hook: it counts the tries the backend reports for
// the call, or, when it reports none, one try for a call that was sent.
// Compose it with other hooks (intercept.Chain) to meter a store wrapped
// for other ends.
func (m *Meter) Hook(ctx context.Context, c intercept.Call, do func(context.Context) error) error {
	t := &tries{}
	err := do(driver.WithTryObserver(ctx, t))
	if t.n.Load() == 0 {
		status, sent := driver.TryStatus(err)
		if !sent {
			return err
		}
		t.ObserveTry(driver.Try{Status: status})
	}
	t.mu.Lock()
	d := t.count
	t.mu.Unlock()
	d.Calls = 1
	k := KeyOf(c)
	m.mu.Lock()
	p := m.counts[k]
	if p == nil {
		p = new(Count)
		m.counts[k] = p
	}
	p.add(d)
	m.mu.Unlock()
	return err
}

// KeyOf is the Key a call is counted under.
func KeyOf(c intercept.Call) Key {
	op := c.EntityOp()
	svc := "table"
	switch {
	case strings.HasPrefix(op, "Queue."):
		svc = "queue"
	case strings.HasPrefix(op, "Container."):
		svc = "blob"
	}
	return Key{Service: svc, Name: c.Name, Op: op}
}

// Entries returns every count, by service, name and operation.
func (m *Meter) Entries() []Entry {
	m.mu.Lock()
	es := make([]Entry, 0, len(m.counts))
	for k, c := range m.counts {
		es = append(es, Entry{k, *c})
	}
	m.mu.Unlock()
	slices.SortFunc(es, func(a, b Entry) int {
		if c := strings.Compare(a.Service, b.Service); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Op, b.Op)
	})
	return es
}

// Sum adds up the counts whose Key keep accepts (nil: every count).
func (m *Meter) Sum(keep func(Key) bool) Count {
	var c Count
	m.mu.Lock()
	for k, v := range m.counts {
		if keep == nil || keep(k) {
			c.add(*v)
		}
	}
	m.mu.Unlock()
	return c
}

// Total is every count added up.
func (m *Meter) Total() Count { return m.Sum(nil) }

// Of adds up the counts of one table, queue or container.
func (m *Meter) Of(name string) Count {
	return m.Sum(func(k Key) bool { return k.Name == name })
}

// Op adds up the counts of one operation ("Table.Insert").
func (m *Meter) Op(op string) Count {
	return m.Sum(func(k Key) bool { return k.Op == op })
}

// Reset sets every count to zero.
func (m *Meter) Reset() {
	m.mu.Lock()
	clear(m.counts)
	m.mu.Unlock()
}

// String is a report: one line per service, name and operation, and the
// total.
func (m *Meter) String() string {
	var b strings.Builder
	for _, e := range m.Entries() {
		fmt.Fprintf(&b, "%s %q %s: %s\n", e.Service, e.Name, e.Op, e.Count)
	}
	fmt.Fprintf(&b, "total: %s\n", m.Total())
	return b.String()
}
