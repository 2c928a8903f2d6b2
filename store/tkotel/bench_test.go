package tkotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/meter"
	"github.com/tablekit/tablekit/store/tkotel"
)

// discard is a span exporter that drops what it is handed, so that the
// benchmark pays for spans up to their export and not for an exporter.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// benchRepos returns repositories over one table of Azurite: plain
// (instrumentation off), metered, traced through no-op providers, and
// traced and measured by the SDK (every span sampled and batched to a
// discarding exporter, metrics aggregated for a reader, azcore's HTTP
// spans too), and the same without azcore's spans (tablekit's own).
func benchRepos(b *testing.B) (plain, metered, noop, own, on *mapper.Repository[Order]) {
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
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	in, err := tkotel.New(tkotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	return mapper.NewRepository[Order](base, name),
		mapper.NewRepository[Order](mst, name),
		mapper.NewRepository[Order](nin.Store(open(&azstore.Options{TracingProvider: nin.AzureProvider()})), name),
		mapper.NewRepository[Order](in.Store(open(nil)), name),
		mapper.NewRepository[Order](in.Store(open(&azstore.Options{TracingProvider: in.AzureProvider()})), name)
}

// BenchmarkTracingPointGetInterleaved measures a repository's point get
// on Azurite with instrumentation off (the baseline), metered, traced
// through no-op providers, and traced and measured by the SDK, in
// interleaved rounds; the CPU column is the client's own cost.
func BenchmarkTracingPointGetInterleaved(b *testing.B) {
	plain, metered, noop, own, on := benchRepos(b)
	ctx := b.Context()
	const n = 100
	for i := range n {
		if err := plain.Insert(ctx, &Order{Customer: fmt.Sprintf("c%d", i%4), ID: fmt.Sprintf("o%04d", i), Total: int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	get := func(r *mapper.Repository[Order]) func(int) error {
		return func(i int) error {
			i %= n
			_, err := r.Get(ctx, fmt.Sprintf("c%d", i%4), fmt.Sprintf("o%04d", i))
			return err
		}
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 41, Slice: 150 * time.Millisecond, CollectGarbage: true},
		interleave.Case{Name: "off", Op: get(plain)},
		interleave.Case{Name: "meter", Op: get(metered)},
		interleave.Case{Name: "tkotel/noop-providers", Op: get(noop)},
		interleave.Case{Name: "tkotel/sdk-on-tablekit-spans", Op: get(own)},
		interleave.Case{Name: "tkotel/sdk-on", Op: get(on)},
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
		store.ReportTryErr(ctx, nil)
		fin.Finish(nil, 0)
	}
}

// BenchmarkMemstorePointGetInterleaved is the same comparison on memstore,
// where nothing hides the instrumentation's own CPU behind a server's.
func BenchmarkMemstorePointGetInterleaved(b *testing.B) {
	ms := memstore.New()
	ctx := b.Context()
	if err := ms.CreateTable(ctx, "Orders"); err != nil {
		b.Fatal(err)
	}
	mst, _ := meter.Wrap(ms)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	in, err := tkotel.New(tkotel.Options{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))})
	if err != nil {
		b.Fatal(err)
	}
	plain := mapper.NewRepository[Order](ms, "Orders")
	metered := mapper.NewRepository[Order](mst, "Orders")
	on := mapper.NewRepository[Order](in.Store(ms), "Orders")
	const n = 100
	for i := range n {
		if err := plain.Insert(ctx, &Order{Customer: "c", ID: fmt.Sprintf("o%04d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	get := func(r *mapper.Repository[Order]) func(int) error {
		return func(i int) error {
			_, err := r.Get(ctx, "c", fmt.Sprintf("o%04d", i%n))
			return err
		}
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: 50 * time.Millisecond},
		interleave.Case{Name: "off", Op: get(plain)},
		interleave.Case{Name: "meter", Op: get(metered)},
		interleave.Case{Name: "tkotel/sdk-on", Op: get(on)},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}
