package logtail

import (
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

// Many goroutines append to one stream on a frozen clock, so every event
// falls in the same 100 ns tick: the suffixes alone keep the keys apart.
func TestConcurrentAppendsLoseNothingAndNeverCollide(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		writers, each := 8, 50
		if b.Short() {
			writers, each = 4, 10
		}
		s, tbl := newStream(t, b, "hot", Options{Now: func() time.Time { return t0 }})
		keysSeen := make(chan string, writers*each)
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					ev, err := s.Append(t.Context(), claim{Amount: float64(w*1000 + i)})
					if err != nil {
						errs <- err
						return
					}
					keysSeen <- ev.Key
				}
			}()
		}
		wg.Wait()
		close(errs)
		close(keysSeen)
		for err := range errs {
			t.Fatal(err)
		}
		distinct := map[string]bool{}
		for k := range keysSeen {
			distinct[k] = true
		}
		stored := collect(t, s.Since(t.Context(), t0))
		amountsSeen := map[float64]bool{}
		for _, ev := range stored {
			if !ev.Time.Equal(t0) {
				t.Fatalf("event at %s, want every event in the frozen tick %s", ev.Time, t0)
			}
			amountsSeen[ev.Value.Amount] = true
		}
		rows := countRows(t, tbl, "hot")
		t.Logf("%s: %d writers x %d appends in one tick: %d keys returned, %d rows stored, %d distinct values read back",
			b.Name, writers, each, len(distinct), rows, len(amountsSeen))
		if len(distinct) != writers*each || rows != writers*each || len(amountsSeen) != writers*each {
			t.Fatalf("lost or collided: %d appends, %d distinct keys, %d rows, %d distinct values", writers*each, len(distinct), rows, len(amountsSeen))
		}
	})
}
