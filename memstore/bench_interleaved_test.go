package memstore

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
)

// sinkEntity keeps the baseline's copy from being optimized away.
var sinkEntity store.Entity

// BenchmarkPointGetInterleaved runs a point get on a table of 1,000
// entities of 10 properties against its baseline, interleaved: a map
// behind a sync.RWMutex (read-locked for the lookup) holding the same
// entities, each read returning a copy of the properties made the way a
// user would write it (maps.Clone), with the same key formatting. Run it
// with
//
//	go test -run '^$' -bench '^BenchmarkPointGetInterleaved$' -benchtime 1x ./memstore/
func BenchmarkPointGetInterleaved(b *testing.B) {
	defer dropLoadedTables()
	const n = 1_000
	var mu sync.RWMutex
	m := make(map[[2]string]store.Entity, n)
	for i := range n {
		pk, rk := fmt.Sprintf("p%03d", i%10), rowKey(i/10)
		m[[2]string{pk, rk}] = benchEntity(pk, rk, i)
	}
	t := loadedTable(b, n)
	ctx := context.Background()
	rep, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: 30 * time.Millisecond},
		interleave.Case{Name: "RWMutex-map+maps.Clone", Op: func(i int) error {
			j := (i * 7919) % n
			mu.RLock()
			e, ok := m[[2]string{fmt.Sprintf("p%03d", j%10), rowKey(j / 10)}]
			mu.RUnlock()
			if !ok {
				return fmt.Errorf("missing %d", j)
			}
			e.Properties = maps.Clone(e.Properties)
			sinkEntity = e
			return nil
		}},
		interleave.Case{Name: "memstore.Get", Op: func(i int) error {
			j := (i * 7919) % n
			_, err := t.Get(ctx, fmt.Sprintf("p%03d", j%10), rowKey(j/10), nil)
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}
