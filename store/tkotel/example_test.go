package tkotel_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store/tkotel"
)

// Spans of a repository write and of the request it sent, read from an
// in-memory exporter.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	in, err := tkotel.New(tkotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	st := in.Store(memstore.New())
	_ = st.CreateTable(ctx, "Orders")
	repo := mapper.NewRepository[Order](st, "Orders")
	_ = repo.Insert(ctx, &Order{Customer: "c", ID: "1", Total: 10})

	for _, s := range spans.Ended() {
		outcome := ""
		for _, a := range s.Attributes() {
			if a.Key == tkotel.AttrOutcome {
				outcome = a.Value.AsString()
			}
		}
		fmt.Printf("%-24s %-8s %s\n", s.Name(), s.SpanKind(), outcome)
	}
	// Output:
	// Store.CreateTable Orders client   done
	// Table.Insert Orders      client   done
	// mapper.Insert            internal done
}
