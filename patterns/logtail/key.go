package logtail

import (
	"fmt"
	"time"

	"github.com/tablekit/tablekit/keys"
)

// ticksLen is the length of the inverted ticks at the start of every key:
// .NET's "D19" format of DateTime.MaxValue.Ticks - t.Ticks.
const ticksLen = 19

// The suffix is the random part of an id from a keys.IDGenerator whose
// clock stands still at the Unix epoch: the generator then only counts up
// from a random 80-bit start, so one stream's suffixes strictly increase
// and two streams' never meet (their runs start 2^80 values apart on
// average). The time part of such ids is constant and is left out.
const (
	idTimeLen   = 10                       // the id's time characters
	suffixLen   = keys.IDLen - idTimeLen   // 16 characters, 80 bits
	eventKeyLen = ticksLen + 2 + suffixLen // ticks, the compound-key separator, suffix
)

// epoch is the suffix generator's clock.
func epoch() time.Time { return time.Unix(0, 0) }

// crockford is the alphabet of keys.IDGenerator's ids (Crockford's base 32,
// in ascending order). The suffix of a key is an id with every character
// mirrored in this alphabet, so that ids which rise in time sort falling:
// one writer's events of the same tick still come newest first.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// mirror maps each character of crockford to its mirror image.
var mirror = func() (m [256]byte) {
	for i := 0; i < len(crockford); i++ {
		m[crockford[i]] = crockford[len(crockford)-1-i]
	}
	return m
}()

// invertID mirrors (part of) an id from keys.IDGenerator.
func invertID(id string) (string, error) {
	b := []byte(id)
	for i, c := range b {
		if mirror[c] == 0 {
			return "", fmt.Errorf("logtail: id %q has %q, outside the id alphabet", id, c)
		}
		b[i] = mirror[c]
	}
	return string(b), nil
}

// makeKey returns prefix + inverted ticks of t + separator + suffix: the
// compound key keys.Join(ticks, suffix) behind the stream's prefix.
func makeKey(prefix string, t time.Time, suffix string) (string, error) {
	inv, err := keys.InvertedTicks(t)
	if err != nil {
		return "", fmt.Errorf("logtail: event time: %w", err)
	}
	k, err := keys.Join(inv, suffix)
	if err != nil {
		return "", fmt.Errorf("logtail: key: %w", err)
	}
	return prefix + k, nil
}

// parseKey returns the time a key records. A key is the prefix, 19 digits
// of inverted ticks, and any suffix (none for the guide's .NET rows).
func parseKey(prefix, rk string) (time.Time, error) {
	if len(rk) < len(prefix)+ticksLen || rk[:len(prefix)] != prefix {
		return time.Time{}, fmt.Errorf("%w: RowKey %q is not the prefix %q followed by %d digits of inverted ticks", ErrForeignRow, rk, prefix, ticksLen)
	}
	t, err := keys.ParseInvertedTicks(rk[len(prefix) : len(prefix)+ticksLen])
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: RowKey %q: %w", ErrForeignRow, rk, err)
	}
	return t, nil
}

// streamRange is every key of the stream: the prefix followed by a digit.
func streamRange(prefix string) keys.Range {
	return keys.Between(prefix+"0", prefix+":") // ':' follows '9'
}

// tickUpper is the smallest key after every key of t's tick: the upper
// bound of "at or after t" (newer events have smaller keys) and the lower
// bound of "before t".
func tickUpper(prefix string, t time.Time) (string, error) {
	inv, err := keys.InvertedTicks(t)
	if err != nil {
		return "", fmt.Errorf("logtail: %w", err)
	}
	return keys.PrefixRange(prefix + inv).Upper, nil
}
