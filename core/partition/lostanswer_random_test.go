package partition_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// faultyNet stands between the writers and the table: for each request it
// draws, from a seeded source, whether the request passes, is applied and
// its answer lost, is lost before it reaches the service, or is delayed:
// held and delivered at a random later request (or at the very end).
type faultyNet struct {
	mu   sync.Mutex
	rng  *rand.Rand
	held [][]store.Action
	// counts
	passed, lostAfter, lostBefore, delayed, lateLanded, lateRefused int
}

func (f *faultyNet) transact(ctx context.Context, _ int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
	f.mu.Lock()
	r := f.rng.IntN(100)
	var late [][]store.Action
	if len(f.held) > 0 && f.rng.IntN(3) == 0 {
		i := f.rng.IntN(len(f.held))
		late = append(late, f.held[i])
		f.held = append(f.held[:i], f.held[i+1:]...)
	}
	if r >= 85 {
		f.held = append(f.held, a)
		f.delayed++
	}
	f.mu.Unlock()
	for _, l := range late {
		f.deliver(in, l)
	}
	switch {
	case r < 15:
		if _, err := in.Transact(ctx, a); err != nil {
			return nil, err // refused: the answer would not be lost
		}
		f.count(&f.lostAfter)
		return nil, lostAnswer()
	case r < 25:
		f.count(&f.lostBefore)
		return nil, lostAnswer()
	case r >= 85:
		return nil, lostAnswer()
	}
	f.count(&f.passed)
	return in.Transact(ctx, a)
}

func (f *faultyNet) count(n *int) {
	f.mu.Lock()
	*n++
	f.mu.Unlock()
}

// deliver lets a delayed request reach the service.
func (f *faultyNet) deliver(in store.Table, a []store.Action) {
	_, err := in.Transact(context.Background(), a)
	if err == nil {
		f.count(&f.lateLanded)
	} else {
		f.count(&f.lateRefused)
	}
}

// Writers add operations to one partition (each an operation row and a
// counter increment) through a network that loses, drops and delays
// requests at random. A writer retries an operation only when told it did
// not apply. At the end every operation reported applied is there exactly
// once, none reported not applied is there, and the counter equals the
// number of operations: lost 0, duplicated 0, unknown 0.
func TestLostAnswersUnderConcurrencyAreExact(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		seeds, workers, each := 6, 6, 12
		if b.Short() {
			seeds, workers, each = 2, 3, 6
		}
		for seed := range seeds {
			pk := fmt.Sprintf("seed%d", seed)
			net := &faultyNet{rng: rand.New(rand.NewPCG(uint64(seed), 99))}
			opts := fast()
			opts.History = partition.MaxHistory
			p := open(t, &hookTable{Table: tbl, transact: net.transact}, pk, opts)

			var mu sync.Mutex
			reported := map[string]bool{} // op -> reported applied
			var recovered, notApplied, conflicts, duplicated, unknownN int
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						op := fmt.Sprintf("op_%d_%02d", w, i)
						for attempt := 0; ; attempt++ {
							res, err := addOp(ctx, p, op)
							mu.Lock()
							switch {
							case err == nil:
								reported[op] = true
								if res.Recovered {
									recovered++
								}
							case errors.Is(err, partition.ErrConflict):
								conflicts++
							case errors.As(err, new(*partition.NotAppliedError)):
								notApplied++
							case errors.Is(err, partition.ErrDuplicate):
								duplicated++ // an earlier attempt applied though reported not applied
								reported[op] = true
							case errors.Is(err, store.ErrUnknownOutcome):
								unknownN++
								t.Errorf("%s: %v", op, err)
							default:
								t.Errorf("%s: %v", op, err)
							}
							done := err == nil || errors.Is(err, partition.ErrDuplicate) || errors.Is(err, store.ErrUnknownOutcome) ||
								!(errors.Is(err, partition.ErrConflict) || errors.Is(err, store.ErrTransient))
							mu.Unlock()
							if done {
								break
							}
						}
					}
				}()
			}
			wg.Wait()
			// Requests still delayed arrive now; every one must be refused.
			landedBefore := net.lateLanded
			for _, a := range net.held {
				net.deliver(tbl, a)
			}
			if net.lateLanded != landedBefore {
				t.Fatalf("seed %d: a request delayed past its resolution landed", seed)
			}

			snap, err := open(t, tbl, pk, nil).Read(ctx, nil)
			must(t, err)
			present := map[string]bool{}
			var counter int64
			for _, e := range snap.Rows {
				if e.RowKey == "counter" {
					counter = e.Properties["N"].(int64)
					continue
				}
				present[e.RowKey] = true
			}
			lost := 0
			for op := range reported {
				if !present[op] {
					lost++
				}
			}
			extra := 0
			for op := range present {
				if !reported[op] {
					extra++
				}
			}
			if lost != 0 || extra != 0 || duplicated != 0 || unknownN != 0 || counter != int64(len(present)) || len(present) != workers*each {
				t.Fatalf("seed %d: ops %d, present %d, counter %d, lost %d, applied but reported not %d, duplicated %d, unknown %d",
					seed, workers*each, len(present), counter, lost, extra, duplicated, unknownN)
			}
			t.Logf("%s seed %d: ops %d, requests passed %d, answers lost after applying %d, lost before %d, delayed %d (landed late %d, refused late %d); recovered %d, not applied %d, conflicts %d; lost 0, duplicated 0, unknown 0",
				b.Name, seed, workers*each, net.passed, net.lostAfter, net.lostBefore, net.delayed, net.lateLanded, net.lateRefused,
				recovered, notApplied, conflicts)
		}
	})
}

// addOp reads the partition and commits one operation on top of it: its
// own row and the counter, one more.
func addOp(ctx context.Context, p *partition.Partition, op string) (*partition.Result, error) {
	snap, err := p.Read(ctx, nil)
	if err != nil {
		return nil, err
	}
	var n int64
	for _, e := range snap.Rows {
		if e.RowKey == "counter" {
			n = e.Properties["N"].(int64)
		}
	}
	tx, err := p.BeginAt(snap.Fence)
	if err != nil {
		return nil, err
	}
	if err := tx.Insert("op", row(op)); err != nil {
		return nil, err
	}
	if err := tx.Upsert("counter", row("counter", "N", n+1), store.Replace); err != nil {
		return nil, err
	}
	return tx.Commit(ctx)
}
