package memstore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestFilterCacheChecksEveryRequest: a filter parsed before is not parsed
// again, but the rest of the request still is, and a filter that does not
// parse is refused every time and never kept.
func TestFilterCacheChecksEveryRequest(t *testing.T) {
	ctx := context.Background()
	s := New()
	if err := s.CreateTable(ctx, "Cache"); err != nil {
		t.Fatal(err)
	}
	tbl := s.Table("Cache")
	for i := range 10 {
		if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: map[string]any{"N": int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	q := store.Query{Filter: "PartitionKey eq 'p' and N ge 5"}
	for range 3 {
		page, err := tbl.Query(ctx, q)
		if err != nil || len(page.Entities) != 5 {
			t.Fatalf("cached filter: %d entities, %v", len(page.Entities), err)
		}
	}
	if _, err := tbl.Query(ctx, store.Query{Filter: q.Filter, Top: 1001}); store.Code(err) != store.CodeInvalidInput {
		t.Fatalf("$top 1001 with a cached filter: %v", err)
	}
	if _, err := tbl.Query(ctx, store.Query{Filter: q.Filter, Select: []string{"bad name"}}); err == nil {
		t.Fatal("a bad $select with a cached filter was accepted")
	}
	for range 2 {
		if _, err := tbl.Query(ctx, store.Query{Filter: "N eq"}); store.Code(err) != store.CodeInvalidInput {
			t.Fatalf("a malformed filter: %v", err)
		}
	}
	s.filters.mu.RLock()
	_, kept := s.filters.m["N eq"]
	s.filters.mu.RUnlock()
	if kept {
		t.Fatal("a malformed filter was cached")
	}
	// More filters than the cache holds: every answer still right.
	for i := range filterCacheSize + 50 {
		f := fmt.Sprintf("PartitionKey eq 'p' and N eq %d", i%10)
		if i >= 10 {
			f += fmt.Sprintf(" and RowKey ne 'x%d'", i)
		}
		page, err := tbl.Query(ctx, store.Query{Filter: f})
		if err != nil || len(page.Entities) != 1 {
			t.Fatalf("filter %d: %d entities, %v", i, len(page.Entities), err)
		}
	}
	if n := len(s.filters.m); n > filterCacheSize {
		t.Fatalf("%d filters kept, more than %d", n, filterCacheSize)
	}
}

// TestFilterCacheConcurrent: queries sharing and not sharing filters at
// once get the same answers as alone (run under -race).
func TestFilterCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	s := New()
	_ = s.CreateTable(ctx, "Cache")
	tbl := s.Table("Cache")
	for i := range 20 {
		_, _ = tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: map[string]any{"N": int32(i)}})
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				n := (w + i) % 20
				page, err := tbl.Query(ctx, store.Query{Filter: fmt.Sprintf("N ge %d", n)})
				if err != nil || len(page.Entities) != 20-n {
					t.Errorf("N ge %d: %d entities, %v", n, len(page.Entities), err)
					return
				}
			}
		})
	}
	wg.Wait()
}
