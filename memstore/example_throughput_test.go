package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// WithThroughput models the service's scalability targets on a clock the
// test controls: a partition serves 2,000 entities per second, and a
// request beyond that is refused with 503 ServerBusy, having done nothing.
func ExampleWithThroughput() {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 15, 4, 0, 0, time.UTC)
	st := memstore.New(
		memstore.WithClock(func() time.Time { return now }),
		memstore.WithThroughput(memstore.ThroughputLimits{}), // the service's targets
	)
	_ = st.CreateTable(ctx, "Log")
	t := st.Table("Log")

	write := func(pk string, from int) error {
		batch := make([]store.Action, 100)
		for i := range batch {
			batch[i] = store.Action{Kind: store.ActionUpsertReplace,
				Entity: store.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%06d", from+i)}}
		}
		_, err := t.Transact(ctx, batch)
		return err
	}
	// An idle partition takes a burst of one second's worth: 20 batches.
	for i := range 21 {
		if err := write("2026112215", i*100); err != nil {
			fmt.Printf("batch %d: %s, throttled: %v\n", i, store.Code(err), errors.Is(err, store.ErrThrottled))
		}
	}
	now = now.Add(50 * time.Millisecond) // 50 ms earn 100 entities
	fmt.Println("50 ms later:", write("2026112215", 2000))
	fmt.Println("another partition:", write("07_2026112215", 0))

	for _, p := range st.Throughput().Hot() {
		fmt.Printf("hot: %s: %d requests, %d entities, %d throttled, peak %d/s\n",
			p.PartitionKey, p.Requests, p.Entities, p.Throttled, p.PeakRate)
	}
	// Output:
	// batch 20: ServerBusy, throttled: true
	// 50 ms later: <nil>
	// another partition: <nil>
	// hot: 2026112215: 22 requests, 2100 entities, 1 throttled, peak 2100/s
}
