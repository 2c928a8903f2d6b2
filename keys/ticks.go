package keys

import (
	"fmt"
	"time"
)

// .NET DateTime constants. A tick is 100 ns; DateTime counts ticks from
// 0001-01-01T00:00:00 in the proleptic Gregorian calendar.
const (
	// MaxTicks is DateTime.MaxValue.Ticks, the ticks of 9999-12-31T23:59:59.9999999.
	MaxTicks int64 = 3155378975999999999
	// UnixEpochTicks is the ticks of 1970-01-01T00:00:00Z (DateTime.UnixEpoch.Ticks).
	UnixEpochTicks int64 = 621355968000000000
	// ticksPerSecond is 10^7: one tick is 100 ns.
	ticksPerSecond = 10_000_000
	// ticksWidth is the guide's {0:D19} padding: MaxTicks has 19 digits.
	ticksWidth = 19
)

// MinTime and MaxTime bound the times that have .NET ticks:
// DateTime.MinValue and DateTime.MaxValue, as UTC.
var (
	MinTime = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, time.December, 31, 23, 59, 59, 999999900, time.UTC)
)

// Ticks returns the .NET ticks of t: the number of 100 ns intervals since
// 0001-01-01T00:00:00Z, what DateTime.UtcNow.Ticks or
// DateTimeOffset.UtcTicks give for the same instant. The instant counts,
// not t's location. Precision below 100 ns is truncated towards the past.
// It fails with [ErrOutOfRange] for t before [MinTime] or after the last
// tick of [MaxTime].
func Ticks(t time.Time) (int64, error) {
	sec := t.Unix() // floored, with t.Nanosecond() in [0, 1e9): ticks floor too
	if sec < minUnixSec || sec > maxUnixSec {
		return 0, fmt.Errorf("%w: time %s is outside the .NET DateTime range %s to %s",
			ErrOutOfRange, t.Format(time.RFC3339Nano), MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339Nano))
	}
	return sec*ticksPerSecond + int64(t.Nanosecond()/100) + UnixEpochTicks, nil
}

// The Unix seconds of the first and the last second that have ticks.
const (
	minUnixSec = -UnixEpochTicks / ticksPerSecond
	maxUnixSec = (MaxTicks - UnixEpochTicks) / ticksPerSecond
)

// FromTicks returns the UTC time of a .NET tick count, the inverse of
// [Ticks] (new DateTime(ticks, DateTimeKind.Utc)). It fails with
// [ErrOutOfRange] for ticks outside 0 to [MaxTicks].
func FromTicks(ticks int64) (time.Time, error) {
	if ticks < 0 || ticks > MaxTicks {
		return time.Time{}, fmt.Errorf("%w: %d ticks is outside the .NET DateTime range 0 to %d", ErrOutOfRange, ticks, MaxTicks)
	}
	rel := ticks - UnixEpochTicks
	sec, frac := rel/ticksPerSecond, rel%ticksPerSecond
	if frac < 0 { // Go's % truncates; the fraction must be non-negative.
		sec--
		frac += ticksPerSecond
	}
	return time.Unix(sec, frac*100).UTC(), nil
}

// InvertedTicks returns the guide's "inverted ticks" RowKey for t:
// DateTime.MaxValue.Ticks - t.Ticks, zero-padded to 19 digits, exactly
// string.Format("{0:D19}", DateTime.MaxValue.Ticks - DateTime.UtcNow.Ticks).
// Keys made from later times sort first, so $top=10 returns the ten most
// recent entities, and Go and .NET writers interleave correctly in one
// partition. It fails like [Ticks].
func InvertedTicks(t time.Time) (string, error) {
	n, err := Ticks(t)
	if err != nil {
		return "", err
	}
	return formatTicks(MaxTicks - n), nil
}

// ParseInvertedTicks reverses [InvertedTicks]:
// new DateTime(DateTime.MaxValue.Ticks - Int64.Parse(s)), as UTC. It fails
// with [ErrMalformed] unless s is 19 digits of at most [MaxTicks].
func ParseInvertedTicks(s string) (time.Time, error) {
	n, err := parseTicks(s, "inverted ticks")
	if err != nil {
		return time.Time{}, err
	}
	return FromTicks(MaxTicks - n)
}

// TicksKey returns t's .NET ticks zero-padded to 19 digits: a key that
// sorts oldest first, the forward twin of [InvertedTicks]. It fails like
// [Ticks].
func TicksKey(t time.Time) (string, error) {
	n, err := Ticks(t)
	if err != nil {
		return "", err
	}
	return formatTicks(n), nil
}

// ParseTicksKey reverses [TicksKey]. It fails with [ErrMalformed] unless s
// is 19 digits of at most [MaxTicks].
func ParseTicksKey(s string) (time.Time, error) {
	n, err := parseTicks(s, "ticks key")
	if err != nil {
		return time.Time{}, err
	}
	return FromTicks(n)
}

// formatTicks pads a tick count in 0..MaxTicks to 19 digits.
func formatTicks(n int64) string {
	var b [ticksWidth]byte
	for i := ticksWidth - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[:])
}

// parseTicks reads 19 digits of at most MaxTicks.
func parseTicks(s, what string) (int64, error) {
	if len(s) != ticksWidth {
		return 0, fmt.Errorf("%w: %s %s is %d characters long, want %d digits", ErrMalformed, what, quote(s), len(s), ticksWidth)
	}
	if i := nonDigit(s); i >= 0 {
		return 0, fmt.Errorf("%w: %s %s has %q at offset %d, want only digits", ErrMalformed, what, quote(s), s[i], i)
	}
	var n uint64 // 19 digits always fit in a uint64
	for i := 0; i < len(s); i++ {
		n = n*10 + uint64(s[i]-'0')
	}
	if n > uint64(MaxTicks) {
		return 0, fmt.Errorf("%w: %s %s is above DateTime.MaxValue.Ticks %d", ErrMalformed, what, s, MaxTicks)
	}
	return int64(n), nil
}
