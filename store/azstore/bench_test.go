package azstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// Benchmarks against Azurite. Run them with
//
//	scripts/with-azurite.sh go test -run '^$' -bench . -benchtime 1x ./store/azstore/
//
// Each iteration writes benchEntities entities over benchPartitions
// partitions (upserts, so iterations can reuse a table) and reports
// entities/s.
const (
	benchEntities   = 10000
	benchPartitions = 10
)

func benchEntity(i int) store.Entity {
	return store.Entity{
		PartitionKey: fmt.Sprintf("p%02d", i%benchPartitions),
		RowKey:       fmt.Sprintf("r%06d", i),
		Properties:   map[string]any{"Name": "entity name", "N": int64(i), "D": float64(i) / 3, "When": time.Unix(int64(i), 0).UTC()},
	}
}

func benchTable(b *testing.B, prefix string) (*Store, string) {
	b.Helper()
	st := azuriteStore(b)
	name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	if err := st.CreateTable(b.Context(), name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.DeleteTable(context.Background(), name) })
	return st, name
}

func reportRate(b *testing.B, n int) {
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
}

func BenchmarkBulkWriter(b *testing.B) {
	st, name := benchTable(b, "bulk")
	acts := make([]store.Action, benchEntities)
	for i := range acts {
		acts[i] = store.Action{Kind: store.ActionUpsertReplace, Entity: benchEntity(i)}
	}
	w := store.NewBulkWriter(st.Table(name), store.BulkOptions{Concurrency: 8})
	for b.Loop() {
		if _, err := w.Write(b.Context(), acts); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, benchEntities)
}

func BenchmarkNaiveAddEntityLoop(b *testing.B) {
	st, name := benchTable(b, "naive")
	c := st.tables.NewClient(name)
	bodies := make([][]byte, benchEntities)
	for i := range bodies {
		e := benchEntity(i)
		bodies[i], _ = wire.AppendEntity(nil, &e)
	}
	for b.Loop() {
		for _, body := range bodies {
			if _, err := c.UpsertEntity(b.Context(), body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportRate(b, benchEntities)
}

// BenchmarkHandWrittenBatches is what a careful aztables user writes:
// batches of 100 per partition, 8 in flight.
func BenchmarkHandWrittenBatches(b *testing.B) {
	st, name := benchTable(b, "hand")
	c := st.tables.NewClient(name)
	byPK := map[string][]aztables.TransactionAction{}
	for i := 0; i < benchEntities; i++ {
		e := benchEntity(i)
		body, _ := wire.AppendEntity(nil, &e)
		byPK[e.PartitionKey] = append(byPK[e.PartitionKey], aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace, Entity: body})
	}
	var batches [][]aztables.TransactionAction
	for _, acts := range byPK {
		for len(acts) > 0 {
			n := min(100, len(acts))
			batches = append(batches, acts[:n])
			acts = acts[n:]
		}
	}
	for b.Loop() {
		sem := make(chan struct{}, 8)
		var wg sync.WaitGroup
		errs := make(chan error, len(batches))
		for _, batch := range batches {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if _, err := c.SubmitTransaction(b.Context(), batch, nil); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, benchEntities)
}

const pagingEntities = 20000

// pagingTable fills a table with pagingEntities entities once.
func pagingTable(b *testing.B) (*Store, string) {
	st, name := benchTable(b, "paging")
	acts := make([]store.Action, pagingEntities)
	for i := range acts {
		e := benchEntity(i)
		e.PartitionKey = fmt.Sprintf("p%02d", i%20)
		acts[i] = store.Action{Kind: store.ActionInsert, Entity: e}
	}
	if _, err := store.NewBulkWriter(st.Table(name), store.BulkOptions{Concurrency: 8}).Write(b.Context(), acts); err != nil {
		b.Fatal(err)
	}
	return st, name
}

func BenchmarkPagingAzstore(b *testing.B) {
	st, name := pagingTable(b)
	tbl := st.Table(name)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		q := store.Query{}
		for {
			page, err := tbl.Query(b.Context(), q)
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.Entities)
			if page.Continuation == "" {
				break
			}
			q.Continuation = page.Continuation
		}
		if n != pagingEntities {
			b.Fatalf("read %d entities, want %d", n, pagingEntities)
		}
	}
	reportRate(b, pagingEntities)
}

func BenchmarkPagingAztablesPager(b *testing.B) {
	st, name := pagingTable(b)
	c := st.tables.NewClient(name)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatMinimal)})
		for pager.More() {
			page, err := pager.NextPage(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.Entities)
		}
		if n != pagingEntities {
			b.Fatalf("read %d entities, want %d", n, pagingEntities)
		}
	}
	reportRate(b, pagingEntities)
}
