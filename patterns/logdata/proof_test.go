package logdata

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store/storetest"
)

// proofCrash crashes the process at one request, any blob request
// counted (creation, append, read-back, listing): before it leaves, or
// after the service applied it.
type proofCrash struct {
	calls, at atomic.Int64
	after     bool
	mu        sync.Mutex
	points    map[string]int
}

func (c *proofCrash) hook(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
	n := c.calls.Add(1)
	if at := c.at.Load(); at == 0 || n != at || !c.at.CompareAndSwap(at, 0) {
		return do(ctx)
	}
	point := "before " + call.Op
	if c.after {
		_ = do(ctx)
		point = "after " + call.Op
	}
	c.mu.Lock()
	c.points[point]++
	c.mu.Unlock()
	panic(eventualtest.Crash{})
}

// TestProofCrashAtEveryRequest: a writer writes twelve records across an
// hour boundary (so a second blob is created), flushing after every
// third and closing at the end, and crashes before and after each of its
// requests, on memstore and on Azurite. Records whose Flush returned nil
// before the crash must be stored exactly once; the others may be lost
// with the process but never stored twice or torn. The restarted writer
// (same id) reads what is stored and writes the missing records again;
// then every record is stored exactly once: lost 0, duplicated 0.
func TestProofCrashAtEveryRequest(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		const records = 12
		var want []string
		for i := range records {
			want = append(want, fmt.Sprintf("record %02d", i))
		}
		var crashes, operations, durable, replayed, lost, duplicated int
		points := map[string]int{}
		count := func(got []string) map[string]int {
			seen := map[string]int{}
			for _, s := range got {
				seen[s]++
			}
			return seen
		}
		for n := int64(1); ; n++ {
			done := false
			for _, after := range []bool{false, true} {
				cont := newContainer(t, b.Store)
				c := &proofCrash{points: points}
				c.after = after
				c.at.Store(n)
				clk := newClock(at(15, 59, 30))
				w := mustWriter(t, storetest.WrapContainer(cont, c.hook), "f", Options{ID: "w1", BlockSize: 256, Clock: clk.Now})
				acked := 0
				crashed := eventualtest.Survive(func() {
					for i, s := range want {
						if err := w.Write(ctx, []byte(s)); err != nil {
							t.Errorf("write %d: %v", i, err)
							return
						}
						operations++
						clk.Add(10 * time.Second)
						if i%3 == 2 && w.Flush(ctx) == nil {
							acked = i + 1
						}
					}
					if w.Close(ctx) == nil {
						acked = records
					}
				})
				if !crashed {
					c.at.Store(0)
					done = true
					if acked != records {
						t.Fatalf("no crash, yet only %d records acknowledged", acked)
					}
				} else {
					crashes++
					durable += acked
				}
				seen := count(payloads(readAll(t, cont, "f", ReaderOptions{}, at(15, 0, 0), at(17, 0, 0))))
				for _, s := range want[:acked] {
					if seen[s] == 0 {
						lost++
						t.Errorf("crash at request %d (after %v): %q was flushed and is not stored", n, after, s)
					}
				}
				for s, k := range seen {
					if k > 1 {
						duplicated += k - 1
						t.Errorf("crash at request %d (after %v): %q stored %d times", n, after, s, k)
					}
				}
				if crashed {
					r := mustWriter(t, cont, "f", Options{ID: "w1", BlockSize: 256, Clock: clk.Now})
					for _, s := range want {
						if seen[s] == 0 {
							mustWrite(t, r, s)
							replayed++
						}
					}
					if err := r.Close(ctx); err != nil {
						t.Fatalf("recovery close: %v", err)
					}
					seen = count(payloads(readAll(t, cont, "f", ReaderOptions{}, at(15, 0, 0), at(17, 0, 0))))
					for _, s := range want {
						switch seen[s] {
						case 0:
							lost++
							t.Errorf("crash at request %d (after %v): %q lost after recovery", n, after, s)
						case 1:
						default:
							duplicated += seen[s] - 1
							t.Errorf("crash at request %d (after %v): %q stored %d times after recovery", n, after, s, seen[s])
						}
					}
				}
			}
			if done {
				break
			}
		}
		t.Logf("%s: %d records, crash points %d, writes %d, %d flushed before a crash, %d written again: lost %d, duplicated %d; points %v",
			b.Name, records, crashes, operations, durable, replayed, lost, duplicated, points)
		if crashes == 0 {
			t.Fatal("no crash was injected")
		}
	})
}
