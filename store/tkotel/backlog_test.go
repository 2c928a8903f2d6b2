package tkotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tablekit/tablekit/store/tkotel"
)

// TestObserveBacklog: the backlog gauges report what the measure reads at
// each collection, labelled with the queue, and nothing when it fails;
// bad arguments are refused.
func TestObserveBacklog(t *testing.T) {
	k := newKit(t)
	b := tkotel.Backlog{Pending: 7, Age: 90 * time.Second, Poisoned: 2}
	var fail bool
	if err := k.in.ObserveBacklog("orders", func(context.Context) (tkotel.Backlog, error) {
		if fail {
			return tkotel.Backlog{}, errors.New("queue unreachable")
		}
		return b, nil
	}); err != nil {
		t.Fatal(err)
	}
	gaugeInt := func(m map[string]metricdata.Aggregation, name string) (int64, bool) {
		g, ok := m[name].(metricdata.Gauge[int64])
		if !ok || len(g.DataPoints) != 1 {
			return 0, false
		}
		if v, _ := g.DataPoints[0].Attributes.Value(tkotel.AttrQueue); v.AsString() != "orders" {
			t.Errorf("%s: attributes %v", name, g.DataPoints[0].Attributes)
		}
		return g.DataPoints[0].Value, true
	}
	m := k.metrics(t)
	if n, ok := gaugeInt(m, "tablekit.worker.backlog"); !ok || n != 7 {
		t.Errorf("backlog %d (%v), want 7", n, ok)
	}
	if n, ok := gaugeInt(m, "tablekit.worker.poisoned"); !ok || n != 2 {
		t.Errorf("poisoned %d (%v), want 2", n, ok)
	}
	if g, ok := m["tablekit.worker.backlog.age"].(metricdata.Gauge[float64]); !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value != 90 {
		t.Errorf("age %#v, want 90 s", m["tablekit.worker.backlog.age"])
	}
	b.Pending = 0
	if n, _ := gaugeInt(k.metrics(t), "tablekit.worker.backlog"); n != 0 {
		t.Errorf("backlog after the work was done: %d, want 0", n)
	}
	fail = true
	if _, ok := gaugeInt(k.metrics(t), "tablekit.worker.backlog"); ok {
		t.Error("a failed measure reported a backlog")
	}
	if err := k.in.ObserveBacklog("", func(context.Context) (tkotel.Backlog, error) { return b, nil }); err == nil {
		t.Error("an empty queue name was accepted")
	}
	if err := k.in.ObserveBacklog("q", nil); err == nil {
		t.Error("a nil measure was accepted")
	}
}
