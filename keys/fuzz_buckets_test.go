package keys

import (
	"testing"
	"time"
)

func FuzzBucket(f *testing.F) {
	f.Add(int64(1795345200), "2026112211", uint8(Hour))
	f.Add(int64(-62135596800), "000101", uint8(Month))
	f.Fuzz(func(t *testing.T, sec int64, s string, gb uint8) {
		g := Granularity(gb%4 + 1)
		tm := time.Unix(sec, 0)
		if b, err := Bucket(tm, g); err == nil {
			start, err := ParseBucket(b, g)
			if err != nil || !start.Equal(g.Truncate(tm)) {
				t.Fatalf("ParseBucket(Bucket(%s, %s) = %q) = %s, %v", tm, g, b, start, err)
			}
		}
		if start, err := ParseBucket(s, g); err == nil {
			if again, _ := Bucket(start, g); again != s {
				t.Fatalf("ParseBucket accepted non-canonical %q", s)
			}
		}
	})
}
