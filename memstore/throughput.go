package memstore

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// The throughput model's defaults: the service's scalability targets for
// tables.
const (
	// DefaultPartitionRate is how many entities per second one partition
	// serves: the service's target for a single partition (1 KiB
	// entities).
	DefaultPartitionRate = 2000
	// DefaultAccountRate is how many entities per second the whole store
	// serves: the service's target of 20,000 transactions per second for a
	// storage account, counting each entity of an entity group transaction
	// (see ThroughputLimits).
	DefaultAccountRate = 20000
	// maxThroughputSetting bounds every rate and burst, so the model's
	// integer arithmetic (tokens in billionths of an entity) cannot
	// overflow.
	maxThroughputSetting = 1_000_000_000
)

// ThroughputLimits are the rates of the throughput model WithThroughput
// installs. The zero value is the service's scalability targets.
//
// The model keeps a token bucket per partition (per table and
// PartitionKey) and one for the whole store. A bucket holds up to its
// burst of tokens, one per entity, and refills continuously at its rate
// on the store's clock (WithClock); a new bucket starts full. Costs:
//
//   - a write or an entity group transaction costs one token per entity
//     (per action), taken from its partition's bucket and the store's;
//   - a point read (Get) costs one;
//   - a query page costs the entities it returns, at least one: each
//     partition pays for the entities it returned, and the store for all
//     of them.
//
// A request is served only when its partition's bucket and the store's
// hold its cost; otherwise it is refused with 503 ServerBusy before it does
// anything, and it costs nothing. A query's cost is known only after it
// ran, so a query is admitted when the buckets it reads from hold at least
// one token and then pays in full, which may leave them in debt (at most
// one burst deep): later requests wait until the debt is refilled.
type ThroughputLimits struct {
	// PartitionRate is the entities per second one partition serves; 0
	// means DefaultPartitionRate.
	PartitionRate int
	// PartitionBurst is the size of a partition's bucket: the entities a
	// partition that was idle serves at once. 0 means one second of
	// PartitionRate. It must be at least store.MaxBatchActions, so that a
	// transaction of 100 entities can pass.
	PartitionBurst int
	// AccountRate is the entities per second the whole store serves, all
	// tables and partitions together; 0 means DefaultAccountRate.
	AccountRate int
	// AccountBurst is the size of the store's bucket; 0 means one second
	// of AccountRate. It must be at least store.MaxBatchActions.
	AccountBurst int
}

// Validate reports the first setting that is negative, above
// 1,000,000,000, or (after the defaults are filled in) a burst below
// store.MaxBatchActions, as a *store.Error with code InvalidInput naming
// the setting, its value and the limit.
func (l ThroughputLimits) Validate() error {
	_, err := l.resolve()
	return err
}

// resolve fills in the defaults and checks the settings.
func (l ThroughputLimits) resolve() (ThroughputLimits, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"PartitionRate", l.PartitionRate}, {"PartitionBurst", l.PartitionBurst}, {"AccountRate", l.AccountRate}, {"AccountBurst", l.AccountBurst}} {
		if f.v < 0 || f.v > maxThroughputSetting {
			return l, throughputInvalid("memstore: ThroughputLimits.%s is %d: it must be 0 (the default) to %d", f.name, f.v, maxThroughputSetting)
		}
	}
	if l.PartitionRate == 0 {
		l.PartitionRate = DefaultPartitionRate
	}
	if l.AccountRate == 0 {
		l.AccountRate = DefaultAccountRate
	}
	if l.PartitionBurst == 0 {
		l.PartitionBurst = l.PartitionRate
	}
	if l.AccountBurst == 0 {
		l.AccountBurst = l.AccountRate
	}
	for _, b := range []struct {
		name     string
		v        int
		rateName string
	}{{"PartitionBurst", l.PartitionBurst, "PartitionRate"}, {"AccountBurst", l.AccountBurst, "AccountRate"}} {
		if b.v < store.MaxBatchActions {
			return l, throughputInvalid("memstore: ThroughputLimits.%s is %d (0 means one second of %s): it must be at least %d, the entities of the largest transaction, or such a transaction could never pass",
				b.name, b.v, b.rateName, store.MaxBatchActions)
		}
	}
	return l, nil
}

func throughputInvalid(format string, args ...any) *store.Error {
	e := store.Errorf(store.CodeInvalidInput, 400, format, args...)
	e.Source = store.SourceClient
	return e
}

// WithThroughput turns on the throughput model (off by default): every
// entity read and write passes a token bucket of its partition and one of
// the store, as ThroughputLimits describes, and a request over either rate
// is refused with 503 ServerBusy (store.ErrThrottled, store.ErrTransient)
// before it does anything, exactly like the fault ServerBusy. Table, queue
// and blob operations are not limited.
//
// The buckets refill on the store's clock: with WithClock and a virtual
// clock, a test decides when time passes and runs the same every time.
// Store.Throughput reports what the model saw: per partition, requests,
// entities, refusals and the peak rate.
//
// memstore answers every refusal to the caller. azstore's retry policy
// resends a 503 up to 4 times (exponential backoff from 500 ms with
// jitter) before the caller sees it; code on memstore meets each refusal
// itself, which tests its retry handling. New panics with Validate's error
// when l is invalid.
func WithThroughput(l ThroughputLimits) Option {
	return func(o *options) {
		r, err := l.resolve()
		if err != nil {
			panic(err)
		}
		o.throughput = &r
	}
}

// PartitionStats is what the throughput model saw of one partition.
type PartitionStats struct {
	// Table and PartitionKey name the partition (Table as the requests
	// spelled it first).
	Table, PartitionKey string
	// Requests counts the requests that read or wrote the partition,
	// served or refused.
	Requests int64
	// Entities counts the entities the partition served (the tokens it
	// paid).
	Entities int64
	// Throttled counts the requests refused because the partition was over
	// its rate.
	Throttled int64
	// AccountThrottled counts the requests to the partition refused
	// because the store was over its rate.
	AccountThrottled int64
	// PeakRate is the most entities the partition served within any one
	// second (a window sliding in steps of 100 ms): up to the burst plus
	// the rate, a page more when a query paid after it ran.
	PeakRate int64
	// First and Last are the times of its first and last request.
	First, Last time.Time
}

// Hot reports whether the partition refused a request for being over its
// own rate.
func (p PartitionStats) Hot() bool { return p.Throttled > 0 }

// ThroughputReport is what the throughput model saw since the store was
// made.
type ThroughputReport struct {
	// Limits are the limits in force, defaults filled in; the zero value
	// when the model is off.
	Limits ThroughputLimits
	// Requests, Entities and Throttled count every entity request, the
	// entities served and the 503 answers; AccountThrottled is the part of
	// Throttled the store's bucket refused.
	Requests, Entities, Throttled, AccountThrottled int64
	// PeakRate is the most entities the store served within any one
	// second.
	PeakRate int64
	// Partitions lists every partition that was read or written, hottest
	// first: most refusals, then highest peak rate, then most entities,
	// then by table and PartitionKey.
	Partitions []PartitionStats
}

// Hot returns the partitions that refused requests for being over their
// own rate, hottest first.
func (r ThroughputReport) Hot() []PartitionStats {
	var hot []PartitionStats
	for _, p := range r.Partitions {
		if p.Hot() {
			hot = append(hot, p)
		}
	}
	return hot
}

// Throughput reports what the throughput model saw; the zero report when
// WithThroughput is not in effect.
func (s *Store) Throughput() ThroughputReport {
	m := s.model
	if m == nil {
		return ThroughputReport{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := ThroughputReport{Limits: m.limits, Requests: m.requests, Entities: m.account.served,
		Throttled: m.throttled, AccountThrottled: m.accountThrottled, PeakRate: m.account.peak}
	r.Partitions = make([]PartitionStats, 0, len(m.parts))
	for _, p := range m.parts {
		r.Partitions = append(r.Partitions, p.stats)
	}
	slices.SortFunc(r.Partitions, func(a, b PartitionStats) int {
		return cmp.Or(
			cmp.Compare(b.Throttled, a.Throttled),
			cmp.Compare(b.PeakRate, a.PeakRate),
			cmp.Compare(b.Entities, a.Entities),
			cmp.Compare(a.Table, b.Table),
			store.CompareOrdinal(a.PartitionKey, b.PartitionKey))
	})
	return r
}

// A token is a billionth of an entity, so refills are exact in integers:
// a rate of r entities per second adds r tokens per nanosecond.
const tokensPerEntity = int64(time.Second)

// window counts the entities served over the last second in ten slots of
// 100 ms, for the peak rate.
type window struct {
	slots  [10]int64
	at     int64 // index of the current slot since the model's origin
	sum    int64
	peak   int64
	served int64
}

const slotLength = 100 * time.Millisecond

func (w *window) add(slot, n int64) {
	if slot > w.at {
		for k := w.at + 1; k <= slot && k <= w.at+int64(len(w.slots)); k++ {
			w.sum -= w.slots[k%int64(len(w.slots))]
			w.slots[k%int64(len(w.slots))] = 0
		}
		w.at = slot
	}
	// A slot before the current one (the clock went back) counts in the
	// current one.
	w.slots[w.at%int64(len(w.slots))] += n
	w.sum += n
	w.served += n
	w.peak = max(w.peak, w.sum)
}

// bucket is a token bucket.
type bucket struct {
	tokens  int64 // may be negative: the debt of a query
	last    time.Time
	started bool
	window
}

// refill adds the tokens earned since the last refill, up to the burst. A
// new bucket starts full; a clock that goes back earns nothing.
func (b *bucket) refill(now time.Time, rate, burst int64) {
	full := burst * tokensPerEntity
	if !b.started {
		b.tokens, b.last, b.started = full, now, true
		return
	}
	if !now.After(b.last) {
		return
	}
	dt := int64(now.Sub(b.last)) // saturates at the largest Duration
	b.last = now
	if missing := full - b.tokens; dt >= missing/rate+1 {
		b.tokens = full
	} else {
		b.tokens += dt * rate
	}
}

// has reports whether the bucket holds n entities' tokens.
func (b *bucket) has(n int64) bool { return b.tokens >= n*tokensPerEntity }

// pay takes n entities' tokens, leaving at most one burst of debt.
func (b *bucket) pay(n, burst, slot int64) {
	b.tokens = max(b.tokens-n*tokensPerEntity, -burst*tokensPerEntity)
	b.add(slot, n)
}

type partKey struct{ table, pk string }

type partState struct {
	bucket
	stats PartitionStats
}

// throughputModel is the state of WithThroughput.
type throughputModel struct {
	limits ThroughputLimits

	mu                                    sync.Mutex
	origin                                time.Time // the first request's time: slot 0
	started                               bool
	account                               bucket
	parts                                 map[partKey]*partState
	requests, throttled, accountThrottled int64
}

func newThroughputModel(l ThroughputLimits) *throughputModel {
	return &throughputModel{limits: l, parts: make(map[partKey]*partState)}
}

// begin counts a request at now, refills the store's bucket and returns
// now's slot; m.mu is held.
func (m *throughputModel) begin(now time.Time) int64 {
	if !m.started {
		m.origin, m.started = now, true
	}
	m.requests++
	m.account.refill(now, int64(m.limits.AccountRate), int64(m.limits.AccountBurst))
	return m.slot(now)
}

// slot numbers the 100 ms slot of now since the first request.
func (m *throughputModel) slot(now time.Time) int64 {
	if !now.After(m.origin) {
		return 0
	}
	return int64(now.Sub(m.origin) / slotLength)
}

// part returns a partition's state, refilled; m.mu is held.
func (m *throughputModel) part(table, pk string, now time.Time) *partState {
	k := partKey{strings.ToLower(table), pk}
	p := m.parts[k]
	if p == nil {
		p = &partState{stats: PartitionStats{Table: table, PartitionKey: pk, First: now}}
		m.parts[k] = p
	}
	p.stats.Requests++
	p.stats.Last = now
	p.refill(now, int64(m.limits.PartitionRate), int64(m.limits.PartitionBurst))
	return p
}

// admit serves a request of cost entities to one partition, or refuses it
// with ServerBusy; the entities are paid when it is served. need is the
// tokens both buckets must hold: the cost, or 1 for a query whose cost is
// paid afterwards (admit is then called with cost 0).
func (m *throughputModel) admit(now time.Time, table, pk string, need, cost int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	slot := m.begin(now)
	p := m.part(table, pk, now)
	switch {
	case !p.has(need):
		m.throttled++
		p.stats.Throttled++
		return m.busy(table, pk, "partition", m.limits.PartitionRate)
	case !m.account.has(need):
		m.throttled++
		m.accountThrottled++
		p.stats.AccountThrottled++
		return m.busy(table, pk, "account", m.limits.AccountRate)
	}
	if cost > 0 {
		p.pay(cost, int64(m.limits.PartitionBurst), slot)
		p.stats.Entities, p.stats.PeakRate = p.served, p.peak
		m.account.pay(cost, int64(m.limits.AccountBurst), slot)
	}
	return nil
}

// admitAccount admits a query over several partitions: the store's bucket
// must hold a token.
func (m *throughputModel) admitAccount(now time.Time, table string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begin(now)
	if !m.account.has(1) {
		m.throttled++
		m.accountThrottled++
		return m.busy(table, "", "account", m.limits.AccountRate)
	}
	return nil
}

// pay charges a query's entities after it ran: each partition the entities
// it returned, the store all of them, at least one. The request counts for
// every partition it read from; when single is set, admit counted it for
// partition admitted already.
func (m *throughputModel) pay(now time.Time, table, admitted string, single bool, perPart map[string]int64, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	slot := m.slot(now)
	m.account.refill(now, int64(m.limits.AccountRate), int64(m.limits.AccountBurst))
	for pk, n := range perPart {
		var p *partState
		if single && pk == admitted && m.parts[partKey{strings.ToLower(table), pk}] != nil {
			p = m.parts[partKey{strings.ToLower(table), pk}]
			p.refill(now, int64(m.limits.PartitionRate), int64(m.limits.PartitionBurst))
		} else {
			p = m.part(table, pk, now)
		}
		p.pay(n, int64(m.limits.PartitionBurst), slot)
		p.stats.Entities, p.stats.PeakRate = p.served, p.peak
	}
	m.account.pay(max(total, 1), int64(m.limits.AccountBurst), slot)
}

func (m *throughputModel) busy(table, pk, scope string, rate int) *store.Error {
	if scope == "account" {
		return store.Errorf(store.CodeServerBusy, 503,
			"the server is busy: the account is over the throughput model's %d entities per second (memstore.WithThroughput)", rate)
	}
	return store.Errorf(store.CodeServerBusy, 503,
		"the server is busy: partition %q of table %q is over the throughput model's %d entities per second (memstore.WithThroughput)", pk, table, rate)
}

// The store's hooks. Each is a no-op when the model is off.

// admitWrite serves or refuses a checked write (one action or a
// transaction, all of one partition) before it touches any data.
func (s *Store) admitWrite(table string, actions []store.Action) error {
	if s.model == nil || len(actions) == 0 {
		return nil
	}
	n := int64(len(actions))
	return s.model.admit(s.opts.now(), table, actions[0].Entity.PartitionKey, n, n)
}

// admitGet serves or refuses a point read.
func (s *Store) admitGet(table, pk string) error {
	if s.model == nil {
		return nil
	}
	return s.model.admit(s.opts.now(), table, pk, 1, 1)
}

// admitQuery admits a query before it runs: one that reads a single
// partition needs a token in that partition's bucket, any query one in the
// store's.
func (s *Store) admitQuery(table string, plan filter.Plan) error {
	if s.model == nil {
		return nil
	}
	if pk, ok := singlePartition(plan); ok {
		return s.model.admit(s.opts.now(), table, pk, 1, 0)
	}
	return s.model.admitAccount(s.opts.now(), table)
}

// payQuery charges a query that ran for the records it returned; a query
// of a single partition that returned nothing pays one to that partition.
func (s *Store) payQuery(table string, plan filter.Plan, matched []record) {
	if s.model == nil {
		return
	}
	per := make(map[string]int64)
	for _, r := range matched {
		per[r.pk()]++
	}
	admitted, single := singlePartition(plan)
	if single && len(matched) == 0 {
		per[admitted] = 1
	}
	s.model.pay(s.opts.now(), table, admitted, single, per, int64(len(matched)))
}

// singlePartition returns the PartitionKey a plan is confined to.
func singlePartition(plan filter.Plan) (string, bool) {
	switch plan.Kind {
	case filter.PointQuery, filter.RowRange, filter.PartitionScan:
		if len(plan.Ranges) > 0 {
			return plan.Ranges[0].PKLow.Value, true
		}
	}
	return "", false
}
