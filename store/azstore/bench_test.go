package azstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
)

// Benchmarks against Azurite. Run them with
//
//	scripts/with-azurite.sh go test -run '^$' -bench . -benchtime 1x -count 3 ./store/azstore/
//
// The three write benchmarks start from the same typed Go values and
// insert benchEntities entities over benchPartitions partitions per
// iteration (fresh RowKeys each iteration), so each includes the work a
// real program does: turning the values into request bodies, sending them
// and reading the answers. They report entities/s.
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

// benchEntities returns the entities of iteration iter: the same values
// with RowKeys unique to the iteration, so inserts never collide.
func benchBatch(iter int) []store.Entity {
	es := make([]store.Entity, benchEntities)
	for i := range es {
		es[i] = benchEntity(i)
		es[i].RowKey += fmt.Sprintf("-%d", iter)
	}
	return es
}

// edm is the correctly typed aztables form of e (Int64 and DateTime
// annotated), as an aztables user writes it.
func edm(e store.Entity) aztables.EDMEntity {
	return aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey},
		Properties: map[string]any{
			"Name": e.Properties["Name"],
			"N":    aztables.EDMInt64(e.Properties["N"].(int64)),
			"D":    e.Properties["D"],
			"When": aztables.EDMDateTime(e.Properties["When"].(time.Time)),
		},
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

// BenchmarkWrite compares the bulk writer with the two aztables programs
// it must beat. The three run as sub-benchmarks so that -count interleaves
// them (bulk, naive, handwritten, bulk, ...) and each sees Azurite in the
// same state; Azurite is warmed up first, since its JavaScript engine
// speeds up over the first thousands of requests.
func BenchmarkWrite(b *testing.B) {
	warmUp(b)
	b.Run("bulk", benchBulkWriter)
	b.Run("naive", benchNaiveAddEntityLoop)
	b.Run("handwritten", benchHandWrittenBatches)
}

var warmOnce sync.Once

// warmUp sends Azurite a few thousand single and batched writes once per
// test binary, untimed.
func warmUp(b *testing.B) {
	warmOnce.Do(func() {
		st, name := benchTable(b, "warm")
		t := st.Table(name)
		for i := range 1000 {
			if _, err := t.Upsert(b.Context(), benchEntity(i), store.Replace); err != nil {
				b.Fatal(err)
			}
		}
		acts := make([]store.Action, benchEntities)
		for i := range acts {
			acts[i] = store.Action{Kind: store.ActionUpsertReplace, Entity: benchEntity(i)}
		}
		if _, err := store.NewBulkWriter(t, store.BulkOptions{Concurrency: 8}).Write(b.Context(), acts); err != nil {
			b.Fatal(err)
		}
	})
}

func benchBulkWriter(b *testing.B) {
	st, name := benchTable(b, "bulk")
	w := store.NewBulkWriter(st.Table(name), store.BulkOptions{Concurrency: 8})
	for iter := 0; b.Loop(); iter++ {
		b.StopTimer()
		es := benchBatch(iter)
		b.StartTimer()
		acts := make([]store.Action, len(es))
		for i, e := range es {
			acts[i] = store.Action{Kind: store.ActionInsert, Entity: e}
		}
		if _, err := w.Write(b.Context(), acts); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, benchEntities)
}

// benchNaiveAddEntityLoop is the naive aztables program: one AddEntity
// call per entity, each body from json.Marshal of an EDMEntity.
func benchNaiveAddEntityLoop(b *testing.B) {
	st, name := benchTable(b, "naive")
	c := st.tables.NewClient(name)
	for iter := 0; b.Loop(); iter++ {
		b.StopTimer()
		es := benchBatch(iter)
		b.StartTimer()
		for _, e := range es {
			body, err := json.Marshal(edm(e))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.AddEntity(b.Context(), body, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportRate(b, benchEntities)
}

// benchHandWrittenBatches is what a careful aztables user writes:
// bodies from json.Marshal of EDMEntity, batches of 100 per partition, 8
// batches in flight.
func benchHandWrittenBatches(b *testing.B) {
	st, name := benchTable(b, "hand")
	c := st.tables.NewClient(name)
	for iter := 0; b.Loop(); iter++ {
		b.StopTimer()
		es := benchBatch(iter)
		b.StartTimer()
		byPK := map[string][]aztables.TransactionAction{}
		for _, e := range es {
			body, err := json.Marshal(edm(e))
			if err != nil {
				b.Fatal(err)
			}
			byPK[e.PartitionKey] = append(byPK[e.PartitionKey], aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: body})
		}
		var batches [][]aztables.TransactionAction
		for _, acts := range byPK {
			for len(acts) > 0 {
				n := min(100, len(acts))
				batches = append(batches, acts[:n])
				acts = acts[n:]
			}
		}
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

// BenchmarkPagingInterleaved reads the 20,000 entities of pagingTable per
// operation, interleaved (internal/interleave): Table.Query following
// continuation tokens, decoded to store.Entity, against aztables'
// ListEntitiesPager handing back its raw []byte entities. Figures are per
// entity. Run it with
//
//	scripts/with-azurite.sh go test -run '^$' -bench PagingInterleaved -benchtime 1x ./store/azstore/
func BenchmarkPagingInterleaved(b *testing.B) {
	st, name := pagingTable(b)
	tbl := st.Table(name)
	c := st.tables.NewClient(name)
	ctx := b.Context()
	rep, err := interleave.Measure(interleave.Config{Rounds: 7, Slice: time.Millisecond, Warmup: time.Millisecond, CollectGarbage: true},
		interleave.Case{Name: "aztables-pager", Ops: pagingEntities, Op: func(int) error {
			n := 0
			pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatMinimal)})
			for pager.More() {
				page, err := pager.NextPage(ctx)
				if err != nil {
					return err
				}
				n += len(page.Entities)
			}
			if n != pagingEntities {
				return fmt.Errorf("read %d entities, want %d", n, pagingEntities)
			}
			return nil
		}},
		interleave.Case{Name: "azstore-Query", Ops: pagingEntities, Op: func(int) error {
			n := 0
			q := store.Query{}
			for {
				page, err := tbl.Query(ctx, q)
				if err != nil {
					return err
				}
				n += len(page.Entities)
				if page.Continuation == "" {
					break
				}
				q.Continuation = page.Continuation
			}
			if n != pagingEntities {
				return fmt.Errorf("read %d entities, want %d", n, pagingEntities)
			}
			return nil
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}
