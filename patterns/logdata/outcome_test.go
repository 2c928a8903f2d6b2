package logdata

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/faultproxy"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// faultCounts are the totals of the randomized fault runs.
type faultCounts struct {
	runs, faults, records, appends, blobs, settled, closes int
	lost, duplicated, reordered                            int
}

func (c faultCounts) String() string {
	return fmt.Sprintf("runs %d, faults %d, records %d in %d appends to %d blobs (%d settled by a later read-back, %d Close calls): lost %d, duplicated %d, out of order %d",
		c.runs, c.faults, c.records, c.appends, c.blobs, c.settled, c.closes, c.lost, c.duplicated, c.reordered)
}

// faultRun writes records through a writer on st while faults are armed,
// then reads them back with the faults off and counts what went wrong.
// Every record Write accepted must be read back exactly once, in order.
func faultRun(t *testing.T, st store.Store, armed *atomic.Bool, seed uint64, n int, c *faultCounts) {
	t.Helper()
	cont := newContainer(t, st)
	rng := rand.New(rand.NewPCG(seed, 0x109))
	clk := newClock(at(15, 59, 30))
	w := mustWriter(t, cont, "f", Options{ID: fmt.Sprintf("s%d", seed), BlockSize: 256, Clock: clk.Now})
	ctx := context.Background()
	var want []string
	armed.Store(true)
	for i := range n {
		s := fmt.Sprintf("seed %d record %d", seed, i)
		if err := w.Write(ctx, []byte(s)); err != nil {
			armed.Store(false)
			t.Fatalf("seed %d: Write %d: %v (no backlog expected)", seed, i, err)
		}
		want = append(want, s)
		clk.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		if rng.IntN(8) == 0 {
			_ = w.Flush(ctx) // may fail: the records stay buffered
		}
	}
	var err error
	for range 100 {
		c.closes++
		if err = w.Close(ctx); err == nil {
			break
		}
	}
	armed.Store(false)
	if err != nil {
		t.Fatalf("seed %d: Close kept failing: %v", seed, err)
	}
	got := payloads(readAll(t, cont, "f", ReaderOptions{}, at(15, 0, 0), at(17, 0, 0)))
	seen := map[string]int{}
	for _, s := range got {
		seen[s]++
	}
	for _, s := range want {
		switch seen[s] {
		case 0:
			c.lost++
			t.Errorf("seed %d: %q was accepted and never appended", seed, s)
		case 1:
		default:
			c.duplicated++
			t.Errorf("seed %d: %q appended %d times", seed, s, seen[s])
		}
	}
	if len(got) == len(want) && !slices.Equal(got, want) {
		c.reordered++
		t.Errorf("seed %d: records out of order: %q", seed, got)
	}
	st2 := w.Stats()
	c.runs++
	c.records += len(want)
	c.appends += int(st2.Blocks)
	c.blobs += int(st2.Blobs)
	c.settled += int(st2.Settled)
}

// Appends are not idempotent: under random faults on every blob request
// (refusals, 500s and lost answers, before and after the service applied
// them, the read-backs included) no accepted record is lost or written
// twice. On memstore through its fault schedule.
func TestFaultsNeverLoseOrDuplicateMemstore(t *testing.T) {
	var c faultCounts
	runs := 100
	for seed := range uint64(runs) {
		var armed atomic.Bool
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 0xfa))
		faults := []func() error{
			memstore.ServerBusy, memstore.InternalError, memstore.OperationTimedOut, memstore.ResponseLost,
			func() error { return memstore.AfterApply(memstore.InternalError()) },
			func() error { return memstore.AfterApply(memstore.ResponseLost()) },
		}
		st := memstore.New(memstore.WithFaults(func(op memstore.Operation, _ string) error {
			switch op {
			case memstore.OpAppendBlock, memstore.OpCreateAppendBlob, memstore.OpGetBlob:
			default:
				return nil
			}
			if !armed.Load() {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			if rng.Float64() < 0.25 {
				c.faults++
				return faults[rng.IntN(len(faults))]()
			}
			return nil
		}))
		faultRun(t, st, &armed, seed+1, 60, &c)
		if t.Failed() {
			break
		}
	}
	t.Logf("memstore: %v", c)
	if c.faults == 0 || c.lost+c.duplicated+c.reordered != 0 {
		t.Fatalf("%v", c)
	}
}

// The same through a fault-injecting proxy in front of Azurite: the
// requests really are applied, and their answers really lost, cut or
// replaced.
func TestFaultsNeverLoseOrDuplicateAzurite(t *testing.T) {
	var c faultCounts
	for seed := range uint64(30) {
		var armed atomic.Bool
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 0xaf))
		kinds := []faultproxy.Fault{faultproxy.Busy, faultproxy.InternalBefore, faultproxy.ResetBefore,
			faultproxy.DropAfter, faultproxy.TruncateAfter, faultproxy.InternalAfter, faultproxy.TimeoutAfter}
		st, _ := proxiedAzurite(t, func(r *http.Request) faultproxy.Fault {
			if !armed.Load() || !(isAppend(r) || isCreate(r) || isRead(r)) {
				return faultproxy.None
			}
			mu.Lock()
			defer mu.Unlock()
			if rng.Float64() < 0.25 {
				c.faults++
				return kinds[rng.IntN(len(kinds))]
			}
			return faultproxy.None
		})
		faultRun(t, st, &armed, seed+1, 40, &c)
		if t.Failed() {
			break
		}
	}
	t.Logf("azurite behind faultproxy: %v", c)
	if c.faults == 0 || c.lost+c.duplicated+c.reordered != 0 {
		t.Fatalf("%v", c)
	}
}

// A block whose answer was lost and whose settling failed too stays
// pending with its outcome unknown; the next Flush reads the blob back,
// finds the block there (or not) and never sends it twice.
func TestUnknownAppendIsSettledByTheNextFlush(t *testing.T) {
	for _, landed := range []bool{true, false} {
		name := "landed"
		if !landed {
			name = "not landed"
		}
		t.Run(name+"/memstore", func(t *testing.T) {
			var appends, reads atomic.Int32
			var phase atomic.Int32 // 1: the faulty flush; 2: after
			st := memstore.New(memstore.WithFaults(func(op memstore.Operation, _ string) error {
				if phase.Load() != 1 {
					return nil
				}
				switch op {
				case memstore.OpAppendBlock:
					if appends.Add(1) == 1 {
						if landed {
							return memstore.AfterApply(memstore.ResponseLost())
						}
						return memstore.ResponseLost()
					}
					if !landed {
						return memstore.ResponseLost() // every resend lost too
					}
				case memstore.OpGetBlob:
					reads.Add(1)
					return memstore.ResponseLost() // the read-back fails
				}
				return nil
			}))
			settleCase(t, st, &phase)
			t.Logf("memstore, first append %s: %d Append Block and %d Get Blob requests in the faulty flush", name, appends.Load(), reads.Load())
		})
		t.Run(name+"/azurite", func(t *testing.T) {
			var appends atomic.Int32
			var phase atomic.Int32
			st, p := proxiedAzurite(t, func(r *http.Request) faultproxy.Fault {
				if phase.Load() != 1 {
					return faultproxy.None
				}
				switch {
				case isAppend(r):
					if appends.Add(1) == 1 {
						if landed {
							return faultproxy.DropAfter
						}
						return faultproxy.ResetBefore
					}
					if !landed {
						return faultproxy.ResetBefore
					}
				case isRead(r):
					return faultproxy.ResetBefore
				}
				return faultproxy.None
			})
			settleCase(t, st, &phase)
			t.Logf("azurite, first append %s: proxy %v", name, p.Counts())
		})
	}
}

// settleCase writes two records, flushes with faults (phase 1), expects an
// unknown outcome, then flushes again without faults and expects the
// block settled or sent once.
func settleCase(t *testing.T, st store.Store, phase *atomic.Int32) {
	t.Helper()
	c := newContainer(t, st)
	clk := newClock(at(11, 0, 0))
	w := mustWriter(t, c, "u", Options{ID: "w", Clock: clk.Now})
	mustWrite(t, w, "alpha")
	mustWrite(t, w, "beta")
	ctx := context.Background()
	// Create the blob first, so the faults meet the append alone.
	phase.Store(2)
	if err := w.newBlob(ctx, at(11, 0, 0)); err != nil {
		t.Fatal(err)
	}
	phase.Store(1)
	err := w.Flush(ctx)
	phase.Store(2)
	if !errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("faulty Flush: %v; want an unknown outcome", err)
	}
	if st := w.Stats(); st.Pending != 2 || st.Records != 0 {
		t.Fatalf("after the unknown flush: %+v; want 2 records pending", st)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := payloads(readAll(t, c, "u", ReaderOptions{}, at(11, 0, 0), at(12, 0, 0)))
	if !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("read back %q, want each record once", got)
	}
	st2 := w.Stats()
	t.Logf("stats %+v", st2)
	if st2.Records != 2 || st2.Blocks != 1 || st2.Pending != 0 {
		t.Fatalf("stats %+v: want 2 records in 1 block", st2)
	}
}
