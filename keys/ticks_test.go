package keys

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// netTicks computes .NET ticks from a civil UTC date and time by counting
// days year by year in the proleptic Gregorian calendar, the way DateTime
// defines them, without Go's time arithmetic.
func netTicks(year, month, day, hour, minute, sec, nsec int) int64 {
	leap := func(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }
	days := 0
	for y := 1; y < year; y++ {
		days += 365
		if leap(y) {
			days++
		}
	}
	monthDays := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for m := 1; m < month; m++ {
		days += monthDays[m-1]
		if m == 2 && leap(year) {
			days++
		}
	}
	days += day - 1
	secs := int64(days)*86400 + int64(hour)*3600 + int64(minute)*60 + int64(sec)
	return secs*10_000_000 + int64(nsec/100)
}

func TestTickConstantsFromTheNETFormula(t *testing.T) {
	if got := netTicks(1970, 1, 1, 0, 0, 0, 0); got != UnixEpochTicks {
		t.Errorf("1970-01-01 by the calendar is %d ticks, UnixEpochTicks is %d", got, UnixEpochTicks)
	}
	if got := netTicks(9999, 12, 31, 23, 59, 59, 999999900); got != MaxTicks {
		t.Errorf("DateTime.MaxValue by the calendar is %d ticks, MaxTicks is %d", got, MaxTicks)
	}
	// new DateTime(2000, 1, 1).Ticks, as .NET documents it.
	if got := netTicks(2000, 1, 1, 0, 0, 0, 0); got != 630822816000000000 {
		t.Errorf("2000-01-01 by the calendar is %d ticks, .NET says 630822816000000000", got)
	}
}

func TestTicksMatchesCalendar(t *testing.T) {
	rng := newRand(9)
	for i := 0; i < 3000; i++ {
		tm := time.Date(1+rng.IntN(9999), time.Month(1+rng.IntN(12)), 1+rng.IntN(28),
			rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e9), time.UTC)
		got, err := Ticks(tm)
		if err != nil {
			t.Fatal(err)
		}
		want := netTicks(tm.Year(), int(tm.Month()), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond())
		if got != want {
			t.Fatalf("Ticks(%s) = %d, the calendar says %d", tm, got, want)
		}
		inv, err := InvertedTicks(tm)
		if err != nil {
			t.Fatal(err)
		}
		if len(inv) != 19 || inv != padded19(MaxTicks-want) {
			t.Fatalf("InvertedTicks(%s) = %q, want %s", tm, inv, padded19(MaxTicks-want))
		}
	}
}

// padded19 is {0:D19} written with strings.Repeat and a plain conversion.
func padded19(n int64) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return strings.Repeat("0", 19-len(s)) + s
}

func TestTicksUsesTheInstantNotTheZone(t *testing.T) {
	zone := time.FixedZone("UTC+5", 5*3600)
	a := time.Date(2026, 11, 22, 16, 0, 0, 0, zone)
	b := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	ta, _ := Ticks(a)
	tb, _ := Ticks(b)
	if ta != tb {
		t.Errorf("the same instant in two zones gave %d and %d ticks", ta, tb)
	}
}

func TestTicksRoundTripAndOrder(t *testing.T) {
	rng := newRand(10)
	for i := 0; i < 20000; i++ {
		a, b := rng.Int64N(MaxTicks+1), rng.Int64N(MaxTicks+1)
		if i%10 == 0 {
			b = a + int64(rng.IntN(3)) - 1 // neighbouring ticks
			b = max(0, min(b, MaxTicks))
		}
		ta, err := FromTicks(a)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := FromTicks(b)
		if back, err := Ticks(ta); err != nil || back != a {
			t.Fatalf("Ticks(FromTicks(%d)) = %d, %v", a, back, err)
		}
		inva, _ := InvertedTicks(ta)
		invb, _ := InvertedTicks(tb)
		fwda, _ := TicksKey(ta)
		fwdb, _ := TicksKey(tb)
		if Compare(inva, invb) != -cmpOrdered(a, b) {
			t.Fatalf("inverted ticks of %d and %d do not sort newest first: %q %q", a, b, inva, invb)
		}
		if Compare(fwda, fwdb) != cmpOrdered(a, b) {
			t.Fatalf("ticks keys of %d and %d do not sort oldest first", a, b)
		}
		if back, err := ParseInvertedTicks(inva); err != nil || !back.Equal(ta) {
			t.Fatalf("ParseInvertedTicks(%q) = %v, %v; want %v", inva, back, err, ta)
		}
		if back, err := ParseTicksKey(fwda); err != nil || !back.Equal(ta) {
			t.Fatalf("ParseTicksKey(%q) = %v, %v; want %v", fwda, back, err, ta)
		}
		if ValidKey(inva) != nil || ValidKey(fwda) != nil {
			t.Fatalf("tick keys must be legal")
		}
	}
}

func TestTicksTruncatesTo100ns(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 1, 1, 0, 0, 0, 199, time.UTC),
		time.Date(1960, 6, 1, 0, 0, 0, 999_999_999, time.UTC), // before 1970: still towards the past
		time.Date(1, 1, 1, 0, 0, 0, 99, time.UTC),
	} {
		s, err := InvertedTicks(tm)
		if err != nil {
			t.Fatal(err)
		}
		back, _ := ParseInvertedTicks(s)
		if want := tm.Truncate(100); !back.Equal(want) {
			t.Errorf("round trip of %s = %s, want %s", tm.Format(time.RFC3339Nano), back.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
		}
	}
}

func TestTicksRangeEdges(t *testing.T) {
	if n, err := Ticks(MinTime); err != nil || n != 0 {
		t.Errorf("Ticks(MinTime) = %d, %v; want 0", n, err)
	}
	if n, err := Ticks(MaxTime.Add(99)); err != nil || n != MaxTicks {
		t.Errorf("Ticks(last nanosecond) = %d, %v; want MaxTicks", n, err)
	}
	if s, _ := InvertedTicks(MaxTime); s != "0000000000000000000" {
		t.Errorf("InvertedTicks(MaxTime) = %q, want 19 zeros", s)
	}
	if s, _ := InvertedTicks(MinTime); s != "3155378975999999999" {
		t.Errorf("InvertedTicks(MinTime) = %q, want DateTime.MaxValue.Ticks", s)
	}
	for _, bad := range []time.Time{MinTime.Add(-1), MaxTime.Add(100), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}.Add(-time.Hour)} {
		for name, f := range map[string]func(time.Time) error{
			"Ticks":         func(t time.Time) error { _, err := Ticks(t); return err },
			"InvertedTicks": func(t time.Time) error { _, err := InvertedTicks(t); return err },
			"TicksKey":      func(t time.Time) error { _, err := TicksKey(t); return err },
		} {
			err := f(bad)
			if !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "9999-12-31T23:59:59.9999999Z") {
				t.Errorf("%s(%s) = %v, want ErrOutOfRange naming the range", name, bad, err)
			}
		}
	}
	for _, n := range []int64{-1, MaxTicks + 1} {
		if _, err := FromTicks(n); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("FromTicks(%d) = %v, want ErrOutOfRange", n, err)
		}
	}
}

func TestParseTicksRejects(t *testing.T) {
	for _, s := range []string{
		"", "123", "31553789759999999990", "315537897599999999a", " 155378975999999999",
		"3155378976000000000", // MaxTicks + 1
		"9999999999999999999", // above int64
		"-155378975999999999",
	} {
		if _, err := ParseInvertedTicks(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseInvertedTicks(%q) = %v, want ErrMalformed", s, err)
		}
		if _, err := ParseTicksKey(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseTicksKey(%q) = %v, want ErrMalformed", s, err)
		}
	}
}
