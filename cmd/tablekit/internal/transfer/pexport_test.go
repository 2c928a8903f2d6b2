package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestExportParallelSameAsSequential: the parallel export writes the same
// bytes, rows and per-partition checksums as the one-query export, with
// and without a filter, whatever the number of workers.
func TestExportParallelSameAsSequential(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Tbl"); err != nil {
		t.Fatal(err)
	}
	var acts []store.Action
	for i := range 3000 {
		pk := fmt.Sprintf("p%02d", i%23)
		if i%23 == 0 {
			pk = "" // the empty PartitionKey is a partition too
		}
		acts = append(acts, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{
			PartitionKey: pk, RowKey: fmt.Sprintf("r%05d", i),
			Properties: map[string]any{"N": int64(i), "S": fmt.Sprintf("s-%d-%s", i, bytes.Repeat([]byte("x"), i%200))},
		}})
	}
	tbl := st.Table("Tbl")
	if _, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(ctx, acts); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"", "N gt 1000L", "PartitionKey eq 'p05'", "N lt 0L"} {
		var want bytes.Buffer
		wres, err := Export(ctx, tbl, store.Query{Filter: f}, "jsonl", true, &want, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, par := range []int{2, 3, 8} {
			var got bytes.Buffer
			last := 0
			gres, err := ExportParallel(ctx, tbl, store.Query{Filter: f, Top: 50}, ExportOptions{Format: "jsonl", WithMeta: true, Parallel: par, Progress: func(n int) { last = n }}, &got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("filter %q parallel %d: output differs (%d bytes, want %d)", f, par, got.Len(), want.Len())
			}
			if !reflect.DeepEqual(gres, wres) {
				t.Fatalf("filter %q parallel %d: result %+v, want %+v", f, par, gres, wres)
			}
			if last != wres.Rows {
				t.Fatalf("filter %q parallel %d: progress ended at %d, want %d", f, par, last, wres.Rows)
			}
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.n -= len(b); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(b), nil
}

// TestExportParallelStopsOnAWriteError: a failed write stops the scans and
// is the export's error (no goroutine left blocked).
func TestExportParallelStopsOnAWriteError(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Tbl"); err != nil {
		t.Fatal(err)
	}
	var acts []store.Action
	for i := range 5000 {
		acts = append(acts, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("p%02d", i%40), RowKey: fmt.Sprintf("r%05d", i),
			Properties: map[string]any{"S": string(bytes.Repeat([]byte("y"), 300))},
		}})
	}
	if _, err := store.NewBulkWriter(st.Table("Tbl"), store.BulkOptions{}).Write(ctx, acts); err != nil {
		t.Fatal(err)
	}
	_, err := ExportParallel(ctx, st.Table("Tbl"), store.Query{}, ExportOptions{Parallel: 4}, &failingWriter{n: 200 << 10})
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err %v, want disk full", err)
	}
}
