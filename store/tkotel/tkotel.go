// Package tkotel is tablekit's OpenTelemetry instrumentation: spans for
// every request a store sends and for the operations of the layers above
// it (repository writes and queries, bulk loads, lost answers' resolution,
// pattern steps), and the metrics of a database client. It is the only
// package of tablekit that imports OpenTelemetry: a program that does not
// import it links none of it.
//
// Instrumentation is off unless a store is wrapped:
//
//	in, err := tkotel.New(tkotel.Options{TracerProvider: tp, MeterProvider: mp})
//	st = in.Store(st)
//
// For azstore, pass in.AzureProvider() as azstore.Options.TracingProvider
// so that azcore's HTTP spans (one per try) become children of tablekit's
// request spans. See docs/observability.md for the spans, their attributes
// and the metrics.
package tkotel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/intercept"
)

// ScopeName is the instrumentation scope of tablekit's tracer and meter.
const ScopeName = "github.com/tablekit/tablekit/store/tkotel"

// SystemName is the db.system.name of every span and metric.
const SystemName = "azure.table"

// Attribute keys. The db.* names are OpenTelemetry's semantic conventions
// for database clients; the tablekit.* names are tablekit's own.
const (
	AttrSystem     = attribute.Key("db.system.name")
	AttrOperation  = attribute.Key("db.operation.name")
	AttrCollection = attribute.Key("db.collection.name")
	AttrStatus     = attribute.Key("db.response.status_code")
	AttrBatchSize  = attribute.Key("db.operation.batch.size")
	AttrErrorType  = attribute.Key("error.type")
	// AttrOutcome is "done" (the call succeeded), "not_done" (it failed
	// and nothing was applied, or a read failed) or "unknown" (a write
	// that may or may not have been applied: store.ErrUnknownOutcome).
	AttrOutcome   = attribute.Key("tablekit.outcome")
	AttrRetries   = attribute.Key("tablekit.retries")
	AttrRequests  = attribute.Key("tablekit.requests")
	AttrThrottled = attribute.Key("tablekit.throttled")
	AttrRows      = attribute.Key("tablekit.rows")
	AttrQueue     = attribute.Key("messaging.destination.name")
)

// The outcomes of AttrOutcome.
const (
	OutcomeDone    = "done"
	OutcomeNotDone = "not_done"
	OutcomeUnknown = "unknown"
)

// Outcome is the outcome of a call that ended with err.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeDone
	case errors.Is(err, store.ErrUnknownOutcome):
		return OutcomeUnknown
	}
	return OutcomeNotDone
}

// Options choose where spans and metrics go.
type Options struct {
	// TracerProvider makes the tracer; nil takes otel's global one.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter; nil takes otel's global one.
	MeterProvider metric.MeterProvider
}

// Instrumentation traces and measures the stores it wraps. It is safe for
// concurrent use; one serves any number of stores.
type Instrumentation struct {
	tp        trace.TracerProvider
	tracer    trace.Tracer
	duration  metric.Float64Histogram
	retries   metric.Int64Counter
	throttles metric.Int64Counter
	unknown   metric.Int64Counter
	billed    metric.Int64Counter
	bulkRows  metric.Int64Counter
	bulkRate  metric.Float64Histogram
	meter     metric.Meter
	// queues keeps each queue's worker state for the observable gauges.
	queues sync.Map // name -> *queueState
	// ops keeps what the requests of an operation on a resource share.
	ops sync.Map // opKey -> *opInfo
	// layers keeps what the operations of a layer above share on a table.
	layers sync.Map // opKey -> *layerInfo
}

// New returns an Instrumentation that sends spans and metrics to the
// providers of o.
func New(o Options) (*Instrumentation, error) {
	tp, mp := o.TracerProvider, o.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	in := &Instrumentation{tp: tp, tracer: tp.Tracer(ScopeName)}
	m := mp.Meter(ScopeName)
	in.meter = m
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	in.duration, err = m.Float64Histogram("db.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of database client operations: one per call, a transaction (batch) as one, retries inside it."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10))
	add(err)
	in.retries, err = m.Int64Counter("tablekit.client.retries", metric.WithUnit("{request}"),
		metric.WithDescription("Requests sent again after a first try of the same call."))
	add(err)
	in.throttles, err = m.Int64Counter("tablekit.client.throttles", metric.WithUnit("{request}"),
		metric.WithDescription("Requests the service refused with 503 ServerBusy."))
	add(err)
	in.unknown, err = m.Int64Counter("tablekit.client.unknown_outcomes", metric.WithUnit("{call}"),
		metric.WithDescription("Writes whose outcome stayed unknown (store.ErrUnknownOutcome)."))
	add(err)
	in.billed, err = m.Int64Counter("tablekit.client.billed_transactions", metric.WithUnit("{transaction}"),
		metric.WithDescription("Billable storage transactions: every request that was answered, except a 503."))
	add(err)
	in.bulkRows, err = m.Int64Counter("tablekit.bulk.rows", metric.WithUnit("{row}"),
		metric.WithDescription("Rows a bulk load applied."))
	add(err)
	in.bulkRate, err = m.Float64Histogram("tablekit.bulk.throughput", metric.WithUnit("{row}/s"),
		metric.WithDescription("Rows per second of each bulk load."))
	add(err)
	lag, err := m.Float64ObservableGauge("tablekit.worker.lag", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest message a queue's worker received in its last receive."))
	add(err)
	inflight, err := m.Int64ObservableGauge("tablekit.worker.in_flight", metric.WithUnit("{message}"),
		metric.WithDescription("Messages a queue's workers received and have not deleted yet."))
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	_, err = m.RegisterCallback(func(_ context.Context, ob metric.Observer) error {
		in.queues.Range(func(k, v any) bool {
			q := v.(*queueState)
			set := metric.WithAttributeSet(attribute.NewSet(AttrSystem.String("azure.queue"), AttrQueue.String(k.(string))))
			ob.ObserveFloat64(lag, time.Duration(q.lag.Load()).Seconds(), set)
			ob.ObserveInt64(inflight, q.inFlight.Load(), set)
			return true
		})
		return nil
	}, lag, inflight)
	if err != nil {
		return nil, err
	}
	return in, nil
}

// Store returns st with its requests, and those of its tables, queues and
// containers, traced and measured. It keeps every capability of st (see
// store/intercept); its tables hand in to the layers above as their
// store.Observer.
func (in *Instrumentation) Store(st store.Store) store.Store {
	return intercept.Observe(in.queueStore(st), in.Hook, in)
}

// Table returns t traced and measured, as Store does for a store's tables.
func (in *Instrumentation) Table(t store.Table) store.Table {
	return intercept.ObserveTable(t, in.Hook, in)
}

// call is what Hook keeps of one call, in one allocation: the tries the
// backend reports (call is the call's driver.TryObserver), room for the
// span's closing attributes, and the context the call runs in, which marks
// it as one of in's requests (see inRequest).
type call struct {
	context.Context
	in                             *Instrumentation
	n, throttled, noAnswer, status atomic.Int64
	attrs                          [7]attribute.KeyValue
}

// callKey is the context key under which a call answers itself.
type callKey struct{}

func (c *call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *call) ObserveTry(tr driver.Try) {
	c.n.Add(1)
	c.status.Store(int64(tr.Status))
	switch tr.Status {
	case 503:
		c.throttled.Add(1)
	case 0:
		c.noAnswer.Add(1)
	}
}

// inRequest reports whether ctx is the context of one of in's requests
// (Hook), or of an operation started inside one.
func (in *Instrumentation) inRequest(ctx context.Context) bool {
	c, _ := ctx.Value(callKey{}).(*call)
	return c != nil && c.in == in
}

// Hook is in's intercept.Hook: a client span around the call, the
// duration histogram, and the counters of retries, throttles, unknown
// outcomes and billed transactions. Compose it with other hooks
// (intercept.Chain) where a store is wrapped for other ends too.
func (in *Instrumentation) Hook(ctx context.Context, c intercept.Call, do func(context.Context) error) error {
	info := in.opInfo(c.EntityOp(), c.Name)
	start := time.Now()
	ctx, span := in.tracer.Start(ctx, info.spanName, info.startOpts...)
	cl := &call{Context: ctx, in: in}
	err := do(driver.WithTryObserver(store.WithObserver(cl, in), cl))
	elapsed := time.Since(start)

	if cl.n.Load() == 0 {
		// The backend reported no try: one, unless nothing was sent.
		if s, sent := driver.TryStatus(err); sent {
			cl.ObserveTry(driver.Try{Status: s})
		}
	}
	n, throttled, lost := cl.n.Load(), cl.throttled.Load(), cl.noAnswer.Load()
	outcome := Outcome(err)
	retries := max(n-1, 0)
	var code string
	if err != nil {
		code = errorType(err)
	}
	if span.IsRecording() {
		attrs := append(cl.attrs[:0], AttrOutcome.String(outcome), AttrRequests.Int64(n), AttrRetries.Int64(retries), AttrThrottled.Int64(throttled))
		if status := cl.status.Load(); status != 0 {
			attrs = append(attrs, AttrStatus.Int64(status))
		}
		if c.Op == "Table.Transact" {
			attrs = append(attrs, AttrBatchSize.Int(len(c.Actions)))
		}
		if err != nil {
			attrs = append(attrs, AttrErrorType.String(code))
			// The error's code only: a message may quote keys or values.
			span.SetStatus(codes.Error, code)
		}
		span.SetAttributes(attrs...)
	}
	span.End()

	durationAttrs := info.done
	if err != nil {
		durationAttrs = info.failed(outcome, code)
	}
	in.duration.Record(ctx, elapsed.Seconds(), durationAttrs...)
	if retries > 0 {
		in.retries.Add(ctx, retries, info.short...)
	}
	if throttled > 0 {
		in.throttles.Add(ctx, throttled, info.short...)
	}
	if outcome == OutcomeUnknown {
		in.unknown.Add(ctx, 1, info.short...)
	}
	if billed := n - throttled - lost; billed > 0 {
		in.billed.Add(ctx, billed, info.short...)
	}
	return err
}

// opKey names the requests of one operation on one resource, or the
// operations of a layer above on one table.
type opKey struct{ op, name string }

// opInfo is what every request of an operation on a resource shares: the
// span's name and start options, and the metrics' attribute sets, made
// once. The options are slices, so that recording a measurement builds
// none.
type opInfo struct {
	spanName  string
	attrs     []attribute.KeyValue // system, operation, collection
	startOpts []trace.SpanStartOption
	short     []metric.AddOption    // system, operation, collection
	done      []metric.RecordOption // the same and the outcome done
	// errs holds the duration's options of a failed call by its outcome
	// and error type.
	errs sync.Map // errKey -> []metric.RecordOption
}

type errKey struct{ outcome, code string }

func (in *Instrumentation) opInfo(op, name string) *opInfo {
	k := opKey{op, name}
	if v, ok := in.ops.Load(k); ok {
		return v.(*opInfo)
	}
	info := &opInfo{spanName: op}
	info.attrs = []attribute.KeyValue{AttrSystem.String(SystemName), AttrOperation.String(op)}
	if name != "" {
		info.spanName = op + " " + name
		info.attrs = append(info.attrs, AttrCollection.String(name))
	}
	info.startOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(info.attrs...)}
	info.short = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(info.attrs...))}
	info.done = []metric.RecordOption{info.with(AttrOutcome.String(OutcomeDone))}
	v, _ := in.ops.LoadOrStore(k, info)
	return v.(*opInfo)
}

// with is the attribute set of info's requests with more attributes.
func (info *opInfo) with(more ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(append(info.attrs[:len(info.attrs):len(info.attrs)], more...)...))
}

// failed returns the duration's options of a call that failed with the
// outcome and error type given.
func (info *opInfo) failed(outcome, code string) []metric.RecordOption {
	k := errKey{outcome, code}
	if v, ok := info.errs.Load(k); ok {
		return v.([]metric.RecordOption)
	}
	opts := []metric.RecordOption{info.with(AttrOutcome.String(outcome), AttrErrorType.String(code))}
	v, _ := info.errs.LoadOrStore(k, opts)
	return v.([]metric.RecordOption)
}

// errorType is the error's store code, or "_OTHER".
func errorType(err error) string {
	var se *store.Error
	if errors.As(err, &se) && se.Code != "" {
		return se.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "Canceled"
	}
	return "_OTHER"
}

// layerInfo is what the operations of a layer above share on one table:
// the span's start options and the bulk metrics' attribute set.
type layerInfo struct {
	startOpts []trace.SpanStartOption
	bulk      []metric.AddOption
	bulkRate  []metric.RecordOption
}

func (in *Instrumentation) layerInfo(name, table string) *layerInfo {
	k := opKey{name, table}
	if v, ok := in.layers.Load(k); ok {
		return v.(*layerInfo)
	}
	attrs := []attribute.KeyValue{AttrSystem.String(SystemName)}
	if table != "" {
		attrs = append(attrs, AttrCollection.String(table))
	}
	// The options have room for one more: a batch's size.
	info := &layerInfo{startOpts: make([]trace.SpanStartOption, 2, 3)}
	info.startOpts[0] = trace.WithSpanKind(trace.SpanKindInternal)
	info.startOpts[1] = trace.WithAttributes(attrs...)
	set := metric.WithAttributeSet(attribute.NewSet(AttrSystem.String(SystemName), AttrCollection.String(table)))
	info.bulk = []metric.AddOption{set}
	info.bulkRate = []metric.RecordOption{set}
	v, _ := in.layers.LoadOrStore(k, info)
	return v.(*layerInfo)
}

// Start implements store.Observer: an internal span for an operation of
// a layer above the store, the parent of the requests it makes.
func (in *Instrumentation) Start(ctx context.Context, op store.Operation) (context.Context, store.Finisher) {
	info := in.layerInfo(op.Name, op.Table)
	opts := info.startOpts
	if op.Batch > 0 {
		opts = append(opts[:len(opts):len(opts)], trace.WithAttributes(AttrBatchSize.Int(op.Batch)))
	}
	start := time.Now()
	ctx, span := in.tracer.Start(ctx, op.Name, opts...)
	return ctx, &finisher{in: in, info: info, ctx: ctx, span: span, bulk: op.Name == "store.Bulk", start: start}
}

type finisher struct {
	in    *Instrumentation
	info  *layerInfo
	ctx   context.Context
	span  trace.Span
	bulk  bool
	start time.Time
	attrs [2]attribute.KeyValue
}

func (f *finisher) Finish(err error, rows int) {
	if f.span.IsRecording() {
		attrs := append(f.attrs[:0], AttrOutcome.String(Outcome(err)))
		if rows > 0 {
			attrs = append(attrs, AttrRows.Int(rows))
		}
		f.span.SetAttributes(attrs...)
		if err != nil {
			f.span.SetStatus(codes.Error, errorType(err))
		}
	}
	f.span.End()
	if f.bulk && rows > 0 {
		f.in.bulkRows.Add(f.ctx, int64(rows), f.info.bulk...)
		if s := time.Since(f.start).Seconds(); s > 0 {
			f.in.bulkRate.Record(f.ctx, float64(rows)/s, f.info.bulkRate...)
		}
	}
}

var _ store.Observer = (*Instrumentation)(nil)

// queueState is what the gauges show of one queue's workers.
type queueState struct {
	lag      atomic.Int64 // nanoseconds
	inFlight atomic.Int64
}

func (in *Instrumentation) queue(name string) *queueState {
	v, ok := in.queues.Load(name)
	if !ok {
		v, _ = in.queues.LoadOrStore(name, &queueState{})
	}
	return v.(*queueState)
}

// queueStore returns st with its queues followed for the worker gauges,
// keeping store.ACLStore.
func (in *Instrumentation) queueStore(st store.Store) store.Store {
	qs := queueStore{Store: st, in: in}
	if acl, ok := st.(store.ACLStore); ok {
		return queueACLStore{qs, acl}
	}
	return qs
}

type queueStore struct {
	store.Store
	in *Instrumentation
}

func (s queueStore) Queue(name string) store.Queue {
	return followedQueue{Queue: s.Store.Queue(name), q: s.in.queue(name)}
}

type queueACLStore struct {
	queueStore
	acl store.ACLStore
}

func (s queueACLStore) GetAccessPolicy(ctx context.Context, table string) ([]store.SignedIdentifier, error) {
	return s.acl.GetAccessPolicy(ctx, table)
}

func (s queueACLStore) SetAccessPolicy(ctx context.Context, table string, ids []store.SignedIdentifier) error {
	return s.acl.SetAccessPolicy(ctx, table, ids)
}

// followedQueue records a queue's receives (their count and the age of
// the oldest message) and deletes for the gauges.
type followedQueue struct {
	store.Queue
	q *queueState
}

func (f followedQueue) Get(ctx context.Context, n int, visibility time.Duration) ([]store.Message, error) {
	msgs, err := f.Queue.Get(ctx, n, visibility)
	if err != nil {
		return msgs, err
	}
	var oldest time.Duration
	now := time.Now()
	for _, m := range msgs {
		if age := now.Sub(m.InsertionTime); age > oldest {
			oldest = age
		}
	}
	f.q.lag.Store(int64(oldest))
	f.q.inFlight.Add(int64(len(msgs)))
	return msgs, nil
}

func (f followedQueue) DeleteMessage(ctx context.Context, id, popReceipt string) error {
	err := f.Queue.DeleteMessage(ctx, id, popReceipt)
	if err == nil && f.q.inFlight.Add(-1) < 0 {
		f.q.inFlight.Store(0)
	}
	return err
}
