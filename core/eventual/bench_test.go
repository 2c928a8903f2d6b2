package eventual_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkDrainAzurite measures how fast the worker drains two-step
// operations on Azurite with 8 operations in flight against one at a
// time, in interleaved rounds (the order alternates), and reports the
// per-round ratio: straight to Azurite (whose single JavaScript thread
// then bounds the figure), and through a loopback proxy that adds 5 ms to
// every request, as a network round trip to the service does. Run it with
//
//	TABLEKIT_EVENTUAL_ROUNDS=20 scripts/with-azurite.sh go test -run '^$' -bench DrainAzurite -benchtime 1x -timeout 60m ./core/eventual/
//
// Each round queues TABLEKIT_EVENTUAL_OPS operations (default 500) per
// case and drains them (default 2 rounds): Azurite's queue slows down as
// it grows (2,500 queued messages drain at a fifth of the rate of 500),
// so the operations are queued a round at a time. Each operation upserts
// one row into each of two tables, then the worker deletes its message.
func BenchmarkDrainAzurite(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchDrain(b, 0) })
	b.Run("rtt5ms", func(b *testing.B) { benchDrain(b, 5*time.Millisecond) })
}

func benchDrain(b *testing.B, rtt time.Duration) {
	ops := 500
	if v, err := strconv.Atoi(os.Getenv("TABLEKIT_EVENTUAL_OPS")); err == nil && v > 0 {
		ops = v
	}
	bk := backendtest.AzuriteBehindDelay(b, rtt)
	ctx := context.Background()
	t1, t2 := bk.NewTable(b, "drainA"), bk.NewTable(b, "drainB")
	suffix := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
	engines := map[int]*eventual.Engine{}
	for _, c := range []int{1, 8} {
		eng, err := eventual.New(bk.Store, fmt.Sprintf("drain%d-%s", c, suffix), &eventual.Options{Concurrency: c, PollInterval: 10 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		if err := eng.Setup(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = bk.Store.Queue(fmt.Sprintf("drain%d-%s", c, suffix)).Delete(context.Background())
			_ = bk.Store.Queue(fmt.Sprintf("drain%d-%s-poison", c, suffix)).Delete(context.Background())
		})
		engines[c] = eng
	}
	submit := func(eng *eventual.Engine, round, c int) {
		for i := range ops {
			rk := fmt.Sprintf("r%d-c%d-%06d", round, c, i)
			op := eventual.Operation{Steps: []eventual.Step{
				eventual.Upsert(t1, store.Entity{PartitionKey: fmt.Sprintf("p%d", i%16), RowKey: rk, Properties: map[string]any{"N": int64(i)}}),
				eventual.Upsert(t2, store.Entity{PartitionKey: fmt.Sprintf("q%d", i%16), RowKey: rk, Properties: map[string]any{"N": int64(i)}}),
			}}
			if err := eng.Submit(ctx, op); err != nil {
				b.Fatal(err)
			}
		}
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("TABLEKIT_EVENTUAL_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	var ratios []float64
	var per = map[int][]time.Duration{}
	for round := range rounds {
		order := []int{1, 8}
		if round%2 == 1 {
			order = []int{8, 1}
		}
		took := map[int]time.Duration{}
		for _, c := range order {
			submit(engines[c], round, c)
			start := time.Now()
			if err := engines[c].Drain(ctx); err != nil {
				b.Fatal(err)
			}
			took[c] = time.Since(start)
			per[c] = append(per[c], took[c])
		}
		ratios = append(ratios, float64(took[1])/float64(took[8]))
		b.Logf("round %d: %d operations at 1 in flight %v (%.0f ops/s), at 8 in flight %v (%.0f ops/s): %.2fx",
			round, ops, took[1].Round(time.Millisecond), float64(ops)/took[1].Seconds(), took[8].Round(time.Millisecond), float64(ops)/took[8].Seconds(), ratios[len(ratios)-1])
	}
	var sum1, sum8 time.Duration
	for i := range per[1] {
		sum1 += per[1][i]
		sum8 += per[8][i]
	}
	slices.Sort(ratios)
	b.Logf("%d operations per case: 1 in flight %v, 8 in flight %v: %.2fx overall; per-round ratios median %.2fx (%.2f-%.2f)",
		rounds*ops, sum1.Round(time.Millisecond), sum8.Round(time.Millisecond), float64(sum1)/float64(sum8), ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
	b.ReportMetric(ratios[len(ratios)/2], "speedup-8-vs-1")
	b.ReportMetric(float64(rounds*ops)/sum8.Seconds(), "ops/s-at-8")
}
