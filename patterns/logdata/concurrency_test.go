package logdata

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

// tickClock moves a millisecond forward at every reading, from any
// goroutine: many goroutines stamping records at once. It passes 14:00
// after 200 readings.
type tickClock struct{ n atomic.Int64 }

func (c *tickClock) Now() time.Time {
	return at(13, 59, 59).Add(800*time.Millisecond + time.Duration(c.n.Add(1))*time.Millisecond)
}

// Several goroutines share a Writer, a second writer (process) writes the
// same prefix at once, and a Flush runs now and then: every record is
// read back once, each goroutine's records in the order it wrote them,
// and no blob holds another writer's records.
func TestConcurrentWriters(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := &tickClock{}
		each := 100
		if b.Short() {
			each = 40
		}
		writers := map[string]int{"alpha": 8, "beta": 4} // id -> goroutines
		ctx := context.Background()
		var wg sync.WaitGroup
		var ws []*Writer
		for id, goroutines := range writers {
			w := mustWriter(t, c, "c", Options{ID: id, BlockSize: 512, Clock: clk.Now})
			ws = append(ws, w)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if err := w.Write(ctx, fmt.Appendf(nil, "%s g%d i%03d", id, g, i)); err != nil {
							t.Error(err)
							return
						}
						if i%25 == 0 {
							if err := w.Flush(ctx); err != nil {
								t.Error(err)
							}
						}
					}
				}()
			}
		}
		wg.Wait()
		for _, w := range ws {
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		recs := readAll(t, c, "c", ReaderOptions{}, at(13, 0, 0), at(15, 0, 0))
		next := map[string]int{} // "id gN" -> next i
		seen := map[string]bool{}
		for _, r := range recs {
			var id string
			var g, i int
			if _, err := fmt.Sscanf(string(r.Data), "%s g%d i%d", &id, &g, &i); err != nil {
				t.Fatalf("record %q: %v", r.Data, err)
			}
			if seen[string(r.Data)] {
				t.Fatalf("%q read twice", r.Data)
			}
			seen[string(r.Data)] = true
			if !strings.Contains(r.Blob, "/"+id+"-") {
				t.Fatalf("%q of writer %s is in %s", r.Data, id, r.Blob)
			}
			k := fmt.Sprintf("%s g%d", id, g)
			if i != next[k] {
				t.Fatalf("%s: record %d after %d: out of order", k, i, next[k]-1)
			}
			next[k]++
		}
		total := 0
		for _, n := range writers {
			total += n * each
		}
		if len(recs) != total {
			t.Fatalf("read back %d records, want %d", len(recs), total)
		}
		for i, w := range ws {
			t.Logf("%s writer %d: %+v", b.Name, i, w.Stats())
		}
	})
}
