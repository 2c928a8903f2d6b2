package partition_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// generations seeds n rows r00.. of generation 1 in partition pk, and
// returns a function that rewrites all of them to the next generation in
// one commit.
func generations(t *testing.T, tbl store.Table, pk string, n int) (next func()) {
	t.Helper()
	w := open(t, tbl, pk, nil)
	gen := int64(0)
	next = func() {
		gen++
		tx := begin(t, w)
		for i := range n {
			must(t, tx.Upsert("row", row(fmt.Sprintf("r%02d", i), "Gen", gen, "Pad", strings.Repeat("x", 100)), store.Replace))
		}
		if _, err := tx.Commit(context.Background()); err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	next()
	return next
}

// gens returns the distinct generations among rows.
func gens(rows []store.Entity) map[int64]int {
	g := map[int64]int{}
	for _, e := range rows {
		g[e.Properties["Gen"].(int64)]++
	}
	return g
}

// A writer commits between the pages of a read. A plain paged query
// returns rows of two generations; Read notices, reads again, and returns
// rows of one generation with the fence of that state.
func TestReadRetriesWhenAWriterRacesItsPages(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		next := generations(t, tbl, "p", 30)
		h := &hookTable{Table: tbl}

		// The control: a plain paged query of the data rows.
		h.afterPage = func(n int) {
			if n == 0 {
				next()
			}
		}
		var naive []store.Entity
		q := store.Query{Filter: partition.DataCond("p").String(), Top: 7}
		for {
			page, err := h.Query(ctx, q)
			must(t, err)
			naive = append(naive, page.Entities...)
			if q.Continuation = page.Continuation; q.Continuation == "" {
				break
			}
		}
		if g := gens(naive); len(g) != 2 {
			t.Fatalf("the plain read saw generations %v: the writer did not race it", g)
		}

		// Read, with the writer racing its first two attempts.
		h.mu.Lock()
		h.nPage = 0
		h.mu.Unlock()
		pages := 0
		h.afterPage = func(n int) {
			pages++
			if n == 0 || n == 6 { // inside attempts 1 and 2 (5 pages each)
				next()
			}
		}
		p := open(t, h, "p", fast())
		snap, err := p.Read(ctx, &partition.ReadOptions{PageSize: 7})
		must(t, err)
		if g := gens(snap.Rows); len(g) != 1 || g[4] != 30 {
			t.Fatalf("Read returned generations %v, want all 30 rows of generation 4", g)
		}
		if snap.Attempts != 3 || snap.Requests != pages || snap.Fence.Version != 4 {
			t.Fatalf("attempts %d, requests %d (pages %d), fence version %d: want 3 attempts and version 4",
				snap.Attempts, snap.Requests, pages, snap.Fence.Version)
		}
		for _, e := range snap.Rows {
			if partition.IsReserved(e.RowKey) {
				t.Fatalf("Read returned the reserved row %+q", e.RowKey)
			}
		}
	})
}

// A read of a narrower range checks the fence before and after its pages.
func TestRangeReadRetriesWhenAWriterRaces(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		next := generations(t, tbl, "p", 30)
		h := &hookTable{Table: tbl}
		h.afterPage = func(n int) {
			if n == 0 {
				next()
			}
		}
		p := open(t, h, "p", fast())
		snap, err := p.Read(ctx, &partition.ReadOptions{Range: keys.PrefixRange("r1"), PageSize: 3})
		must(t, err)
		if g := gens(snap.Rows); len(g) != 1 || g[2] != 10 {
			t.Fatalf("range read returned generations %v, want the 10 rows r10-r19 of generation 2", g)
		}
		if snap.Rows[0].RowKey != "r10" || snap.Attempts != 2 || snap.Fence.Version != 2 {
			t.Fatalf("first row %q, attempts %d, version %d", snap.Rows[0].RowKey, snap.Attempts, snap.Fence.Version)
		}
		// A range reaching past the data (into the reserved keys) is cut to it.
		all, err := p.Read(ctx, &partition.ReadOptions{Range: keys.Range{Lower: "", Upper: "\uFFFF", HasUpper: true}})
		must(t, err)
		if len(all.Rows) != 30 {
			t.Fatalf("a range over every key read %d rows, want the 30 data rows", len(all.Rows))
		}
	})
}

// A writer that commits during every attempt makes Read give up with
// ErrInconsistentRead, saying why.
func TestReadGivesUpUnderConstantWrites(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := newTable(t, b)
		next := generations(t, tbl, "p", 10)
		h := &hookTable{Table: tbl, afterPage: func(int) { next() }}
		opts := fast()
		opts.ReadAttempts = 3
		p := open(t, h, "p", opts)
		for _, o := range []*partition.ReadOptions{{PageSize: 4}, {Range: keys.PrefixRange("r0"), PageSize: 4}} {
			_, err := p.Read(context.Background(), o)
			if !errors.Is(err, partition.ErrInconsistentRead) || !strings.Contains(err.Error(), "3 attempts") {
				t.Fatalf("Read under constant writes: %v, want ErrInconsistentRead after 3 attempts", err)
			}
		}
	})
}

// A read of a small partition costs one request, like a plain scan: the
// fence and the tail come in the same page. Where and Select shape the
// data rows only, and an empty partition reads as version 0.
func TestReadCostsAndShapes(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "p", nil)
		empty, err := p.Read(ctx, nil)
		must(t, err)
		if empty.Fence.Exists() || empty.Fence.Version != 0 || len(empty.Rows) != 0 || empty.Requests != 1 {
			t.Fatalf("empty partition: %+v", empty)
		}
		tx, err := p.BeginAt(empty.Fence)
		must(t, err)
		for i := range 5 {
			must(t, tx.Insert("row", row(fmt.Sprintf("r%d", i), "N", int64(i), "Version", "user's own")))
		}
		_, err = tx.Outbox(partition.Message{Topic: "t"})
		must(t, err)
		_, err = tx.Commit(ctx)
		must(t, err)

		snap, err := p.Read(ctx, nil)
		must(t, err)
		if len(snap.Rows) != 5 || snap.Requests != 1 || snap.Attempts != 1 || snap.Fence.Version != 1 {
			t.Fatalf("rows %d, requests %d, attempts %d, version %d: want 5 rows in 1 request at version 1",
				len(snap.Rows), snap.Requests, snap.Attempts, snap.Fence.Version)
		}
		shaped, err := p.Read(ctx, &partition.ReadOptions{Where: filter.Prop("N").Ge(int64(3)), Select: []string{"N"}})
		must(t, err)
		if len(shaped.Rows) != 2 || shaped.Fence.Version != 1 || !shaped.Fence.Exists() {
			t.Fatalf("Where N ge 3: %d rows, fence %+v", len(shaped.Rows), shaped.Fence)
		}
		for _, e := range shaped.Rows {
			if _, ok := e.Properties["N"]; !ok || len(e.Properties) != 1 {
				t.Fatalf("Select N returned %v", e.Properties)
			}
		}
		// Selecting the user's own "Version" keeps it on the data rows.
		mine, err := p.Read(ctx, &partition.ReadOptions{Select: []string{"Version"}})
		must(t, err)
		if mine.Rows[0].Properties["Version"] != "user's own" || mine.Fence.Version != 1 {
			t.Fatalf("Select Version: row %v, fence %d", mine.Rows[0].Properties, mine.Fence.Version)
		}
		bad := filter.Prop("N").Ge(1) // a Go int: the builder refuses it
		if _, err := p.Read(ctx, &partition.ReadOptions{Where: bad}); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("Read with a bad Where: %v", err)
		}
		if _, err := p.Read(ctx, &partition.ReadOptions{PageSize: 1001}); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("Read with PageSize 1001: %v", err)
		}
	})
}

// A tail row deleted outside the package makes reads fail (they cannot
// prove a state); the next commit writes it again.
func TestMissingTailIsReportedAndHealed(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		opts := fast()
		opts.ReadAttempts = 2
		p := open(t, tbl, "p", opts)
		tx := begin(t, p)
		must(t, tx.Insert("a", row("a")))
		_, err := tx.Commit(ctx)
		must(t, err)
		must(t, tbl.Delete(ctx, "p", partition.TailKey, store.ETagAny))
		if _, err := p.Read(ctx, nil); !errors.Is(err, partition.ErrInconsistentRead) || !strings.Contains(err.Error(), "tail row") {
			t.Fatalf("Read without a tail: %v", err)
		}
		tx = begin(t, p)
		must(t, tx.Insert("b", row("b")))
		_, err = tx.Commit(ctx)
		must(t, err)
		snap, err := p.Read(ctx, nil)
		must(t, err)
		if len(snap.Rows) != 2 || snap.Fence.Version != 2 {
			t.Fatalf("after the healing commit: %d rows, version %d", len(snap.Rows), snap.Fence.Version)
		}
	})
}

// Short and empty pages (as Azure returns at partition-server boundaries)
// do not confuse the boundary check: every row comes back, in one attempt.
func TestReadWithShortPages(t *testing.T) {
	most := 0
	for seed := range uint64(20) {
		b := backendtest.Memstore(memstore.WithShortPages(seed))
		tbl := newTable(t, b)
		generations(t, tbl, "p", 40)
		snap, err := open(t, tbl, "p", nil).Read(context.Background(), &partition.ReadOptions{PageSize: 9})
		must(t, err)
		if g := gens(snap.Rows); len(snap.Rows) != 40 || g[1] != 40 || snap.Attempts != 1 {
			t.Fatalf("seed %d: %d rows, generations %v, %d attempts", seed, len(snap.Rows), g, snap.Attempts)
		}
		most = max(most, snap.Requests)
	}
	if most <= 5 { // 42 rows in full pages of 9 take 5 requests
		t.Fatalf("no read took more than %d requests: the pages were never short", most)
	}
}
