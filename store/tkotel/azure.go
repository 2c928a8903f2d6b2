package tkotel

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// AzureProvider returns an azcore tracing.Provider backed by tp, for
// azstore.Options.TracingProvider (or any azcore client's
// ClientOptions.TracingProvider): azcore's spans, one per HTTP try and one
// per SDK call, go to tp as children of the span in the request's context,
// which is tablekit's request span when the store is wrapped by
// Instrumentation.Store. It is what the azotel module of the Azure SDK
// does, in a few lines. azcore strips the query of each URL it records
// except the parameters it knows to be harmless, so a SAS's signature
// never reaches a span.
func AzureProvider(tp trace.TracerProvider) tracing.Provider {
	return tracing.NewProvider(func(name, version string) tracing.Tracer {
		t := tp.Tracer(name, trace.WithInstrumentationVersion(version))
		return tracing.NewTracer(func(ctx context.Context, spanName string, o *tracing.SpanOptions) (context.Context, tracing.Span) {
			var opts []trace.SpanStartOption
			if o != nil {
				opts = append(opts, trace.WithSpanKind(spanKind(o.Kind)))
				if len(o.Attributes) > 0 {
					opts = append(opts, trace.WithAttributes(attrs(o.Attributes)...))
				}
			}
			ctx, span := t.Start(ctx, spanName, opts...)
			return ctx, azSpan(span)
		}, &tracing.TracerOptions{
			SpanFromContext: func(ctx context.Context) tracing.Span {
				return azSpan(trace.SpanFromContext(ctx))
			},
		})
	}, nil)
}

// AzureProvider is AzureProvider of in's TracerProvider.
func (in *Instrumentation) AzureProvider() tracing.Provider { return AzureProvider(in.tp) }

func azSpan(span trace.Span) tracing.Span {
	return tracing.NewSpan(tracing.SpanImpl{
		End:           func() { span.End() },
		SetAttributes: func(a ...tracing.Attribute) { span.SetAttributes(attrs(a)...) },
		AddEvent: func(name string, a ...tracing.Attribute) {
			span.AddEvent(name, trace.WithAttributes(attrs(a)...))
		},
		SetStatus: func(c tracing.SpanStatus, desc string) { span.SetStatus(statusCode(c), desc) },
	})
}

func spanKind(k tracing.SpanKind) trace.SpanKind {
	switch k {
	case tracing.SpanKindClient:
		return trace.SpanKindClient
	case tracing.SpanKindServer:
		return trace.SpanKindServer
	case tracing.SpanKindProducer:
		return trace.SpanKindProducer
	case tracing.SpanKindConsumer:
		return trace.SpanKindConsumer
	}
	return trace.SpanKindInternal
}

func statusCode(c tracing.SpanStatus) codes.Code {
	switch c {
	case tracing.SpanStatusError:
		return codes.Error
	case tracing.SpanStatusOK:
		return codes.Ok
	}
	return codes.Unset
}

func attrs(in []tracing.Attribute) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(in))
	for _, a := range in {
		k := attribute.Key(a.Key)
		switch v := a.Value.(type) {
		case string:
			out = append(out, k.String(v))
		case int:
			out = append(out, k.Int(v))
		case int64:
			out = append(out, k.Int64(v))
		case float64:
			out = append(out, k.Float64(v))
		case bool:
			out = append(out, k.Bool(v))
		default:
			out = append(out, k.String(fmt.Sprintf("%v", v)))
		}
	}
	return out
}
