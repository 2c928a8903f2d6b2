package series

import (
	"fmt"
	"strconv"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// MaxSlots is the most slots a series may have.
const MaxSlots = 100_000

// MaxSegments is the most entities one series may spread over: one query
// page reads them all.
const MaxSegments = store.MaxPageSize

// History is how many recent writes the head entity remembers (their
// request ids, partition.Options.History): a write whose answer was lost
// is resolved exactly while fewer than History other writes land on the
// series before the head is read back.
const History = 16

// HeadPrefix names the two properties the head entity (segment 0, a
// partition.Head) keeps for itself: HeadPrefix+"Version", the number of
// commits on the head, and HeadPrefix+"Writers", the request ids of the
// last History of them. It starts with store.ReservedPrefix, as every
// property name tablekit stores does, which Layout.Prefix may not: a
// slot's property (Layout.Prefix and digits) never takes either name.
const HeadPrefix = store.ReservedPrefix + "Series"

// headReserve is what the head's own two properties take of segment 0 at
// their longest: the version, and History request ids of the longest
// length partition allows, comma-separated (an Edm.Binary). The planner
// keeps this room free so the head never outgrows the entity limits.
var headReserve = map[string]any{
	HeadPrefix + "Version": int64(0),
	HeadPrefix + "Writers": make([]byte, History*(partition.MaxRequestIDLen+1)-1),
}

// Layout is the shape of a series.
type Layout struct {
	// Slots is the number of values, 1 to MaxSlots: 24 for the hours of a
	// day, 366 for the days of a year.
	Slots int
	// Prefix starts every slot's property name, which continues with the
	// slot's number zero-padded to the width of the largest: "V00" to "V23"
	// for 24 slots. The default is "V". It must start a legal property
	// name (a letter or '_'), and not with store.ReservedPrefix ("Tk"),
	// which tablekit keeps for its own properties.
	Prefix string
}

// names returns the property name of every slot and the slot of every name.
func (l Layout) names() ([]string, map[string]int, error) {
	if l.Slots < 1 || l.Slots > MaxSlots {
		return nil, nil, fmt.Errorf("series: Layout.Slots %d is out of range: a series has 1 to %d slots", l.Slots, MaxSlots)
	}
	prefix := l.Prefix
	if prefix == "" {
		prefix = "V"
	}
	if store.ReservedProperty(prefix) {
		return nil, nil, invalid("Layout.Prefix %q starts with %q (store.ReservedPrefix), which tablekit keeps for its own properties", l.Prefix, store.ReservedPrefix)
	}
	width := len(strconv.Itoa(l.Slots - 1))
	names := make([]string, l.Slots)
	slots := make(map[string]int, l.Slots)
	for i := range names {
		d, err := keys.PadUint(uint64(i), width)
		if err != nil {
			return nil, nil, err
		}
		names[i] = prefix + d
		slots[names[i]] = i
	}
	for _, n := range []string{names[0], names[len(names)-1]} {
		if err := store.ValidatePropertyName(n); err != nil {
			return nil, nil, fmt.Errorf("series: Layout.Prefix %q makes slot property %q: %w", l.Prefix, n, err)
		}
	}
	return names, slots, nil
}

// segmentKey is the RowKey of segment k of series id: the compound key
// (id, k) with k zero-padded, so the segments sort in order after one
// another and one range query reads them all.
func segmentKey(id string, k int) (string, error) {
	d, err := keys.PadUint(uint64(k), 3)
	if err != nil {
		return "", err
	}
	return keys.Join(id, d)
}

// segmentIndex reverses segmentKey.
func segmentIndex(id, rk string) (int, error) {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 2 || parts[0] != id {
		return 0, fmt.Errorf("series: RowKey %q in the range of series %q is not one of its segments", rk, id)
	}
	k, err := keys.ParseUint(parts[1], 3)
	if err != nil {
		return 0, fmt.Errorf("series: RowKey %q in the range of series %q is not one of its segments: %w", rk, id, err)
	}
	return int(k), nil
}
