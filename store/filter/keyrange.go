package filter

import "github.com/tablekit/tablekit/store"

// Bound is one end of a key interval: Value, included when Inclusive, or
// no bound at all when Unbounded (Value and Inclusive are then unused).
type Bound struct {
	Value     string
	Inclusive bool
	Unbounded bool
}

var unbounded = Bound{Unbounded: true}

// KeyRange is a box of keys: the PartitionKeys between PKLow and PKHigh
// and, within each, the RowKeys between RKLow and RKHigh. Strings compare
// in the service's ordinal order (store.CompareOrdinal).
//
// An engine walking keys in (PartitionKey, RowKey) order visits a range by
// seeking to Start and stopping at the first key for which Past is true.
// When the range spans several partitions and bounds the RowKey, that walk
// also passes keys outside the box: Contains tells them apart.
type KeyRange struct {
	PKLow, PKHigh Bound
	RKLow, RKHigh Bound
}

// aboveLow reports whether s is at or above the lower bound b.
func aboveLow(s string, b Bound) bool {
	if b.Unbounded {
		return true
	}
	c := store.CompareOrdinal(s, b.Value)
	return c > 0 || (c == 0 && b.Inclusive)
}

// belowHigh reports whether s is at or below the upper bound b.
func belowHigh(s string, b Bound) bool {
	if b.Unbounded {
		return true
	}
	c := store.CompareOrdinal(s, b.Value)
	return c < 0 || (c == 0 && b.Inclusive)
}

// Contains reports whether the key (pk, rk) lies in the range.
func (r KeyRange) Contains(pk, rk string) bool {
	return aboveLow(pk, r.PKLow) && belowHigh(pk, r.PKHigh) &&
		aboveLow(rk, r.RKLow) && belowHigh(rk, r.RKHigh)
}

// Start returns the smallest key (pk, rk) at which the range may begin:
// every key of the range is at or after it in (PartitionKey, RowKey)
// order. ok is false when the range has no lower bound at all, and the
// walk starts at the first key of the table. An exclusive bound v becomes
// v+"\x00", the next string after v.
func (r KeyRange) Start() (pk, rk string, ok bool) {
	if r.PKLow.Unbounded && r.RKLow.Unbounded {
		return "", "", false
	}
	if !r.PKLow.Unbounded {
		pk = r.PKLow.Value
		if !r.PKLow.Inclusive {
			pk += "\x00"
		}
	}
	if !r.RKLow.Unbounded {
		rk = r.RKLow.Value
		if !r.RKLow.Inclusive {
			rk += "\x00"
		}
	}
	return pk, rk, true
}

// Next returns, for a key (pk, rk) that lies outside the range's RowKey
// bounds, the smallest key after it at which the range may continue: the
// RowKey lower bound in the same partition when rk is below it, or the
// start of the next partition when rk is above the upper bound. ok is false
// when rk is within the RowKey bounds. A walk over several partitions seeks
// there instead of visiting the rest of a partition, so a RowKey range is
// not a scan of every row of every partition. The key returned is always
// after (pk, rk), so a walk that seeks makes progress.
func (r KeyRange) Next(pk, rk string) (npk, nrk string, ok bool) {
	if !aboveLow(rk, r.RKLow) {
		nrk = r.RKLow.Value
		if !r.RKLow.Inclusive {
			nrk += "\x00"
		}
		return pk, nrk, true
	}
	if !belowHigh(rk, r.RKHigh) {
		return pk + "\x00", "", true
	}
	return "", "", false
}

// Past reports whether the key (pk, rk) comes after every key of the range
// in (PartitionKey, RowKey) order, so that a walk in that order can stop.
func (r KeyRange) Past(pk, rk string) bool {
	if r.PKHigh.Unbounded {
		return false
	}
	c := store.CompareOrdinal(pk, r.PKHigh.Value)
	switch {
	case c > 0:
		return true
	case c < 0:
		return false
	case !r.PKHigh.Inclusive:
		return true
	}
	return !belowHigh(rk, r.RKHigh)
}

// kind classifies one range.
func (r KeyRange) kind() Kind {
	single := func(i interval) bool {
		return !i.lo.Unbounded && !i.hi.Unbounded && i.lo.Inclusive && i.hi.Inclusive && i.lo.Value == i.hi.Value
	}
	switch {
	case single(interval{r.PKLow, r.PKHigh}):
		switch {
		case single(interval{r.RKLow, r.RKHigh}):
			return PointQuery
		case !r.RKLow.Unbounded || !r.RKHigh.Unbounded:
			return RowRange
		}
		return PartitionScan
	case !r.PKLow.Unbounded || !r.PKHigh.Unbounded:
		return PartitionRange
	}
	return TableScan
}
