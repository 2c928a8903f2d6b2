package store_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// Random workloads: every transaction the writer forms is one the service
// accepts, each partition's writes arrive in input order, and every cut
// between two transactions of a partition has a reason (100 actions, the
// size limit, or a repeated RowKey).
func TestBulkPlanInvariants(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			var actions []store.Action
			for range 50 + rng.IntN(400) {
				pk := fmt.Sprintf("p%d", rng.IntN(4))
				rk := fmt.Sprintf("r%d", rng.IntN(150)) // repeats are common
				props := map[string]any{"N": rng.Int64()}
				if rng.IntN(10) == 0 { // some writes are large
					props["Blob"] = bytes.Repeat([]byte{1}, 40_000+rng.IntN(25_000))
					props["Blob2"] = bytes.Repeat([]byte{2}, 60_000)
				}
				kind := store.ActionUpsertReplace
				if rng.IntN(3) == 0 {
					kind = store.ActionUpsertMerge
				}
				actions = append(actions, store.Action{Kind: kind, Entity: store.Entity{PartitionKey: pk, RowKey: rk, Properties: props}})
			}
			ordered := seed%2 == 0
			f := &fakeTable{}
			res, err := write(t, f, store.BulkOptions{Concurrency: 3, PartitionOrder: ordered}, actions)
			if err != nil {
				t.Fatal(err)
			}
			if f.rowClash || (ordered && f.overlap) {
				t.Fatalf("transactions ran at once that must not: on one entity %v, on one partition with PartitionOrder %v", f.rowClash, ordered && f.overlap)
			}
			if res.Written != len(actions) || res.Batches != len(f.calls) {
				t.Fatalf("written %d of %d in %d calls (%d batches)", res.Written, len(actions), len(f.calls), res.Batches)
			}
			byPart := map[string][][]store.Action{}
			for _, c := range f.calls {
				pk := c[0].Entity.PartitionKey
				byPart[pk] = append(byPart[pk], c)
			}
			for pk, calls := range byPart {
				var want []store.Action
				for _, a := range actions {
					if a.Entity.PartitionKey == pk {
						want = append(want, a)
					}
				}
				var got []store.Action
				for k, c := range calls {
					got = append(got, c...)
					if k+1 == len(calls) {
						continue
					}
					next := calls[k+1][0]
					full := len(c) == store.MaxBatchActions
					tooBig := wireSize(c)+store.ActionWireSize(&next) >= store.MaxBatchBytes
					dup := slices.ContainsFunc(c, func(a store.Action) bool { return a.Entity.RowKey == next.Entity.RowKey })
					if !full && !tooBig && !dup {
						t.Fatalf("partition %s: transaction %d (%d actions) was cut before %s without a reason", pk, k, len(c), next.Entity.RowKey)
					}
				}
				if ordered && keysOf(got) != keysOf(want) {
					t.Fatalf("partition %s: writes arrived out of input order", pk)
				}
				// Writes to one entity always arrive in input order.
				if !ordered && byRow(got) != byRow(want) {
					t.Fatalf("partition %s: writes to one entity arrived out of input order", pk)
				}
			}
		})
	}
}

// byRow lists writes by RowKey, each entity's writes in the order given,
// named by their N property.
func byRow(as []store.Action) string {
	out := slices.Clone(as)
	slices.SortStableFunc(out, func(a, b store.Action) int { return strings.Compare(a.Entity.RowKey, b.Entity.RowKey) })
	var b strings.Builder
	for _, a := range out {
		fmt.Fprintf(&b, "%s:%v ", a.Entity.RowKey, a.Entity.Properties["N"])
	}
	return b.String()
}
