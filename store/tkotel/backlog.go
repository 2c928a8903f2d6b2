package tkotel

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Backlog is what a measure of pending background work reports: the
// figures an eventual engine gives (core/eventual's Engine.Backlog, or a
// runner's Health), passed here by the program so that this package
// depends on no engine.
type Backlog struct {
	// Pending counts the operations recorded and not carried out yet.
	Pending int
	// Age is how old the oldest pending operation is (0 with none).
	Age time.Duration
	// Poisoned counts the operations given up on after their retries.
	Poisoned int
}

// ObserveBacklog reports the backlog of the work named queue as three
// observable gauges, read through measure at each collection:
// tablekit.worker.backlog (operations pending), tablekit.worker.backlog.age
// (seconds, the oldest pending operation's age) and
// tablekit.worker.poisoned (operations given up on), each with the
// attribute messaging.destination.name = queue. A measure that fails
// reports nothing for that collection. measure runs on the collector's
// goroutine with its context: keep it cheap, or read a value a runner
// keeps (runner.Health) rather than the store.
func (in *Instrumentation) ObserveBacklog(queue string, measure func(context.Context) (Backlog, error)) error {
	if in == nil || measure == nil {
		return errors.New("tkotel: ObserveBacklog needs an Instrumentation and a measure function")
	}
	if queue == "" {
		return errors.New("tkotel: ObserveBacklog: the queue name is empty")
	}
	m := in.meter
	pending, err1 := m.Int64ObservableGauge("tablekit.worker.backlog", metric.WithUnit("{operation}"),
		metric.WithDescription("Operations recorded and not carried out yet (outbox rows pending)."))
	age, err2 := m.Float64ObservableGauge("tablekit.worker.backlog.age", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest pending operation."))
	poisoned, err3 := m.Int64ObservableGauge("tablekit.worker.poisoned", metric.WithUnit("{operation}"),
		metric.WithDescription("Operations given up on after their retries (messages in the poison queue)."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	set := metric.WithAttributeSet(attribute.NewSet(AttrSystem.String("azure.queue"), AttrQueue.String(queue)))
	_, err := m.RegisterCallback(func(ctx context.Context, ob metric.Observer) error {
		b, err := measure(ctx)
		if err != nil {
			return nil // nothing to report this time; the program's own logs say why
		}
		ob.ObserveInt64(pending, int64(b.Pending), set)
		ob.ObserveFloat64(age, b.Age.Seconds(), set)
		ob.ObserveInt64(poisoned, int64(b.Poisoned), set)
		return nil
	}, pending, age, poisoned)
	return err
}
