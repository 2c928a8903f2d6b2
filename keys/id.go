package keys

import (
	"crypto/rand"
	"fmt"
	"io"
	"sync"
	"time"
)

// IDLen is the length of an id from [IDGenerator.New].
const IDLen = 26

// idAlphabet is Crockford's base 32: digits and upper-case letters without
// I, L, O and U. Its characters rise in ASCII, so ids sort as the 128-bit
// numbers they encode, and every one is legal in a key and a URL.
const idAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// maxIDMillis is the largest 48-bit millisecond count (year 10889).
const maxIDMillis = 1<<48 - 1

// IDGenerator makes unique ids that sort by creation time, for RowKeys
// that must be unique and ordered (log entries, events, messages). An id
// is 26 characters of Crockford base 32 encoding 128 bits: 48 bits of
// milliseconds since 1970-01-01 UTC, then 80 random bits (the layout of a
// ULID).
//
// Ids from one generator strictly increase: within the same millisecond,
// or when the clock steps back, the generator reuses the last time and
// adds one to the random part; if that overflows (after 2^80 ids, or a
// random source stuck near the top) it moves the time one millisecond
// ahead of the clock. Ids from different generators are ordered by time
// only to the millisecond and are unique with overwhelming probability.
//
// An IDGenerator is safe for concurrent use.
type IDGenerator struct {
	now    func() time.Time
	random io.Reader

	mu     sync.Mutex
	lastMS uint64
	last   [10]byte // the random part of the last id
	used   bool
}

// NewIDGenerator returns a generator that reads the time from now and
// randomness from random. A nil now means time.Now and a nil random means
// crypto/rand.Reader; tests pass a fake clock and a seeded source.
func NewIDGenerator(now func() time.Time, random io.Reader) *IDGenerator {
	if now == nil {
		now = time.Now
	}
	if random == nil {
		random = rand.Reader
	}
	return &IDGenerator{now: now, random: random}
}

// New returns the next id. It fails with [ErrOutOfRange] when the clock
// reads before 1970 or after the 48-bit millisecond range (year 10889),
// and with the reader's error when the random source fails.
func (g *IDGenerator) New() (string, error) {
	t := g.now()
	ms := t.UnixMilli()
	if ms < 0 || ms > maxIDMillis {
		return "", fmt.Errorf("%w: clock reads %s, ids cover 1970-01-01 to %s",
			ErrOutOfRange, t.UTC().Format(time.RFC3339Nano), time.UnixMilli(maxIDMillis).UTC().Format(time.RFC3339Nano))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used && uint64(ms) <= g.lastMS {
		// Increment a copy: on overflow the state must stay as it was.
		if next := g.last; increment(&next) {
			g.last = next
			return g.encode(), nil
		}
		// The random part overflowed: continue in the next millisecond.
		if g.lastMS == maxIDMillis {
			return "", fmt.Errorf("%w: id space of the last millisecond exhausted", ErrOutOfRange)
		}
		ms = int64(g.lastMS) + 1
	}
	// Read into a copy: a failed read must not leave a half-written
	// random part that a later increment would build on.
	var fresh [10]byte
	if _, err := io.ReadFull(g.random, fresh[:]); err != nil {
		return "", fmt.Errorf("keys: reading id randomness: %w", err)
	}
	g.last, g.lastMS, g.used = fresh, uint64(ms), true
	return g.encode(), nil
}

// At returns an id that records time t instead of the clock's reading:
// for an event of the past (an import, a backfill) that must sort among
// ids made at its time. Its random part is fresh from the generator's
// source, so ids made At the same millisecond are unique with
// overwhelming probability, but only New guarantees that one generator's
// ids strictly increase. It fails with [ErrOutOfRange] for a time outside
// the ids' range (1970 to year 10889).
func (g *IDGenerator) At(t time.Time) (string, error) {
	ms := t.UnixMilli()
	if ms < 0 || ms > maxIDMillis {
		return "", fmt.Errorf("%w: time %s, ids cover 1970-01-01 to %s",
			ErrOutOfRange, t.UTC().Format(time.RFC3339Nano), time.UnixMilli(maxIDMillis).UTC().Format(time.RFC3339Nano))
	}
	var fresh [10]byte
	if _, err := io.ReadFull(g.random, fresh[:]); err != nil {
		return "", fmt.Errorf("keys: reading id randomness: %w", err)
	}
	return encodeID(uint64(ms), &fresh), nil
}

// IDRange returns the range of the ids made in [from, to), to the
// millisecond (ids record milliseconds): ids of times before from's
// millisecond or at or after to's are out. It fails with
// [ErrOutOfRange] for a time outside the ids' range or an empty range.
func IDRange(prefix string, from, to time.Time) (Range, error) {
	lo, hi := from.UnixMilli(), to.UnixMilli()
	if to.After(time.UnixMilli(maxIDMillis)) {
		hi = maxIDMillis + 1
	}
	if lo < 0 || lo > maxIDMillis || hi < 0 {
		return Range{}, fmt.Errorf("%w: time range [%s, %s) is outside the ids' range (1970-01-01 to %s)", ErrOutOfRange,
			from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano), time.UnixMilli(maxIDMillis).UTC().Format(time.RFC3339Nano))
	}
	if hi <= lo {
		return Range{}, fmt.Errorf("%w: time range [%s, %s) is empty: to must be after from",
			ErrOutOfRange, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano))
	}
	var zero [10]byte
	r := Range{Lower: prefix + encodeID(uint64(lo), &zero)}
	if hi <= maxIDMillis {
		r.Upper, r.HasUpper = prefix+encodeID(uint64(hi), &zero), true
	} else {
		up := PrefixRange(prefix)
		r.Upper, r.HasUpper = up.Upper, up.HasUpper
	}
	return r, nil
}

// increment adds one to a big-endian number, reporting false on overflow.
func increment(b *[10]byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return true
		}
	}
	return false
}

// encode renders lastMS and last as 26 base-32 characters, five bits
// each from the least significant end; 26 characters carry 130 bits, so
// the first character's top two bits are zero.
func (g *IDGenerator) encode() string { return encodeID(g.lastMS, &g.last) }

// encodeID renders a millisecond time and a random part as an id.
func encodeID(ms uint64, b *[10]byte) string {
	hi := ms<<16 | uint64(b[0])<<8 | uint64(b[1])
	lo := uint64(b[2])<<56 | uint64(b[3])<<48 | uint64(b[4])<<40 | uint64(b[5])<<32 |
		uint64(b[6])<<24 | uint64(b[7])<<16 | uint64(b[8])<<8 | uint64(b[9])
	var out [IDLen]byte
	for j := 0; j < IDLen; j++ {
		var c uint64
		switch shift := 5 * j; {
		case shift+5 <= 64:
			c = lo >> shift
		case shift >= 64:
			c = hi >> (shift - 64)
		default: // the character that straddles the two halves
			c = lo>>shift | hi<<(64-shift)
		}
		out[IDLen-1-j] = idAlphabet[c&31]
	}
	return string(out[:])
}

// IDTime returns the creation time an id records, to the millisecond, in
// UTC. It fails with [ErrMalformed] for anything but 26 characters of
// upper-case Crockford base 32 whose first character is at most '7'.
func IDTime(id string) (time.Time, error) {
	if len(id) != IDLen {
		return time.Time{}, fmt.Errorf("%w: id %s is %d characters long, want %d", ErrMalformed, quote(id), len(id), IDLen)
	}
	var ms uint64
	for i := 0; i < IDLen; i++ {
		d := idDigit(id[i])
		if d < 0 {
			return time.Time{}, fmt.Errorf("%w: id %s has %q at offset %d, want Crockford base 32 (0-9, A-Z without I, L, O, U)", ErrMalformed, quote(id), id[i], i)
		}
		if i == 0 && d > 7 {
			return time.Time{}, fmt.Errorf("%w: id %s starts with %q, an id starts with 0 to 7", ErrMalformed, quote(id), id[0])
		}
		// The first 10 characters hold 50 bits: 2 zero bits and the 48-bit time.
		if i < 10 {
			ms = ms<<5 | uint64(d)
		}
	}
	return time.UnixMilli(int64(ms)).UTC(), nil
}

// idDigit returns the value of a Crockford base-32 character, or -1.
func idDigit(c byte) int {
	for i := 0; i < len(idAlphabet); i++ {
		if idAlphabet[i] == c {
			return i
		}
	}
	return -1
}
