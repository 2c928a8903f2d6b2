package keys

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBucketByHand(t *testing.T) {
	tm := time.Date(2026, 11, 22, 11, 5, 59, 999, time.UTC)
	want := map[Granularity]string{Minute: "202611221105", Hour: "2026112211", Day: "20261122", Month: "202611"}
	for g, w := range want {
		if got, err := Bucket(tm, g); err != nil || got != w {
			t.Errorf("Bucket(%s, %s) = %q, %v; want %q", tm, g, got, err, w)
		}
	}
	// The UTC instant decides the bucket, not the zone of t.
	east := time.Date(2026, 11, 23, 1, 0, 0, 0, time.FixedZone("UTC+14", 14*3600))
	if got, _ := Bucket(east, Day); got != "20261122" {
		t.Errorf("Bucket in UTC+14 = %q, want the UTC day 20261122", got)
	}
	if got, _ := Bucket(time.Date(7, 3, 4, 5, 6, 0, 0, time.UTC), Minute); got != "000703040506" {
		t.Errorf("small year not padded: %q", got)
	}
}

func TestBucketErrors(t *testing.T) {
	good := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, g := range []Granularity{0, 5, -1} {
		_, err := Bucket(good, g)
		if !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "Minute, Hour, Day or Month") {
			t.Errorf("Bucket with granularity %d = %v, want ErrOutOfRange", int(g), err)
		}
	}
	for _, tm := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)} {
		_, err := Bucket(tm, Day)
		if !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "years 1 to 9999") {
			t.Errorf("Bucket(%s) = %v, want ErrOutOfRange naming the years", tm, err)
		}
	}
}

func randTime(rng interface {
	IntN(int) int
	Int64N(int64) int64
}) time.Time {
	lo := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	if rng.IntN(2) == 0 { // mostly near now, so neighbouring buckets occur
		lo = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		hi = lo + 3*86400*31
	}
	return time.Unix(lo+rng.Int64N(hi-lo), int64(rng.IntN(1e9))).UTC()
}

func TestBucketProperties(t *testing.T) {
	rng := newRand(11)
	gs := []Granularity{Minute, Hour, Day, Month}
	for i := 0; i < 20000; i++ {
		g := gs[rng.IntN(len(gs))]
		a, b := randTime(rng), randTime(rng)
		if rng.IntN(4) == 0 {
			b = a.Add(time.Duration(rng.Int64N(int64(3 * time.Hour))))
		}
		ba, err := Bucket(a, g)
		if err != nil {
			t.Fatal(err)
		}
		bb, _ := Bucket(b, g)
		start, err := ParseBucket(ba, g)
		if err != nil {
			t.Fatalf("ParseBucket(%q, %s): %v", ba, g, err)
		}
		// The bucket's start is at or before a, and the next bucket starts after a.
		if start.After(a) || !g.next(start).After(a) || !start.Equal(g.Truncate(a)) {
			t.Fatalf("bucket %q of %s starts at %s", ba, a, start)
		}
		// Same bucket iff same truncated time; otherwise string order is time order.
		ta, tb := g.Truncate(a), g.Truncate(b)
		want := 0
		if ta.Before(tb) {
			want = -1
		} else if ta.After(tb) {
			want = 1
		}
		if Compare(ba, bb) != want {
			t.Fatalf("order of buckets %q (%s) and %q (%s) is not time order", ba, a, bb, b)
		}
		if ValidKey(ba) != nil {
			t.Fatalf("bucket %q is not a legal key", ba)
		}
	}
}

func TestParseBucketRejects(t *testing.T) {
	cases := []struct {
		s string
		g Granularity
	}{
		{"202613", Month},
		{"202600", Month},
		{"000012", Month}, // year 0
		{"20260230", Day},
		{"20261131", Day},
		{"2026112224", Hour},
		{"202611221160", Minute},
		{"2026-11", Month},
		{"2026112", Day},
		{"20261122", Hour},
		{"", Day},
		{"２０２６１１", Month}, // full-width digits
	}
	for _, c := range cases {
		if tm, err := ParseBucket(c.s, c.g); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseBucket(%q, %s) = %s, %v; want ErrMalformed", c.s, c.g, tm, err)
		}
	}
	if _, err := ParseBucket("20261122", 0); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("ParseBucket with granularity 0 = %v, want ErrOutOfRange", err)
	}
}

func TestBuckets(t *testing.T) {
	from := time.Date(2026, 11, 22, 10, 59, 0, 0, time.UTC)
	to := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	got, err := Buckets(from, to, Hour)
	if err != nil || strings.Join(got, ",") != "2026112210,2026112211,2026112212" {
		t.Errorf("Buckets(hours) = %q, %v", got, err)
	}
	got, _ = Buckets(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Month)
	if strings.Join(got, ",") != "202512,202601,202602" {
		t.Errorf("Buckets(months across a year) = %q", got)
	}
	got, _ = Buckets(from, from, Day)
	if len(got) != 1 || got[0] != "20261122" {
		t.Errorf("Buckets of one instant = %q", got)
	}
	if _, err := Buckets(to, from, Hour); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "ends before it starts") {
		t.Errorf("Buckets with to before from = %v, want ErrOutOfRange", err)
	}
	if _, err := Buckets(from, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Month); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("Buckets past year 9999 = %v, want ErrOutOfRange", err)
	}
}

func TestBucketsCountAndOrder(t *testing.T) {
	rng := newRand(12)
	for i := 0; i < 300; i++ {
		from := randTime(rng)
		to := from.Add(time.Duration(rng.Int64N(int64(40 * 24 * time.Hour))))
		for _, g := range []Granularity{Hour, Day, Month} {
			bs, err := Buckets(from, to, g)
			if err != nil {
				t.Fatal(err)
			}
			var want int
			switch g {
			case Hour:
				want = int(g.Truncate(to).Sub(g.Truncate(from))/time.Hour) + 1
			case Day:
				want = int(g.Truncate(to).Sub(g.Truncate(from))/(24*time.Hour)) + 1
			case Month:
				want = (to.Year()*12 + int(to.Month())) - (from.Year()*12 + int(from.Month())) + 1
			}
			if len(bs) != want {
				t.Fatalf("Buckets(%s, %s, %s) has %d entries, want %d", from, to, g, len(bs), want)
			}
			for j := 1; j < len(bs); j++ {
				if !(bs[j-1] < bs[j]) {
					t.Fatalf("buckets not increasing: %q then %q", bs[j-1], bs[j])
				}
			}
		}
	}
}

func TestGranularityString(t *testing.T) {
	for g, want := range map[Granularity]string{Minute: "minute", Hour: "hour", Day: "day", Month: "month", 0: "Granularity(0)"} {
		if g.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(g), g.String(), want)
		}
	}
	tm := time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC)
	if !Granularity(0).Truncate(tm).Equal(tm) {
		t.Errorf("an invalid granularity must leave the time unchanged")
	}
}

func TestBucketsRejectsGranularity(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := Buckets(now, now, 0); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("Buckets with granularity 0 = %v, want ErrOutOfRange", err)
	}
}
