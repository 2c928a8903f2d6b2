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
// per SDK call, go to tp as children of the span in the request's context.
// It is what the azotel module of the Azure SDK does, in a few lines.
// azcore strips the query of each URL it records except the parameters it
// knows to be harmless, so a SAS's signature never reaches a span.
//
// For a store wrapped by Instrumentation.Store, use the Instrumentation's
// AzureProvider method instead: it leaves out the SDK call's span that
// would repeat tablekit's request span.
func AzureProvider(tp trace.TracerProvider) tracing.Provider { return azureProvider(tp, nil) }

// AzureProvider is AzureProvider of in's TracerProvider, without the
// spans of SDK calls made inside in's requests: there, tablekit's request
// span (Table.Get Orders) already stands for the SDK's call
// (Client.GetEntity), and azcore's HTTP spans, one per try, are its
// children directly. An SDK call made outside in's requests keeps its
// span.
func (in *Instrumentation) AzureProvider() tracing.Provider { return azureProvider(in.tp, in) }

// The span start options of each span kind, made once.
var (
	internalOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	clientOpts   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	serverOpts   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	producerOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	consumerOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
)

// kindOpts returns the start options of an azcore span kind.
func kindOpts(k tracing.SpanKind) []trace.SpanStartOption {
	switch k {
	case tracing.SpanKindClient:
		return clientOpts
	case tracing.SpanKindServer:
		return serverOpts
	case tracing.SpanKindProducer:
		return producerOpts
	case tracing.SpanKindConsumer:
		return consumerOpts
	}
	return internalOpts
}

// startArgs holds a span's start options and attributes, in one
// allocation for the usual few attributes.
type startArgs struct {
	opts  [2]trace.SpanStartOption
	attrs [8]attribute.KeyValue
}

// azureProvider is AzureProvider; with in set, it makes no span for an SDK
// call inside one of in's requests.
func azureProvider(tp trace.TracerProvider, in *Instrumentation) tracing.Provider {
	return tracing.NewProvider(func(name, version string) tracing.Tracer {
		t := tp.Tracer(name, trace.WithInstrumentationVersion(version))
		return tracing.NewTracer(func(ctx context.Context, spanName string, o *tracing.SpanOptions) (context.Context, tracing.Span) {
			kind := tracing.SpanKindInternal
			if o != nil && o.Kind != 0 {
				kind = o.Kind
			}
			// azcore starts an SDK call's span as internal (its HTTP
			// spans are client spans); inside one of in's requests,
			// tablekit's span is that call's.
			if in != nil && kind == tracing.SpanKindInternal && in.inRequest(ctx) {
				return ctx, tracing.Span{}
			}
			opts := kindOpts(kind)
			if o != nil && len(o.Attributes) > 0 {
				a := &startArgs{}
				a.opts[0] = opts[0]
				a.opts[1] = trace.WithAttributes(convert(a.attrs[:0], o.Attributes)...)
				opts = a.opts[:]
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

// azSpan is span for azcore; a span that records nothing is azcore's
// no-op span, which costs nothing to make.
func azSpan(span trace.Span) tracing.Span {
	if !span.IsRecording() {
		return tracing.Span{}
	}
	return tracing.NewSpan(tracing.SpanImpl{
		End:           func() { span.End() },
		SetAttributes: func(a ...tracing.Attribute) { span.SetAttributes(convert(nil, a)...) },
		AddEvent: func(name string, a ...tracing.Attribute) {
			span.AddEvent(name, trace.WithAttributes(convert(nil, a)...))
		},
		SetStatus: func(c tracing.SpanStatus, desc string) { span.SetStatus(statusCode(c), desc) },
	})
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

// convert appends azcore's attributes to out as OpenTelemetry's.
func convert(out []attribute.KeyValue, in []tracing.Attribute) []attribute.KeyValue {
	if out == nil {
		out = make([]attribute.KeyValue, 0, len(in))
	}
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
			// azcore formats other values so (tracing.Attribute); it
			// records none on a table's request.
			out = append(out, k.String(fmt.Sprintf("%v", v)))
		}
	}
	return out
}
