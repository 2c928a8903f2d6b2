package partition_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkFencedWrite measures what the fence costs a user's write of an
// employee and its index copy, against the same two rows in a plain
// transaction, interleaved in short rounds on one backend:
//
//   - "plain transaction": store.Table.Transact of the two rows;
//   - "fenced, BeginAt": the same rows through a Txn begun from the last
//     commit's Result (the fence, the tail: 4 actions, one request);
//   - "fenced, Begin": the same with a point read of the fence first (two
//     requests).
//
// Run it once: go test -run '^$' -bench FencedWrite -benchtime 1x ./core/partition/
// (with scripts/with-azurite.sh for the Azurite figures).
func BenchmarkFencedWrite(b *testing.B) {
	for _, be := range []func(testing.TB) backendtest.Backend{
		func(testing.TB) backendtest.Backend { return backendtest.Memstore() },
		backendtest.Azurite,
	} {
		bk := be(b)
		b.Run(bk.Name, func(b *testing.B) {
			ctx := context.Background()
			tbl := bk.Store.Table(bk.NewTable(b, "bench"))
			rows := func(i int) (store.Entity, store.Entity) {
				return store.Entity{RowKey: fmt.Sprintf("empid_%09d", i), Properties: map[string]any{"Name": "Ada", "Email": fmt.Sprintf("e%d@x", i)}},
					store.Entity{RowKey: fmt.Sprintf("email_e%d@x", i), Properties: map[string]any{"ID": int64(i)}}
			}
			plain := interleave.Case{Name: "plain transaction", Op: func(i int) error {
				e, x := rows(i)
				e.PartitionKey, x.PartitionKey = "plain", "plain"
				_, err := tbl.Transact(ctx, []store.Action{{Kind: store.ActionInsert, Entity: e}, {Kind: store.ActionInsert, Entity: x}})
				return err
			}}
			chained, err := partition.New(tbl, "chained", nil)
			if err != nil {
				b.Fatal(err)
			}
			last, err := chained.Fence(ctx)
			if err != nil {
				b.Fatal(err)
			}
			fencedAt := interleave.Case{Name: "fenced, BeginAt", Op: func(i int) error {
				tx, err := chained.BeginAt(last)
				if err != nil {
					return err
				}
				e, x := rows(i)
				if err := tx.Insert("employee", e); err != nil {
					return err
				}
				if err := tx.Insert("index email", x); err != nil {
					return err
				}
				res, err := tx.Commit(ctx)
				if err != nil {
					return err
				}
				last = res.Fence
				return nil
			}}
			read, err := partition.New(tbl, "read", nil)
			if err != nil {
				b.Fatal(err)
			}
			fenced := interleave.Case{Name: "fenced, Begin", Op: func(i int) error {
				tx, err := read.Begin(ctx)
				if err != nil {
					return err
				}
				e, x := rows(i)
				if err := tx.Insert("employee", e); err != nil {
					return err
				}
				if err := tx.Insert("index email", x); err != nil {
					return err
				}
				_, err = tx.Commit(ctx)
				return err
			}}
			b.ResetTimer()
			rep, err := interleave.Measure(interleave.Config{}, plain, fencedAt, fenced)
			if err != nil {
				b.Fatal(err)
			}
			for _, name := range []string{"fenced, BeginAt", "fenced, Begin"} {
				row, _ := rep.Row(name)
				b.ReportMetric(row.WallRatio.Median, "x-wall-"+map[string]string{"fenced, BeginAt": "beginat", "fenced, Begin": "begin"}[name])
			}
			b.Logf("%s\n%s", bk.Name, rep.Table())
		})
	}
}
