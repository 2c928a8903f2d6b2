package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// appendFaultsTests proves that an append is never applied twice nor
// reported failed when it landed: the outcome matrix, then randomized
// schedules.
func (s *suite) appendFaultsTests(t *testing.T) {
	s.appendFaultMatrix(t)
	s.run(t, "AppendRandomSchedules", s.appendRandomSchedules)
}

// faultyContainer makes a store under sched and a container on it holding
// an append blob "a" with the 4 bytes "head". The schedule must let
// requests through until armed.
func (s *suite) faultyContainer(t *testing.T, sched Schedule) store.Container {
	t.Helper()
	c := s.h.Faults(t, sched).Container(s.names.next())
	must(t, c.Create(t.Context()), "Container.Create")
	t.Cleanup(func() { _ = c.Delete(context.Background()) })
	mustCreateAppend(t, c, "a")
	mustAppend(t, c, "a", []byte("head"), nil)
	return c
}

// appendFaultMatrix: an append under every fault of its first request,
// with and without an append position:
//
//   - with a position, the append is done whether the fault came before
//     or after the service applied it (resent under the same position,
//     settled by a read-back), and the block is stored once; a 503 may
//     also be reported throttled, with nothing stored;
//   - without one, a lost answer leaves the outcome unknown (never
//     "failed", never resent): the block is stored once or not at all.
func (s *suite) appendFaultMatrix(t *testing.T) {
	for _, positioned := range []bool{true, false} {
		for f := FaultBusy; f < numFaults; f++ {
			name := "AppendOutcome/Positioned/" + f.String()
			if !positioned {
				name = "AppendOutcome/Unconditional/" + f.String()
			}
			s.run(t, name, func(t *testing.T) {
				var armed, used atomic.Bool
				c := s.faultyContainer(t, func(r Request) Fault {
					if armed.Load() && r.Write && used.CompareAndSwap(false, true) {
						return f
					}
					return FaultNone
				})
				var opts *store.AppendOptions
				if positioned {
					opts = &store.AppendOptions{AppendPosition: new(int64(4))}
				}
				armed.Store(true)
				res, err := c.AppendBlock(t.Context(), "a", []byte("block"), opts)
				armed.Store(false)
				if !used.Load() {
					t.Fatal("the fault was never injected")
				}
				data, _, gerr := c.Get(t.Context(), "a")
				must(t, gerr, "reading the blob back")
				n := bytes.Count(data, []byte("block"))
				if n > 1 {
					t.Fatalf("the block is stored %d times: %q", n, data)
				}
				switch {
				case err == nil:
					if n != 1 || res.Offset != 4 || res.Size != 9 {
						t.Fatalf("reported done at offset %d (size %d), stored %q", res.Offset, res.Size, data)
					}
				case errors.Is(err, store.ErrUnknownOutcome):
					if positioned {
						t.Fatalf("got %v: an append with a position is settled, not left unknown", err)
					}
				case f == FaultBusy && errors.Is(err, store.ErrThrottled):
					if n != 0 {
						t.Fatalf("reported throttled, stored %q", data)
					}
				default:
					t.Fatalf("got %v under %v: want done, unknown, or throttled for a 503", err, f)
				}
				if !positioned && f != FaultBusy && (err == nil) {
					t.Fatalf("an append without a position was reported done after a lost answer: it cannot be settled")
				}
			})
		}
	}
}

// appendCounts are the totals of the randomized append schedules.
type appendCounts struct {
	runs, faults, appends, done, failed, unknown int
	// positionedUnknown counts the unknown outcomes of appends with a
	// position: the resends or read-backs failed too.
	positionedUnknown int
	// lost: reported done, not stored. duplicated: stored more than once.
	// clobbered: reported failed, yet the blob changed.
	lost, duplicated, clobbered int
}

func (c appendCounts) String() string {
	return fmt.Sprintf("runs %d, faults %d, appends %d: done %d, failed %d, unknown %d (%d with a position); lost %d, duplicated %d, clobbered %d",
		c.runs, c.faults, c.appends, c.done, c.failed, c.unknown, c.positionedUnknown, c.lost, c.duplicated, c.clobbered)
}

// appendRandomSchedules runs seeded sequences of appends under random
// faults on every request (the read-backs included), some with a stale
// position as if another writer had appended, some without a position,
// and checks the blob after each: a block reported done is stored once, a
// block reported failed is not stored, an unknown one at most once.
func (s *suite) appendRandomSchedules(t *testing.T) {
	runs := s.h.FaultRuns
	if runs <= 0 {
		runs = 200
	}
	var total appendCounts
	for run := range runs {
		c := s.appendRandomRun(t, uint64(run)+1)
		total.runs++
		total.faults += c.faults
		total.appends += c.appends
		total.done += c.done
		total.failed += c.failed
		total.unknown += c.unknown
		total.positionedUnknown += c.positionedUnknown
		total.lost += c.lost
		total.duplicated += c.duplicated
		total.clobbered += c.clobbered
		if t.Failed() {
			t.Fatalf("seed %d failed: %v", run+1, c)
		}
	}
	t.Logf("randomized append fault schedules: %v", total)
	if total.lost+total.duplicated+total.clobbered != 0 {
		t.Fatalf("outcomes disagree with the stored blob: %v", total)
	}
	if total.done+total.failed+total.unknown != total.appends {
		t.Fatalf("outcomes do not add up: %v", total)
	}
	if total.faults == 0 || total.done == 0 || total.failed == 0 {
		t.Fatalf("the schedules injected no faults, or appended or refused nothing: %v", total)
	}
}

// appendRandomRun is one seeded schedule of 12 appends.
func (s *suite) appendRandomRun(t *testing.T, seed uint64) appendCounts {
	var c appendCounts
	var on atomic.Bool
	cont := s.faultyContainer(t, randomFaults(seed, 0xa99e, &on, &c.faults))
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	model := []byte("head")
	ctx := context.Background()
	for op := range 12 {
		block := fmt.Appendf(nil, "[s%d-o%d]", seed, op)
		var opts *store.AppendOptions
		switch rng.IntN(5) {
		case 0: // no position
		case 1: // a stale position: another writer appended since
			opts = &store.AppendOptions{AppendPosition: new(int64(len(model) - 1))}
		default:
			opts = &store.AppendOptions{AppendPosition: new(int64(len(model)))}
		}
		on.Store(true)
		res, err := cont.AppendBlock(ctx, "a", block, opts)
		on.Store(false)
		data, _, gerr := cont.Get(ctx, "a")
		must(t, gerr, "reading the blob back")
		c.appends++
		n := bytes.Count(data, block)
		with := append(append([]byte{}, model...), block...)
		switch {
		case errors.Is(err, store.ErrUnknownOutcome):
			c.unknown++
			if opts != nil {
				c.positionedUnknown++
			}
			if !bytes.Equal(data, model) && !bytes.Equal(data, with) {
				c.duplicated++
				t.Errorf("seed %d op %d: unknown outcome (%v), blob %q: neither %q nor %q", seed, op, err, data, model, with)
			}
		case err != nil:
			c.failed++
			if !bytes.Equal(data, model) {
				c.clobbered++
				t.Errorf("seed %d op %d: reported failed (%v), but the blob changed to %q", seed, op, err, data)
			}
		default:
			c.done++
			switch {
			case n == 0:
				c.lost++
				t.Errorf("seed %d op %d: reported done, blob %q lacks %q", seed, op, data, block)
			case n > 1 || !bytes.Equal(data, with):
				c.duplicated++
				t.Errorf("seed %d op %d: reported done, blob %q, want %q", seed, op, data, with)
			case res.Offset != int64(len(model)) || res.Size != int64(len(with)):
				t.Errorf("seed %d op %d: reported offset %d size %d, want %d and %d", seed, op, res.Offset, res.Size, len(model), len(with))
			}
		}
		model = data
	}
	return c
}
