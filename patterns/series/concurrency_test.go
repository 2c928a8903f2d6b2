package series

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

// Many writers increment one counter at once. Every Add either succeeds
// or fails with ErrContention having applied nothing, so the final value
// is exactly the number of successes.
func TestConcurrentAddsLoseNoIncrement(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts int
	}{
		{"enough attempts: every add lands", 1000},
		{"two attempts: some give up, none is lost", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				writers, each := 8, 25
				if b.Short() {
					writers, each = 4, 8
				}
				tbl := freshTable(t, b)
				var ok, gaveUp atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, writers*each)
				for range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						// Each writer has its own Series value, as separate
						// processes would.
						s := newSeries(t, tbl, "emp000123", "20261122", Layout{Slots: 24},
							Options{Attempts: tc.attempts, Backoff: backoffUpTo(100*time.Microsecond, 5*time.Millisecond)})
						for range each {
							_, err := s.Add(t.Context(), 14, 1)
							switch {
							case err == nil:
								ok.Add(1)
							case errors.Is(err, ErrContention):
								gaveUp.Add(1)
							default:
								errs <- err
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				sn := mustRead(t, newSeries(t, tbl, "emp000123", "20261122", Layout{Slots: 24}))
				got, _ := sn.Int64s()
				t.Logf("%s: %d writers x %d adds: %d landed, %d gave up with ErrContention; counter %d, version %d",
					b.Name, writers, each, ok.Load(), gaveUp.Load(), got[14], sn.Version)
				if got[14] != ok.Load() || sn.Version != ok.Load() {
					t.Fatalf("counter %d at version %d after %d successful adds", got[14], sn.Version, ok.Load())
				}
				if tc.attempts == 1000 && gaveUp.Load() != 0 {
					t.Fatalf("%d adds gave up with 1000 attempts", gaveUp.Load())
				}
			})
		})
	}
}

// Writers of different slots of a series that spans two entities contend
// on the head, which fences every write: no update of either entity is lost.
func TestConcurrentWritersOfASpilledSeries(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		writers, each := 6, 15
		if b.Short() {
			writers, each = 3, 5
		}
		tbl := freshTable(t, b)
		init := newSeries(t, tbl, "emp", "2026", Layout{Slots: 366})
		if err := init.Update(t.Context(), func([]any) (map[int]any, error) {
			m := map[int]any{}
			for i := range 366 {
				m[i] = int64(0)
			}
			return m, nil
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := newSeries(t, tbl, "emp", "2026", Layout{Slots: 366}, Options{Attempts: 1000,
					Backoff: backoffUpTo(100*time.Microsecond, 5*time.Millisecond)})
				for i := range each {
					slot := (w*61 + i*7) % 366 // writers hit slots in both entities
					if _, err := s.Add(t.Context(), slot, 1); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		sn := mustRead(t, init)
		got, _ := sn.Int64s()
		want := make([]int64, 366)
		for w := range writers {
			for i := range each {
				want[(w*61+i*7)%366]++
			}
		}
		var sum int64
		for i := range got {
			sum += got[i]
			if got[i] != want[i] {
				t.Fatalf("day %d = %d, want %d", i, got[i], want[i])
			}
		}
		t.Logf("%s: %d writers x %d adds over 2 entities: sum %d, version %d", b.Name, writers, each, sum, sn.Version)
		if sn.Segments != 2 || sum != int64(writers*each) {
			t.Fatalf("%d segments, sum %d", sn.Segments, sum)
		}
	})
}
