package partition

import (
	"math"
	"testing"
	"time"
)

// TestDefaultBackoffIsFullJitter: the default pause before retry n is
// drawn from Options.Random below a ceiling of 10 ms doubled n-1 times,
// at most 1 s, so the lowest and highest draws span it.
func TestDefaultBackoffIsFullJitter(t *testing.T) {
	var draw uint64
	s, err := (&Options{Random: func() uint64 { return draw }}).settings()
	if err != nil {
		t.Fatal(err)
	}
	for n, ceiling := range map[int]time.Duration{1: 10 * time.Millisecond, 3: 40 * time.Millisecond, 7: 640 * time.Millisecond, 8: time.Second, 50: time.Second} {
		for _, c := range []struct {
			draw uint64
			want time.Duration
		}{{0, 0}, {uint64(ceiling) - 1, ceiling - 1}, {uint64(ceiling), 0}, {math.MaxUint64 - math.MaxUint64%uint64(ceiling) - 1, ceiling - 1}} {
			draw = c.draw
			if d := s.backoff(n); d != c.want {
				t.Errorf("retry %d, draw %d: %s, want %s (the ceiling is %s)", n, c.draw, d, c.want, ceiling)
			}
		}
	}
}
