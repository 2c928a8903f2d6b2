package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

func ExampleBulkWriter() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Readings"); err != nil {
		panic(err)
	}
	table := st.Table("Readings")
	// One reading is already stored: inserting it again fails.
	if _, err := table.Insert(ctx, store.Entity{PartitionKey: "sensor-2", RowKey: "0007"}); err != nil {
		panic(err)
	}

	var writes []store.Action
	for i := range 300 {
		writes = append(writes, store.Action{Kind: store.ActionInsert, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("sensor-%d", i%3),
			RowKey:       fmt.Sprintf("%04d", i/3),
			Properties:   map[string]any{"Celsius": float64(i) / 10},
		}})
	}
	w := store.NewBulkWriter(table, store.BulkOptions{
		Concurrency: 4,
		Progress: func(p store.BulkProgress) {
			// Called after each transaction; calls never overlap.
		},
	})
	res, err := w.Write(ctx, writes)

	fmt.Println("transactions:", res.Batches)
	fmt.Println("written:", res.Written, "failed:", res.Failed)
	for i, o := range res.Outcomes {
		if o.Err != nil {
			fmt.Printf("write %d (%s/%s): %s\n", i, writes[i].Entity.PartitionKey, writes[i].Entity.RowKey, store.Code(o.Err))
		}
	}
	fmt.Println("already exists:", errors.Is(err, store.ErrAlreadyExists))
	// Output:
	// transactions: 3
	// written: 299 failed: 1
	// write 23 (sensor-2/0007): EntityAlreadyExists
	// already exists: true
}

// Against the reference engine: every applied write is stored with the
// ETag its outcome reports, the failing ones are reported with the
// engine's own codes, and their transaction-mates are applied.
func TestBulkWithMemstore(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Bulk"); err != nil {
		t.Fatal(err)
	}
	table := st.Table("Bulk")
	if _, err := table.Insert(ctx, store.Entity{PartitionKey: "p1", RowKey: "0003"}); err != nil {
		t.Fatal(err)
	}
	var writes []store.Action
	for i := range 1000 {
		writes = append(writes, store.Action{Kind: store.ActionInsert, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("p%d", i%5), RowKey: fmt.Sprintf("%04d", i/5),
			Properties: map[string]any{"N": int32(i)},
		}})
	}
	// A delete of a missing entity, and an update of one inserted earlier
	// in the same call (so in a later transaction).
	writes = append(writes,
		store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p2", RowKey: "missing"}, IfMatch: store.ETagAny},
		store.Action{Kind: store.ActionUpdateMerge, Entity: store.Entity{PartitionKey: "p4", RowKey: "0000", Properties: map[string]any{"M": true}}, IfMatch: store.ETagAny},
	)
	res, err := store.NewBulkWriter(table, store.BulkOptions{Concurrency: 3}).Write(ctx, writes)
	if err == nil {
		t.Fatal("no error although three writes must fail")
	}
	wantFail := map[int]string{
		3*5 + 1: store.CodeEntityAlreadyExists, // p1/0003
		1000:    store.CodeResourceNotFound,
	}
	if res.Failed != 2 || res.Written != len(writes)-2 {
		t.Fatalf("written %d failed %d, want %d and 2", res.Written, res.Failed, len(writes)-2)
	}
	for i, o := range res.Outcomes {
		if code, bad := wantFail[i]; bad {
			if store.Code(o.Err) != code {
				t.Errorf("write %d: %v, want %s", i, o.Err, code)
			}
			continue
		}
		if o.Err != nil {
			t.Fatalf("write %d failed: %v", i, o.Err)
		}
		e := writes[i].Entity
		got, err := table.Get(ctx, e.PartitionKey, e.RowKey, nil)
		if err != nil {
			t.Fatalf("write %d reported applied but Get fails: %v", i, err)
		}
		if i < 1000 && got.Properties["N"] != int32(i) {
			t.Fatalf("write %d stored %v", i, got.Properties)
		}
		if i == 1001 && (got.Properties["M"] != true || got.Properties["N"] != int32(4)) {
			t.Fatalf("merge after insert: %v, want N=4 and M=true", got.Properties)
		}
		if i != 4 && i < 1001 && got.ETag != o.ETag {
			t.Fatalf("write %d: outcome ETag %s, stored %s", i, o.ETag, got.ETag)
		}
	}
}

func benchEntities(n, partitions int) []store.Action {
	writes := make([]store.Action, n)
	for i := range writes {
		writes[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("p%02d", i%partitions), RowKey: fmt.Sprintf("%06d", i),
			Properties: map[string]any{"Name": "reading", "Value": float64(i), "Count": int32(i)},
		}}
	}
	return writes
}

// freshTable gives each iteration an empty table, outside the timer.
func freshTable(b *testing.B, st *memstore.Store, i int) store.Table {
	b.StopTimer()
	defer b.StartTimer()
	name := fmt.Sprintf("Bench%d", i)
	if err := st.CreateTable(context.Background(), name); err != nil {
		b.Fatal(err)
	}
	if i > 0 {
		if err := st.DeleteTable(context.Background(), fmt.Sprintf("Bench%d", i-1)); err != nil {
			b.Fatal(err)
		}
	}
	return st.Table(name)
}

// BenchmarkBulkWrite writes 10,000 entities over 10 partitions to memstore
// with the bulk writer, one partition at a time and with the default
// concurrency.
func BenchmarkBulkWrite(b *testing.B) {
	const n = 10_000
	writes := benchEntities(n, 10)
	for _, conc := range []int{1, store.DefaultBulkConcurrency} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			st := memstore.New()
			ctx := context.Background()
			w := store.BulkOptions{Concurrency: conc}
			i := 0
			for b.Loop() {
				table := freshTable(b, st, i)
				i++
				res, err := store.NewBulkWriter(table, w).Write(ctx, writes)
				if err != nil || res.Written != n {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// BenchmarkNaiveInsert writes the same 10,000 entities one Insert at a time.
func BenchmarkNaiveInsert(b *testing.B) {
	const n = 10_000
	writes := benchEntities(n, 10)
	st := memstore.New()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		table := freshTable(b, st, i)
		i++
		for _, w := range writes {
			if _, err := table.Insert(ctx, w.Entity); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
}

// slowTable adds a fixed delay to every insert and transaction, standing
// in for the network round trip to Azure.
func slowTable(t store.Table, delay time.Duration) store.Table {
	return storetest.WrapTable(t, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		switch c.EntityOp() {
		case "Table.Insert", "Table.Transact":
			time.Sleep(delay)
		}
		return do(ctx)
	})
}

// BenchmarkBulkWriteRoundTrip repeats the comparison for 1,000 entities
// with a sleep of 200 µs (about 1 ms in practice, the timer's granularity)
// added to every request: what the writer saves is round trips.
func BenchmarkBulkWriteRoundTrip(b *testing.B) {
	const n, delay = 1_000, 200 * time.Microsecond
	writes := benchEntities(n, 10)
	ctx := context.Background()
	b.Run("bulk", func(b *testing.B) {
		st := memstore.New()
		i := 0
		for b.Loop() {
			table := slowTable(freshTable(b, st, i), delay)
			i++
			if _, err := store.NewBulkWriter(table, store.BulkOptions{}).Write(ctx, writes); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
	})
	b.Run("naive", func(b *testing.B) {
		st := memstore.New()
		i := 0
		for b.Loop() {
			table := slowTable(freshTable(b, st, i), delay)
			i++
			for _, w := range writes {
				if _, err := table.Insert(ctx, w.Entity); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
	})
}
