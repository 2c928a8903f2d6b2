package tkotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/meter"
	"github.com/tablekit/tablekit/store/tkotel"
)

// otelKit is an in-memory OpenTelemetry: spans in a recorder, metrics
// read by hand.
type otelKit struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	in     *tkotel.Instrumentation
}

func newKit(t testing.TB) *otelKit {
	k := &otelKit{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	k.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	in, err := tkotel.New(tkotel.Options{TracerProvider: k.tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	k.in = in
	return k
}

// metrics collects the metrics by name.
func (k *otelKit) metrics(t testing.TB) map[string]metricdata.Aggregation {
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sum adds up a counter's points.
func sum(a metricdata.Aggregation) int64 {
	var n int64
	if s, ok := a.(metricdata.Sum[int64]); ok {
		for _, p := range s.DataPoints {
			n += p.Value
		}
	}
	return n
}

// histCount counts a histogram's measurements whose attributes keep
// accepts.
func histCount(a metricdata.Aggregation, keep func(attribute.Set) bool) uint64 {
	var n uint64
	if h, ok := a.(metricdata.Histogram[float64]); ok {
		for _, p := range h.DataPoints {
			if keep == nil || keep(p.Attributes) {
				n += p.Count
			}
		}
	}
	return n
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// faultPlan is memstore's fault schedule, which memstore asks once per
// request: it counts the requests, as a transport would, and hands out
// the faults injected.
type faultPlan struct {
	requests atomic.Int64
	mu       sync.Mutex
	plan     map[memstore.Operation][]error
}

func (f *faultPlan) faults(op memstore.Operation, table string) error {
	f.requests.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.plan[op]; len(q) > 0 {
		f.plan[op] = q[1:]
		return q[0]
	}
	return nil
}

func (f *faultPlan) inject(op memstore.Operation, errs ...error) {
	f.mu.Lock()
	f.plan[op] = append(f.plan[op], errs...)
	f.mu.Unlock()
}

// Order is the mapped row of the workload.
type Order struct {
	Customer string     `table:",pk"`
	ID       string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	Total    int64
}

const table = "Orders"

// run is the scripted workload, on any backend; inject schedules faults
// (nil: none can be injected, the fault steps are skipped).
func run(t *testing.T, st store.Store, inject func(memstore.Operation, ...error)) {
	t.Helper()
	runOn(t, st, table, inject)
}

func runOn(t *testing.T, st store.Store, table string, inject func(memstore.Operation, ...error)) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.CreateTableIfNotExists(ctx, table); err != nil {
		t.Fatal(err)
	}
	repo := mapper.NewRepository[Order](st, table, mapper.WithPageSize(6))
	for i := range 5 {
		if err := repo.Insert(ctx, &Order{Customer: "c", ID: fmt.Sprintf("a%02d", i), Total: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	b := repo.Batch()
	for i := range 10 {
		b.Insert(&Order{Customer: "c", ID: fmt.Sprintf("b%02d", i)})
	}
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, err := range repo.Query(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		rows++
	}
	if rows != 15 {
		t.Fatalf("query read %d rows, want 15", rows)
	}
	var bulk []store.Action
	for i := range 30 {
		bulk = append(bulk, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "bulk", RowKey: fmt.Sprintf("r%03d", i)}})
	}
	if res, err := store.NewBulkWriter(st.Table(table), store.BulkOptions{}).Write(ctx, bulk); err != nil || res.Written != 30 {
		t.Fatalf("bulk: %+v %v", res.Written, err)
	}
	if inject == nil {
		return
	}
	// A throttled insert: refused, not billed, not retried here.
	inject(memstore.OpInsert, memstore.ServerBusy())
	if err := repo.Insert(ctx, &Order{Customer: "c", ID: "busy"}); !errors.Is(err, store.ErrThrottled) {
		t.Fatalf("throttled insert: %v", err)
	}
	// An upsert answered with a 500: idempotent, sent again.
	inject(memstore.OpUpsert, memstore.InternalError())
	if err := repo.Upsert(ctx, &Order{Customer: "c", ID: "u"}, store.Merge); err != nil {
		t.Fatalf("retried upsert: %v", err)
	}
	// An insert whose answer is lost after it applied: settled by a
	// read-back, which finds it.
	inject(memstore.OpInsert, memstore.AfterApply(memstore.ResponseLost()))
	if err := repo.Insert(ctx, &Order{Customer: "c", ID: "lost"}); err != nil {
		t.Fatalf("lost insert: %v", err)
	}
	// An insert answered with a 500 whose read-back fails too: the
	// outcome stays unknown.
	inject(memstore.OpInsert, memstore.InternalError())
	inject(memstore.OpGet, memstore.InternalError(), memstore.InternalError(), memstore.InternalError(), memstore.InternalError())
	if err := repo.Insert(ctx, &Order{Customer: "c", ID: "unknown"}); !errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("unknown insert: %v", err)
	}
	inject(memstore.OpGet) // nothing left over
}

func TestSpansMetricsAndMeterMemstore(t *testing.T) {
	k := newKit(t)
	fp := &faultPlan{plan: map[memstore.Operation][]error{}}
	st, m := meter.Wrap(k.in.Store(memstore.New(memstore.WithFaults(fp.faults))))
	run(t, st, fp.inject)
	fp.mu.Lock()
	clear(fp.plan)
	fp.mu.Unlock()

	total := m.Total()
	t.Logf("\n%s", m)
	if total.Requests != fp.requests.Load() {
		t.Errorf("meter: %d requests, memstore served %d", total.Requests, fp.requests.Load())
	}
	spans := k.spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	parent := func(s sdktrace.ReadOnlySpan) string {
		if p, ok := byID[s.Parent().SpanID()]; ok {
			return p.Name()
		}
		return ""
	}

	// Every request span's requests add up to the transport's.
	var requests int64
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindClient {
			v, _ := attr(s, tkotel.AttrRequests)
			requests += v.AsInt64()
			if sys, _ := attr(s, tkotel.AttrSystem); sys.AsString() != "azure.table" {
				t.Errorf("%s: db.system.name %q", s.Name(), sys.AsString())
			}
		}
	}
	if requests != fp.requests.Load() {
		t.Errorf("request spans count %d requests, memstore served %d", requests, fp.requests.Load())
	}

	// Repository writes are parents of their requests.
	inserts := spansNamed(spans, "mapper.Insert")
	if len(inserts) != 8 {
		t.Errorf("%d mapper.Insert spans, want 8", len(inserts))
	}
	for _, s := range spansNamed(spans, "Table.Insert "+table) {
		if p := parent(s); p != "mapper.Insert" {
			t.Errorf("Table.Insert's parent is %q", p)
		}
	}
	// A batch is one request with its size.
	tx := spansNamed(spans, "Table.Transact "+table)
	var sizes []int64
	for _, s := range tx {
		v, _ := attr(s, tkotel.AttrBatchSize)
		sizes = append(sizes, v.AsInt64())
	}
	if fmt.Sprint(sizes) != "[10 30]" {
		t.Errorf("transaction batch sizes %v, want [10 30] (the batch, the bulk load)", sizes)
	}
	// The query's three pages are children of the repository's query.
	pages := spansNamed(spans, "Table.Query "+table)
	if len(pages) != 3 {
		t.Errorf("%d page spans, want 3", len(pages))
	}
	for _, s := range pages {
		if p := parent(s); p != "mapper.Query" {
			t.Errorf("a page's parent is %q", p)
		}
	}
	if q := spansNamed(spans, "mapper.Query"); len(q) != 1 {
		t.Errorf("%d mapper.Query spans", len(q))
	} else if v, _ := attr(q[0], tkotel.AttrRows); v.AsInt64() != 15 {
		t.Errorf("mapper.Query rows %d", v.AsInt64())
	}
	// The bulk load is the parent of its transaction.
	if bl := spansNamed(spans, "store.Bulk"); len(bl) != 1 {
		t.Errorf("%d store.Bulk spans", len(bl))
	} else if v, _ := attr(bl[0], tkotel.AttrRows); v.AsInt64() != 30 {
		t.Errorf("store.Bulk rows %d", v.AsInt64())
	}
	if p := parent(tx[len(tx)-1]); p != "store.Bulk" {
		t.Errorf("the bulk load's transaction's parent is %q", p)
	}
	// Outcomes, retries, throttles.
	outcomes := map[string]int{}
	for _, s := range spansNamed(spans, "Table.Insert "+table) {
		v, _ := attr(s, tkotel.AttrOutcome)
		outcomes[v.AsString()]++
	}
	if fmt.Sprint(outcomes) != "map[done:6 not_done:1 unknown:1]" {
		t.Errorf("insert outcomes %v", outcomes)
	}
	up := spansNamed(spans, "Table.Upsert "+table)
	if len(up) != 1 {
		t.Fatalf("%d upsert spans", len(up))
	}
	if v, _ := attr(up[0], tkotel.AttrRetries); v.AsInt64() != 1 {
		t.Errorf("upsert retries %d, want 1", v.AsInt64())
	}
	// Lost answers are settled inside memstore, under the request.
	settles := spansNamed(spans, "driver.Settle")
	if len(settles) != 2 {
		t.Errorf("%d driver.Settle spans, want 2", len(settles))
	}
	for _, s := range settles {
		if p := parent(s); p != "Table.Insert "+table {
			t.Errorf("driver.Settle's parent is %q", p)
		}
	}
	// No span carries an error message: only codes.
	for _, s := range spans {
		if strings.Contains(s.Status().Description, " ") {
			t.Errorf("%s: status description %q", s.Name(), s.Status().Description)
		}
	}

	ms := k.metrics(t)
	calls := histCount(ms["db.client.operation.duration"], nil)
	if int64(calls) != total.Calls {
		t.Errorf("duration histogram: %d calls, meter %d", calls, total.Calls)
	}
	if n := histCount(ms["db.client.operation.duration"], func(s attribute.Set) bool {
		v, _ := s.Value(tkotel.AttrOperation)
		return v.AsString() == "Table.Transact"
	}); n != 2 {
		t.Errorf("transactions measured %d times, want 2", n)
	}
	if n := sum(ms["tablekit.client.billed_transactions"]); n != total.Billed {
		t.Errorf("billed metric %d, meter %d", n, total.Billed)
	}
	if n := sum(ms["tablekit.client.retries"]); n != total.Retries() {
		t.Errorf("retries metric %d, meter %d", n, total.Retries())
	}
	if n := sum(ms["tablekit.client.throttles"]); n != 1 || total.Throttled != 1 {
		t.Errorf("throttles metric %d, meter %d, want 1", n, total.Throttled)
	}
	if n := sum(ms["tablekit.client.unknown_outcomes"]); n != 1 {
		t.Errorf("unknown outcomes %d, want 1", n)
	}
	if n := sum(ms["tablekit.bulk.rows"]); n != 30 {
		t.Errorf("bulk rows %d, want 30", n)
	}
}

// The wrapped store keeps the typed lane, and the repository takes it.
func TestKeepsCapabilities(t *testing.T) {
	k := newKit(t)
	st := k.in.Store(memstore.New())
	if _, ok := driver.Typed(st.Table("Things")); !ok {
		t.Error("the instrumented table lost the typed lane")
	}
	if _, ok := st.(store.ACLStore); !ok {
		t.Error("the instrumented store lost store.ACLStore")
	}
	if store.ObserverOf(st.Table("Things")) == nil {
		t.Error("the instrumented table has no Observer")
	}
	if store.ObserverOf(memstore.New().Table("Things")) != nil {
		t.Error("a plain table has an Observer")
	}
}

// A queue's receives feed the worker gauges.
func TestWorkerGauges(t *testing.T) {
	k := newKit(t)
	st := k.in.Store(memstore.New())
	ctx := context.Background()
	q := st.Queue("jobs")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := q.Put(ctx, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := q.Get(ctx, 2, time.Minute)
	if err != nil || len(msgs) != 2 {
		t.Fatal(len(msgs), err)
	}
	if err := q.DeleteMessage(ctx, msgs[0].ID, msgs[0].PopReceipt); err != nil {
		t.Fatal(err)
	}
	g, ok := k.metrics(t)["tablekit.worker.in_flight"].(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value != 1 {
		t.Errorf("in flight: %+v", g)
	}
	if _, ok := k.metrics(t)["tablekit.worker.lag"].(metricdata.Gauge[float64]); !ok {
		t.Error("no lag gauge")
	}
}
