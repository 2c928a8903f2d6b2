package memstore

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// benchEntity is a 10-property entity of about 200 bytes of property data.
func benchEntity(pk, rk string, i int) store.Entity {
	return store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{
		"FirstName":  "Margaret",
		"LastName":   fmt.Sprintf("Hamilton-%06d", i),
		"Email":      fmt.Sprintf("margaret.%06d@example.com", i),
		"Department": "Engineering",
		"Age":        int32(33),
		"EmployeeID": int64(100000 + i),
		"Salary":     123456.78,
		"Active":     true,
		"HireDate":   time.Date(2019, 7, 16, 9, 30, 0, 0, time.UTC),
		"Badge":      []byte("0123456789abcdef"),
	}}
}

// rawPropertyBytes is the size of the properties' names and values as raw
// data: the name bytes plus the value's own bytes (string and binary
// length, 4 for Int32, 8 for Int64, Double and DateTime, 1 for Boolean).
func rawPropertyBytes(e store.Entity) int {
	n := 0
	for k, v := range e.Properties {
		n += len(k)
		switch x := v.(type) {
		case string:
			n += len(x)
		case []byte:
			n += len(x)
		case int32:
			n += 4
		case bool:
			n++
		case int64, float64, time.Time:
			n += 8
		case store.GUID:
			n += 16
		}
	}
	return n
}

func rowKey(i int) string { return fmt.Sprintf("%08d", i) }

var (
	benchStoresMu sync.Mutex
	benchStores   = map[int]store.Table{}
)

// loadedTable returns a table of n entities spread over 10 partitions,
// built once per size and shared by the benchmarks.
func loadedTable(b *testing.B, n int) store.Table {
	benchStoresMu.Lock()
	defer benchStoresMu.Unlock()
	if t, ok := benchStores[n]; ok {
		return t
	}
	ctx := context.Background()
	s := New()
	if err := s.CreateTable(ctx, "Bench"); err != nil {
		b.Fatal(err)
	}
	t := s.Table("Bench")
	for i := range n {
		if _, err := t.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%10), rowKey(i/10), i)); err != nil {
			b.Fatal(err)
		}
	}
	benchStores[n] = t
	return t
}

// BenchmarkPointGet reads one 10-property entity by key from tables of
// 1,000 and 1,000,000 entities, and runs its baseline first: a bare Go map
// lookup of the same entity plus the copy a reader needs (its Properties
// map), with the same key formatting. The baseline and the 1,000-entity
// read run on the same small heap; the tables are dropped at the end, so
// every -count round starts alike (the size of the live heap sets how often
// the garbage collector runs, which moves a read's cost more than the
// table's size does).
func BenchmarkPointGet(b *testing.B) {
	defer dropLoadedTables()
	b.Run("baseline/entities=1000", func(b *testing.B) {
		const n = 1_000
		m := make(map[[2]string]store.Entity, n)
		for i := range n {
			pk, rk := fmt.Sprintf("p%03d", i%10), rowKey(i/10)
			m[[2]string{pk, rk}] = benchEntity(pk, rk, i)
		}
		runtime.GC()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			j := (i * 7919) % n
			e, ok := m[[2]string{fmt.Sprintf("p%03d", j%10), rowKey(j / 10)}]
			if !ok {
				b.Fatal("missing")
			}
			_ = e.Clone()
		}
	})
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("memstore/entities=%d", n), func(b *testing.B) {
			t := loadedTable(b, n)
			ctx := context.Background()
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				j := (i * 7919) % n
				if _, err := t.Get(ctx, fmt.Sprintf("p%03d", j%10), rowKey(j/10), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// dropLoadedTables forgets the shared tables so the next benchmark starts
// on a small heap.
func dropLoadedTables() {
	benchStoresMu.Lock()
	clear(benchStores)
	benchStoresMu.Unlock()
	runtime.GC()
}

// BenchmarkRowRangeQuery reads 100 consecutive rows of one partition.
func BenchmarkRowRangeQuery(b *testing.B) {
	defer dropLoadedTables()
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("entities=%d", n), func(b *testing.B) {
			t := loadedTable(b, n)
			ctx := context.Background()
			perPartition := n / 10
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				pk := fmt.Sprintf("p%03d", i%10)
				lo := (i * 31) % (perPartition - 100 + 1)
				f := fmt.Sprintf("PartitionKey eq '%s' and RowKey ge '%s' and RowKey lt '%s'", pk, rowKey(lo), rowKey(lo+100))
				page, err := t.Query(ctx, store.Query{Filter: f})
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Entities) != 100 {
					b.Fatalf("got %d entities, want 100", len(page.Entities))
				}
			}
		})
	}
}

// BenchmarkMemoryPerEntity loads 1,000,000 entities of about 200 bytes of
// properties and reports the heap bytes each costs next to its raw
// property bytes.
func BenchmarkMemoryPerEntity(b *testing.B) {
	const n = 1_000_000
	ctx := context.Background()
	raw := rawPropertyBytes(benchEntity("p000", rowKey(0), 0))
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := New()
		if err := s.CreateTable(ctx, "Mem"); err != nil {
			b.Fatal(err)
		}
		t := s.Table("Mem")
		for i := range n {
			if _, err := t.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%100), rowKey(i/100), i)); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perEntity := float64(after.HeapAlloc-before.HeapAlloc) / n
		b.ReportMetric(perEntity, "heap-bytes/entity")
		b.ReportMetric(float64(raw), "raw-property-bytes/entity")
		b.ReportMetric(perEntity/float64(raw), "heap/raw")
		runtime.KeepAlive(s)
	}
}

// BenchmarkInsertSingle inserts one entity per operation.
func BenchmarkInsertSingle(b *testing.B) {
	ctx := context.Background()
	s := New()
	_ = s.CreateTable(ctx, "Ins")
	t := s.Table("Ins")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := t.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%100), rowKey(i), i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransact100 inserts 100 entities of one partition in one
// transaction per operation.
func BenchmarkTransact100(b *testing.B) {
	ctx := context.Background()
	s := New()
	_ = s.CreateTable(ctx, "Txn")
	t := s.Table("Txn")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		actions := make([]store.Action, 100)
		for j := range actions {
			actions[j] = store.Action{Kind: store.ActionInsert, Entity: benchEntity(fmt.Sprintf("p%03d", i%100), rowKey(i*100+j), j)}
		}
		if _, err := t.Transact(ctx, actions); err != nil {
			b.Fatal(err)
		}
	}
}
