package keys

import (
	"testing"
	"time"
)

func FuzzInvertedTicks(f *testing.F) {
	f.Add(int64(0), int64(1), "3155378975999999999")
	f.Add(UnixEpochTicks, MaxTicks, "0000000000000000000")
	f.Fuzz(func(t *testing.T, sec, nsec int64, s string) {
		tm := time.Unix(sec, nsec)
		inv, err := InvertedTicks(tm)
		if err != nil {
			if !tm.Before(MinTime) && !tm.After(MaxTime.Add(99)) {
				t.Fatalf("InvertedTicks(%s): %v", tm, err)
			}
			return
		}
		back, err := ParseInvertedTicks(inv)
		if err != nil || !back.Equal(tm.Truncate(100)) {
			t.Fatalf("ParseInvertedTicks(InvertedTicks(%s)) = %s, %v", tm, back, err)
		}
		if p, err := ParseInvertedTicks(s); err == nil {
			if again, _ := InvertedTicks(p); again != s {
				t.Fatalf("ParseInvertedTicks accepted non-canonical %q", s)
			}
		}
	})
}
