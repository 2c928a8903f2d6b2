package keys

import (
	"fmt"
	"time"
)

// Granularity is the length of a time bucket.
type Granularity int

// The bucket lengths. The zero Granularity is invalid, so a forgotten
// argument fails loudly instead of picking a default.
const (
	Minute Granularity = iota + 1
	Hour
	Day
	Month
)

// String names the granularity ("minute", "hour", "day", "month").
func (g Granularity) String() string {
	switch g {
	case Minute:
		return "minute"
	case Hour:
		return "hour"
	case Day:
		return "day"
	case Month:
		return "month"
	}
	return fmt.Sprintf("Granularity(%d)", int(g))
}

// digits is the length of a bucket string of this granularity.
func (g Granularity) digits() int {
	switch g {
	case Minute:
		return 12
	case Hour:
		return 10
	case Day:
		return 8
	case Month:
		return 6
	}
	return 0
}

func (g Granularity) check() error {
	if g.digits() == 0 {
		return fmt.Errorf("%w: granularity %d, want Minute, Hour, Day or Month", ErrOutOfRange, int(g))
	}
	return nil
}

// Truncate returns the start of the bucket holding t, in UTC: the minute,
// hour, day (00:00) or month (the 1st) t falls in. An invalid g leaves
// the UTC time unchanged.
func (g Granularity) Truncate(t time.Time) time.Time {
	t = t.UTC()
	y, mo, d := t.Date()
	switch g {
	case Minute:
		return time.Date(y, mo, d, t.Hour(), t.Minute(), 0, 0, time.UTC)
	case Hour:
		return time.Date(y, mo, d, t.Hour(), 0, 0, 0, time.UTC)
	case Day:
		return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
	}
	return t
}

// next returns the start of the bucket after the one starting at start.
func (g Granularity) next(start time.Time) time.Time {
	switch g {
	case Minute:
		return start.Add(time.Minute)
	case Hour:
		return start.Add(time.Hour)
	case Day:
		return start.AddDate(0, 0, 1)
	}
	return start.AddDate(0, 1, 0)
}

// Bucket names the time bucket holding t, in UTC, as fixed-width digits:
// "202611" (Month), "20261122" (Day), "2026112211" (Hour) or
// "202611221105" (Minute). The strings sort in time order, are legal keys,
// and contain only digits so they also fit in table names. Use one as the
// PartitionKey of a data series or log partition (mind the guide's
// prepend/append anti-pattern: every writer of the current period hits
// the same partition; see [Spread]). It fails with [ErrOutOfRange] for an
// invalid g or a UTC year outside 1 to 9999.
func Bucket(t time.Time, g Granularity) (string, error) {
	if err := g.check(); err != nil {
		return "", err
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return "", fmt.Errorf("%w: time %s has year %d, buckets cover years 1 to 9999", ErrOutOfRange, t.Format(time.RFC3339), y)
	}
	b := make([]byte, 0, 12)
	b = appendDigits(b, t.Year(), 4)
	b = appendDigits(b, int(t.Month()), 2)
	if g <= Day {
		b = appendDigits(b, t.Day(), 2)
	}
	if g <= Hour {
		b = appendDigits(b, t.Hour(), 2)
	}
	if g == Minute {
		b = appendDigits(b, t.Minute(), 2)
	}
	return string(b), nil
}

// appendDigits appends v zero-padded to width decimal digits.
func appendDigits(b []byte, v, width int) []byte {
	start := len(b)
	for i := 0; i < width; i++ {
		b = append(b, '0')
	}
	for i := len(b) - 1; i >= start; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// ParseBucket reverses [Bucket]: it returns the UTC start of the bucket
// s names. It fails with [ErrMalformed] unless s is exactly what Bucket
// produces for granularity g (right length, digits only, a real date).
func ParseBucket(s string, g Granularity) (time.Time, error) {
	if err := g.check(); err != nil {
		return time.Time{}, err
	}
	if len(s) != g.digits() {
		return time.Time{}, fmt.Errorf("%w: %s bucket %s is %d characters long, want %d digits", ErrMalformed, g, quote(s), len(s), g.digits())
	}
	if i := nonDigit(s); i >= 0 {
		return time.Time{}, fmt.Errorf("%w: %s bucket %s has %q at offset %d, want only digits", ErrMalformed, g, quote(s), s[i], i)
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range s[i : i+n] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi := num(0, 4), num(4, 2), 1, 0, 0
	if g <= Day {
		d = num(6, 2)
	}
	if g <= Hour {
		h = num(8, 2)
	}
	if g == Minute {
		mi = num(10, 2)
	}
	t := time.Date(y, time.Month(mo), d, h, mi, 0, 0, time.UTC)
	// time.Date normalises out-of-range fields (month 13, hour 24); a
	// canonical bucket survives the round trip unchanged.
	if back, err := Bucket(t, g); err != nil || back != s {
		return time.Time{}, fmt.Errorf("%w: %s bucket %s is not a valid date and time", ErrMalformed, g, quote(s))
	}
	return t, nil
}

// Buckets lists every bucket from the one holding from to the one
// holding to, both included, in time order: the partitions a reader of
// a time span must visit. It fails with [ErrOutOfRange] when to is before
// from or either lies outside what [Bucket] accepts. The list has one
// entry per bucket, so mind the span: a year of minutes is 525,600.
func Buckets(from, to time.Time, g Granularity) ([]string, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if to.Before(from) {
		return nil, fmt.Errorf("%w: span from %s to %s ends before it starts", ErrOutOfRange, from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	last, err := Bucket(to, g)
	if err != nil {
		return nil, err
	}
	var out []string
	for t := g.Truncate(from); ; t = g.next(t) {
		b, err := Bucket(t, g)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		if b == last {
			return out, nil
		}
	}
}
