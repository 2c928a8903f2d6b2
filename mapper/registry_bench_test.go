package mapper

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkRegistryQuery reads a partition of 1,000 entities of two kinds
// (a property registry: 500 of rgB, 500 of rgA2 with extra properties on
// both sides of the discriminator) with RegistryTable.Query, on the typed
// lane and on the store.Entity route (the table wrapped without the lane),
// interleaved in 21 rounds. Figures are per entity. Run it with
//
//	go test -run '^$' -bench RegistryQuery -benchtime 1x ./mapper/
//	scripts/with-azurite.sh go test -run '^$' -bench RegistryQuery -benchtime 1x ./mapper/
func BenchmarkRegistryQuery(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchRegistryQuery(b, backendtest.Memstore().Store, 30*time.Millisecond) })
	b.Run("azurite", func(b *testing.B) { benchRegistryQuery(b, backendtest.Azurite(b).Store, 300*time.Millisecond) })
}

func benchRegistryQuery(b *testing.B, st store.Store, slice time.Duration) {
	ctx := context.Background()
	table := fmt.Sprintf("RegBench%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, table); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(context.WithoutCancel(ctx), table)
	r, err := NewPropertyRegistry("Kind")
	if err != nil {
		b.Fatal(err)
	}
	if err := Register[rgA2](r, "a"); err != nil {
		b.Fatal(err)
	}
	if err := Register[rgB](r, "b"); err != nil {
		b.Fatal(err)
	}
	const n = 1000
	var actions []store.Action
	for i := range n {
		var v any = &rgB{P: "p", R: fmt.Sprintf("r%05d", i), When: time.Unix(int64(i), 0).UTC(), Blob: []byte{1, 2, 3}, F: 1.5, OK: true}
		if i%2 == 1 {
			v = &rgA2{P: "p", R: fmt.Sprintf("r%05d", i), First: "Ann", Last: "Jones", N: int64(i), Rest: map[string]any{"Aaa": "x", "Zzz": int32(i)}}
		}
		e, err := r.Encode(v)
		if err != nil {
			b.Fatal(err)
		}
		actions = append(actions, store.Action{Kind: store.ActionInsert, Entity: e})
	}
	if _, err := store.NewBulkWriter(st.Table(table), store.BulkOptions{}).Write(ctx, actions); err != nil {
		b.Fatal(err)
	}
	read := func(rt *RegistryTable) func(int) error {
		return func(int) error {
			got := 0
			for v, err := range rt.Query(ctx) {
				if err != nil {
					return err
				}
				switch v.(type) {
				case rgA2, rgB:
				default:
					return fmt.Errorf("read a %T", v)
				}
				got++
			}
			if got != n {
				return fmt.Errorf("read %d, want %d", got, n)
			}
			return nil
		}
	}
	for range b.N {
		rep, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: slice, CollectGarbage: true},
			interleave.Case{Name: "RegistryTable.Query/entity-route", Ops: n, Op: read(r.On(entityRoute{st}, table))},
			interleave.Case{Name: "RegistryTable.Query/typed", Ops: n, Op: read(r.On(st, table))},
		)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
		rep.Metrics(b.ReportMetric)
	}
}
