package eventualtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestDrainWaitsForAClaimedRow: an operation whose outbox row a sweeper
// has claimed and whose message a worker holds hidden is work left to
// do: Drain runs it before returning. (Counting only the claimable rows,
// Drain returned at once and the copy was missing.)
func TestDrainWaitsForAClaimedRow(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	src, dst := e.B.NewTable(t, "dsrc"), e.B.NewTable(t, "ddst")
	o := e.Opts("drain")
	eng := eventualtest.NewEngine(t, e.B.Store, o)
	if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
		if err := tx.Upsert("src", store.Entity{RowKey: "k", Properties: map[string]any{"N": int64(1)}}, store.Replace); err != nil {
			return err
		}
		return tx.Then(ctx, "k", eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "k", Properties: map[string]any{"N": int64(1)}}))
	}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A worker holds the message hidden; a sweeper claimed the row.
	if msgs, err := e.B.Store.Queue(o.Queue).Get(ctx, 1, 10*time.Minute); err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %d messages, %v", len(msgs), err)
	}
	ob, err := partition.NewOutbox(e.B.Store.Table(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ob.Pending(ctx, "p")
	if err != nil || len(rows) != 1 {
		t.Fatalf("pending: %d rows, %v", len(rows), err)
	}
	if _, err := ob.Claim(ctx, rows[0], "another-sweeper", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	eventualtest.Drain(t, e, &eng, o, e.B.Store, src)
	if _, err := e.B.Store.Table(dst).Get(ctx, "copy", "k", nil); err != nil {
		t.Fatalf("after Drain the copy is missing: %v", err)
	}
}
