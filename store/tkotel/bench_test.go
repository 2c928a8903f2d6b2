package tkotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/meter"
	"github.com/tablekit/tablekit/store/tkotel"
)

// discard is a span exporter that drops what it is handed, so that the
// benchmark pays for spans up to their export and not for an exporter.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// sdkProviders returns the providers of the benchmarks' "SDK on": every
// span sampled into a batching processor with a discarding exporter,
// metrics aggregated for a manual reader.
func sdkProviders(b *testing.B) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
}

// bareSDK makes, around an operation, the calls of the OpenTelemetry API
// that a traced request makes, with no tablekit code in between: the
// baseline of the SDK's own cost. One span stands for tablekit's request
// span (its start attributes, the four or five it ends with, the duration
// and billed measurements with attribute sets made once); a second, inside
// it, for azcore's HTTP span (its start attributes as azcore gives them,
// the status code and the service's request id set at the end).
type bareSDK struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	billed   metric.Int64Counter
	start    []trace.SpanStartOption
	done     []metric.RecordOption
	short    []metric.AddOption
}

func newBareSDK(b *testing.B, tp trace.TracerProvider, mp metric.MeterProvider) *bareSDK {
	m := mp.Meter("tablekit-bench-bare-sdk")
	duration, err := m.Float64Histogram("db.client.operation.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10))
	if err != nil {
		b.Fatal(err)
	}
	billed, err := m.Int64Counter("tablekit.client.billed_transactions")
	if err != nil {
		b.Fatal(err)
	}
	attrs := []attribute.KeyValue{tkotel.AttrSystem.String(tkotel.SystemName), tkotel.AttrOperation.String("Table.Get"), tkotel.AttrCollection.String("Orders")}
	return &bareSDK{
		tracer:   tp.Tracer("tablekit-bench-bare-sdk"),
		duration: duration,
		billed:   billed,
		start:    []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)},
		done:     []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(attrs, tkotel.AttrOutcome.String(tkotel.OutcomeDone))...))},
		short:    []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrs...))},
	}
}

// around runs op inside spans (1 or 2) and records the two measurements.
func (s *bareSDK) around(ctx context.Context, spans int, op func(context.Context) error) error {
	start := time.Now()
	ctx, span := s.tracer.Start(ctx, "Table.Get Orders", s.start...)
	var err error
	if spans > 1 {
		hctx, h := s.tracer.Start(ctx, "HTTP GET", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("http.method", "GET"),
			attribute.String("http.url", "http://127.0.0.1:10002/devstoreaccount1/Orders(PartitionKey='c',RowKey='o0001')"),
			attribute.String("net.peer.name", "127.0.0.1:10002"),
			attribute.String("http.user_agent", "azsdk-go-aztables/v1.4.0 (go1.26; linux)"),
			attribute.String("az.client_request_id", "6a8e1c1e-3a0b-4d2c-9b7e-2f5d8c1a9e01"),
			attribute.String("az.namespace", "Microsoft.Tables")))
		err = op(hctx)
		h.SetAttributes(attribute.Int("http.status_code", 200))
		h.SetAttributes(attribute.String("az.service_request_id", "1f0e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"))
		h.End()
	} else {
		err = op(ctx)
	}
	elapsed := time.Since(start)
	span.SetAttributes(tkotel.AttrOutcome.String(tkotel.OutcomeDone), tkotel.AttrRequests.Int64(1), tkotel.AttrRetries.Int64(0),
		tkotel.AttrThrottled.Int64(0), tkotel.AttrStatus.Int64(200))
	span.End()
	s.duration.Record(ctx, elapsed.Seconds(), s.done...)
	s.billed.Add(ctx, 1, s.short...)
	return err
}

// benchRepos are repositories over one table of Azurite: plain
// (instrumentation off), metered, traced through no-op providers, traced
// and measured by the SDK with tablekit's spans only and with azcore's
// HTTP spans too (in.AzureProvider), and the SDK's calls alone (bare),
// also on a provider with no span processor (bareNoProc).
type benchRepos struct {
	plain, metered, noop, own, on *mapper.Repository[Order]
	bare, bareNoProc              *bareSDK
}

func newBenchRepos(b *testing.B) benchRepos {
	conn := azuritetest.Conn(b)
	open := func(o *azstore.Options) store.Store {
		st, err := azstore.NewFromConnectionString(conn, o)
		if err != nil {
			b.Fatal(err)
		}
		return st
	}
	base := open(nil)
	name := fmt.Sprintf("otelbench%d", time.Now().UnixNano()%1e9)
	if err := base.CreateTable(b.Context(), name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = base.DeleteTable(context.Background(), name) })

	mst, _ := meter.Wrap(open(nil))
	nin, err := tkotel.New(tkotel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
	if err != nil {
		b.Fatal(err)
	}
	tp, mp := sdkProviders(b)
	in, err := tkotel.New(tkotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	return benchRepos{
		plain:   mapper.NewRepository[Order](base, name),
		metered: mapper.NewRepository[Order](mst, name),
		noop:    mapper.NewRepository[Order](nin.Store(open(&azstore.Options{TracingProvider: nin.AzureProvider()})), name),
		own:     mapper.NewRepository[Order](in.Store(open(nil)), name),
		on:      mapper.NewRepository[Order](in.Store(open(&azstore.Options{TracingProvider: in.AzureProvider()})), name),
		bare:    newBareSDK(b, tp, mp),
		bareNoProc: newBareSDK(b, sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
			sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))),
	}
}

// BenchmarkTracingPointGetInterleaved measures a repository's point get
// on Azurite with instrumentation off (the baseline), metered, traced
// through no-op providers, and traced and measured by the SDK, in
// interleaved rounds, beside the plain get inside the SDK's calls alone
// (one span, and two as with azcore's, also with no span processor); the
// CPU column is the client's own cost.
func BenchmarkTracingPointGetInterleaved(b *testing.B) {
	r := newBenchRepos(b)
	ctx := b.Context()
	const n = 100
	keys := make([][2]string, n)
	for i := range n {
		keys[i] = [2]string{fmt.Sprintf("c%d", i%4), fmt.Sprintf("o%04d", i)}
		if err := r.plain.Insert(ctx, &Order{Customer: keys[i][0], ID: keys[i][1], Total: int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	get := func(r *mapper.Repository[Order]) func(int) error {
		return func(i int) error {
			k := keys[i%n]
			_, err := r.Get(ctx, k[0], k[1])
			return err
		}
	}
	bare := func(s *bareSDK, spans int) func(int) error {
		return func(i int) error {
			k := keys[i%n]
			return s.around(ctx, spans, func(ctx context.Context) error {
				_, err := r.plain.Get(ctx, k[0], k[1])
				return err
			})
		}
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: 500 * time.Millisecond, CollectGarbage: true},
		interleave.Case{Name: "off", Op: get(r.plain)},
		interleave.Case{Name: "meter", Op: get(r.metered)},
		interleave.Case{Name: "tkotel/noop-providers", Op: get(r.noop)},
		interleave.Case{Name: "sdk-alone/1-span", Op: bare(r.bare, 1)},
		interleave.Case{Name: "tkotel/sdk-on-tablekit-spans", Op: get(r.own)},
		interleave.Case{Name: "sdk-alone/2-spans", Op: bare(r.bare, 2)},
		interleave.Case{Name: "sdk-alone/2-spans-no-processor", Op: bare(r.bareNoProc, 2)},
		interleave.Case{Name: "tkotel/sdk-on", Op: get(r.on)},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}

// BenchmarkSeamOff is what instrumentation that is off costs a request:
// the mapper's check for an observer on a table that has none, and a
// backend's report of a try with no observer installed in the process.
// Run it alone: once any test installs an observer, ReportTry looks the
// context up.
func BenchmarkSeamOff(b *testing.B) {
	tbl := memstore.New().Table("Orders")
	ctx := context.Background()
	for b.Loop() {
		_, fin := store.Observe(ctx, tbl, store.Operation{Name: "mapper.Insert", Table: tbl.Name()})
		driver.ReportTryErr(ctx, nil)
		fin.Finish(nil, 0)
	}
}

// BenchmarkMemstorePointGetInterleaved is the same comparison on memstore,
// where nothing hides the instrumentation's own CPU behind a server's:
// off, metered, the plain get inside the SDK's calls alone (one span and
// two measurements, as tkotel makes them), and tkotel with the SDK on,
// sampling every trace and one in a hundred.
func BenchmarkMemstorePointGetInterleaved(b *testing.B) {
	ms := memstore.New()
	ctx := b.Context()
	if err := ms.CreateTable(ctx, "Orders"); err != nil {
		b.Fatal(err)
	}
	mst, _ := meter.Wrap(ms)
	tp, mp := sdkProviders(b)
	in, err := tkotel.New(tkotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	bareSDK := newBareSDK(b, tp, mp)
	// The same with one trace in a hundred sampled.
	tps := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.TraceIDRatioBased(0.01)), sdktrace.WithBatcher(discard{}))
	b.Cleanup(func() { _ = tps.Shutdown(context.Background()) })
	ins, err := tkotel.New(tkotel.Options{TracerProvider: tps, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	plain := mapper.NewRepository[Order](ms, "Orders")
	metered := mapper.NewRepository[Order](mst, "Orders")
	on := mapper.NewRepository[Order](in.Store(ms), "Orders")
	sampled := mapper.NewRepository[Order](ins.Store(ms), "Orders")
	const n = 100
	keys := make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("o%04d", i)
		if err := plain.Insert(ctx, &Order{Customer: "c", ID: keys[i]}); err != nil {
			b.Fatal(err)
		}
	}
	get := func(r *mapper.Repository[Order]) func(int) error {
		return func(i int) error {
			_, err := r.Get(ctx, "c", keys[i%n])
			return err
		}
	}
	bare := func(i int) error {
		return bareSDK.around(ctx, 1, func(ctx context.Context) error {
			_, err := plain.Get(ctx, "c", keys[i%n])
			return err
		})
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: 50 * time.Millisecond},
		interleave.Case{Name: "off", Op: get(plain)},
		interleave.Case{Name: "meter", Op: get(metered)},
		interleave.Case{Name: "sdk-alone/1-span", Op: bare},
		interleave.Case{Name: "tkotel/sdk-on", Op: get(on)},
		interleave.Case{Name: "tkotel/sdk-on-1%-sampled", Op: get(sampled)},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}

// BenchmarkSDKSpanInterleaved is the OpenTelemetry SDK's own cost of a
// span, with no tablekit code: a bare span started and ended with every
// span sampled and no processor (the baseline), and with the batching
// processor of the benchmarks above (its snapshot of each span, its queue
// and the goroutine that drains it).
func BenchmarkSDKSpanInterleaved(b *testing.B) {
	ctx := b.Context()
	span := func(tp trace.TracerProvider) func(int) error {
		tr := tp.Tracer("tablekit-bench-bare-sdk")
		return func(int) error {
			_, s := tr.Start(ctx, "Table.Get Orders")
			s.End()
			return nil
		}
	}
	bare := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	batched, _ := sdkProviders(b)
	rep, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: 50 * time.Millisecond},
		interleave.Case{Name: "span, no processor", Op: span(bare)},
		interleave.Case{Name: "span, batching processor", Op: span(batched)},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}
