package transfer

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// BenchmarkExportInterleaved measures tablekit's export of a 5,000-row
// table from Azurite (decoded, typed, checksummed per partition and
// written as JSON lines) against a hand-written aztables program that
// pages through the table and writes each entity's JSON as it came,
// interleaved round by round (internal/interleave):
//
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkExportInterleaved$' -benchtime 1x ./cmd/tablekit/internal/transfer/
func BenchmarkExportInterleaved(b *testing.B) {
	conn := azuritetest.Conn(b)
	ctx := context.Background()
	st, err := azstore.NewFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	table := fmt.Sprintf("Export%d", time.Now().UnixNano()%1_000_000_000)
	if err := st.CreateTable(ctx, table); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(ctx, table)
	const rows = 5000
	var acts []store.Action
	for i := range rows {
		acts = append(acts, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("p%02d", i%10), RowKey: fmt.Sprintf("r%05d", i),
			Properties: map[string]any{"Name": fmt.Sprintf("name-%d", i), "N": int64(i), "V": float64(i) / 3,
				"At": time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), "Ok": i%2 == 0},
		}})
	}
	if _, err := store.NewBulkWriter(st.Table(table), store.BulkOptions{}).Write(ctx, acts); err != nil {
		b.Fatal(err)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	client := svc.NewClient(table)
	count := func(n int) error {
		if n != rows {
			return fmt.Errorf("%d rows exported, want %d", n, rows)
		}
		return nil
	}
	pager := interleave.Case{Name: "aztables-pager", Ops: rows, Op: func(int) error {
		p := client.NewListEntitiesPager(nil)
		n := 0
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return err
			}
			for _, e := range page.Entities {
				io.Discard.Write(append(e, '\n'))
				n++
			}
		}
		return count(n)
	}}
	export := interleave.Case{Name: "tablekit-export", Ops: rows, Op: func(int) error {
		res, err := Export(ctx, st.Table(table), store.Query{}, "jsonl", false, io.Discard, nil)
		if err != nil {
			return err
		}
		return count(res.Rows)
	}}
	b.ResetTimer()
	for range b.N {
		rep, err := interleave.Measure(interleave.Config{Rounds: 11, Slice: 300 * time.Millisecond, CollectGarbage: true}, pager, export)
		if err != nil {
			b.Fatal(err)
		}
		rep.Metrics(b.ReportMetric)
		b.Log("\n" + rep.Table())
		fmt.Fprintln(os.Stderr, rep.Table())
	}
}
