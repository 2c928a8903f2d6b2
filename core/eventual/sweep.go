package eventual

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/partition"
)

// Sweep queues again the operations of table's outbox rows that are older
// than SweepAfter and still there: their message was never sent (a crash
// between the commit and the queueing), expired, or was lost. It claims
// each row for SweepAfter first, so concurrent sweepers queue a row once
// per lease. A row whose message is merely slow is queued twice, which is
// harmless: operations are idempotent. It returns how many it queued.
//
// Sweep reads every partition of the table (a table scan with a RowKey
// condition): run it periodically, not per write.
func (e *Engine) Sweep(ctx context.Context, table string) (int, error) {
	if err := e.usable(ctx); err != nil {
		return 0, err
	}
	ob, err := partition.NewOutbox(e.st.Table(table), e.o.Partition)
	if err != nil {
		return 0, err
	}
	n := 0
	for row, err := range ob.Scan(ctx, partition.ScanOptions{CreatedBefore: e.o.Now().Add(-e.o.SweepAfter)}) {
		if err != nil {
			return n, fmt.Errorf("eventual: sweep %s: %w", table, err)
		}
		if row.Topic != e.queueName {
			continue // another engine's, or another use of the outbox
		}
		claimed, err := ob.Claim(ctx, row, e.o.Owner, e.o.SweepAfter)
		if errors.Is(err, partition.ErrClaimed) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("eventual: sweep %s: %w", table, err)
		}
		if err := e.enqueue(ctx, envelope{Outbox: &outboxRef{Table: table, PK: claimed.Partition, ID: claimed.ID}}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
