package indexentity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// contended are options for many writers on one list: more tries, short
// pauses.
func contended() Options {
	return Options{Attempts: 64, Backoff: time.Millisecond, MaxBackoff: 30 * time.Millisecond}
}

// workers runs the engine's workers until stop is closed (nothing for a
// SamePartition table).
func (f *fixture) workers(t *testing.T, n int) (stop func()) {
	if f.place == SamePartition {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				k, err := f.eng.ProcessOnce(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if k == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// TestConcurrentAddsLoseNoID: many goroutines add employees with the same
// last name at once, while the engine's workers run; every id ends in the
// Joneses' list, once. On SamePartition the writers race for the list's
// index entity; elsewhere for the department's partition, and the steps
// for the list's index entity or blob.
func TestConcurrentAddsLoseNoID(t *testing.T) {
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				writers, each := 8, 10
				if !e.Fake() {
					writers, each = 6, 4
				}
				rs := newRaceStore(e.B.Store)
				f := newFixture(t, e, p, contended(), rs)
				stop := f.workers(t, 2)
				var wg sync.WaitGroup
				var n atomic.Int64
				for w := range writers {
					wg.Go(func() {
						for i := range each {
							v := Employee{Dept: "Sales", ID: idOf(w*1000 + i), First: fmt.Sprint(w), Last: "Jones"}
							if err := f.x.Insert(ctx, &v); err != nil {
								t.Error(err)
								return
							}
							n.Add(1)
						}
					})
				}
				wg.Wait()
				stop()
				f.drain(t)
				keys, err := f.x.Keys(ctx, f.scope("Sales"), "lastname", "Jones")
				if err != nil {
					t.Fatal(err)
				}
				c := f.check(t)
				t.Logf("%d writers, %d inserts, %d writes refused by a concurrent change and retried: %v", writers, n.Load(), rs.races.Load(), c)
				if len(keys) != writers*each || c.lost+c.duplicated+c.stale != 0 {
					t.Fatalf("the Joneses' list holds %d ids, want %d: %v", len(keys), writers*each, c)
				}
				if rs.races.Load() == 0 {
					t.Fatal("no write met a concurrent change: the test proves nothing")
				}
			})
		})
	}
}

// TestConcurrentMovesKeepListsExact: goroutines change the last names of
// a few employees at random (updates conditional on the ETag they read,
// deletes, re-inserts) while the workers run; at the end every list
// matches a full scan of the entities exactly.
func TestConcurrentMovesKeepListsExact(t *testing.T) {
	names := []string{"Jones", "Smith", "Brown", ""}
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				writers, rounds, people := 6, 25, 12
				if !e.Fake() {
					writers, rounds, people = 4, 8, 8
				}
				rs := newRaceStore(e.B.Store)
				f := newFixture(t, e, p, contended(), rs)
				dept := func(i int) string { return []string{"Sales", "Marketing"}[i%2] }
				for i := range people {
					v := Employee{Dept: dept(i), ID: idOf(i), Last: names[i%len(names)]}
					must(t, f.x.Insert(ctx, &v))
				}
				stop := f.workers(t, 2)
				var wg sync.WaitGroup
				var moves, deletes, inserts, conflicts atomic.Int64
				for w := range writers {
					wg.Go(func() {
						r := rand.New(rand.NewPCG(uint64(w), 99))
						for range rounds {
							i := r.IntN(people)
							v, err := f.x.Get(ctx, dept(i), idOf(i))
							switch {
							case errors.Is(err, store.ErrNotFound):
								v = Employee{Dept: dept(i), ID: idOf(i), Last: names[r.IntN(len(names))]}
								err = f.x.Insert(ctx, &v)
								if err == nil {
									inserts.Add(1)
								}
							case err != nil:
							case r.IntN(5) == 0:
								err = f.x.Delete(ctx, &v)
								if err == nil {
									deletes.Add(1)
								}
							default:
								v.Last = names[r.IntN(len(names))]
								err = f.x.Update(ctx, &v)
								if err == nil {
									moves.Add(1)
								}
							}
							switch {
							case err == nil:
							case errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAlreadyExists):
								conflicts.Add(1) // another writer got there first
							default:
								t.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				stop()
				f.drain(t)
				c := f.check(t)
				t.Logf("%d writers: %d moves, %d deletes, %d inserts, %d lost to another writer, %d writes refused by a concurrent change and retried; %v",
					writers, moves.Load(), deletes.Load(), inserts.Load(), conflicts.Load(), rs.races.Load(), c)
				if c.lost+c.duplicated+c.stale != 0 {
					t.Fatalf("check: %v", c)
				}
				if moves.Load() == 0 || rs.races.Load() == 0 {
					t.Fatal("no update went through, or no write met a concurrent change: the test proves nothing")
				}
			})
		})
	}
}
