package partition_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// Many goroutines move money between three accounts of one partition,
// each transfer a read of the partition and a commit on top of it that
// rewrites two balances unconditionally, bumps a counter and adds a
// ledger row. Only the fence orders them. At the end: the money is all
// there (no torn transfer), every transfer is in the ledger once with its
// own version, versions run without a gap, and replaying the ledger in
// version order from the opening balances gives the final balances (no
// transfer was computed on a stale read: no lost update).
func TestConcurrentWritersNeverInterleave(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "bank", fast())
		workers, each := 8, 25
		if b.Short() {
			workers, each = 4, 8
		}
		accounts := []string{"acct_a", "acct_b", "acct_c"}
		const opening = int64(1000)
		tx := begin(t, p)
		for _, a := range accounts {
			must(t, tx.Insert(a, row(a, "Balance", opening)))
		}
		must(t, tx.Insert("counter", row("counter", "N", int64(0))))
		_, err := tx.Commit(ctx)
		must(t, err)

		var conflicts atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for i := range each {
					for {
						err := transfer(ctx, p, rng, accounts, fmt.Sprintf("ledger_%02d_%03d", w, i))
						if err == nil {
							break
						}
						if !errors.Is(err, partition.ErrConflict) {
							errs <- err
							return
						}
						conflicts.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		snap, err := p.Read(ctx, nil)
		must(t, err)
		commits := int64(workers * each)
		balance := map[string]int64{}
		var ledger []store.Entity
		var counter int64
		for _, e := range snap.Rows {
			switch {
			case e.RowKey == "counter":
				counter = e.Properties["N"].(int64)
			case e.RowKey[:5] == "acct_":
				balance[e.RowKey] = e.Properties["Balance"].(int64)
			default:
				ledger = append(ledger, e)
			}
		}
		var total int64
		for _, v := range balance {
			total += v
		}
		if total != opening*int64(len(accounts)) {
			t.Fatalf("balances %v sum to %d, want %d: a transfer was torn", balance, total, opening*3)
		}
		if counter != commits || int64(len(ledger)) != commits || snap.Fence.Version != commits+1 {
			t.Fatalf("counter %d, ledger rows %d, version %d: want %d, %d, %d", counter, len(ledger), snap.Fence.Version, commits, commits, commits+1)
		}
		sort.Slice(ledger, func(i, j int) bool {
			return ledger[i].Properties["Version"].(int64) < ledger[j].Properties["Version"].(int64)
		})
		replay := map[string]int64{}
		for _, a := range accounts {
			replay[a] = opening
		}
		for i, e := range ledger {
			if v := e.Properties["Version"].(int64); v != int64(i)+2 {
				t.Fatalf("ledger row %d has version %d, want %d: versions skip or repeat", i, v, i+2)
			}
			from, to, amt := e.Properties["From"].(string), e.Properties["To"].(string), e.Properties["Amount"].(int64)
			if e.Properties["FromBefore"].(int64) != replay[from] || e.Properties["ToBefore"].(int64) != replay[to] {
				t.Fatalf("transfer at version %d read %s=%d %s=%d, but the state before it was %d and %d: a lost update",
					i+2, from, e.Properties["FromBefore"], to, e.Properties["ToBefore"], replay[from], replay[to])
			}
			replay[from] -= amt
			replay[to] += amt
		}
		for _, a := range accounts {
			if replay[a] != balance[a] {
				t.Fatalf("replayed %s = %d, stored %d", a, replay[a], balance[a])
			}
		}
		t.Logf("%s: writers %d, commits %d, conflicts retried %d, torn 0, lost updates 0", b.Name, workers, commits, conflicts.Load())
	})
}

// transfer reads the partition and commits one transfer on top of it.
func transfer(ctx context.Context, p *partition.Partition, rng *rand.Rand, accounts []string, ledgerKey string) error {
	snap, err := p.Read(ctx, nil)
	if err != nil {
		return err
	}
	state := map[string]int64{}
	for _, e := range snap.Rows {
		if n, ok := e.Properties["Balance"].(int64); ok {
			state[e.RowKey] = n
		}
		if n, ok := e.Properties["N"].(int64); ok {
			state["counter"] = n
		}
	}
	from := accounts[rng.IntN(len(accounts))]
	to := accounts[(indexOf(accounts, from)+1+rng.IntN(len(accounts)-1))%len(accounts)]
	amt := int64(1 + rng.IntN(50))
	tx, err := p.BeginAt(snap.Fence)
	if err != nil {
		return err
	}
	for _, e := range []store.Entity{
		row(from, "Balance", state[from]-amt),
		row(to, "Balance", state[to]+amt),
		row("counter", "N", state["counter"]+1),
	} {
		if err := tx.Upsert(e.RowKey, e, store.Replace); err != nil {
			return err
		}
	}
	if err := tx.Insert("ledger", row(ledgerKey, "From", from, "To", to, "Amount", amt,
		"FromBefore", state[from], "ToBefore", state[to], "Version", snap.Fence.Version+1)); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}
