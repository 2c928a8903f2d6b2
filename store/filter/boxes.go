package filter

import (
	"slices"

	"github.com/tablekit/tablekit/store"
)

// interval is a range of one key.
type interval struct{ lo, hi Bound }

var fullInterval = interval{unbounded, unbounded}

// box is a KeyRange during planning.
type box struct{ pk, rk interval }

func (b box) keyRange() KeyRange {
	return KeyRange{PKLow: b.pk.lo, PKHigh: b.pk.hi, RKLow: b.rk.lo, RKHigh: b.rk.hi}
}

// intervalsOf gives the intervals of key op v.
func intervalsOf(op Op, v string) []interval {
	at := func(incl bool) Bound { return Bound{Value: v, Inclusive: incl} }
	var ivs []interval
	switch op {
	case Eq:
		ivs = []interval{{at(true), at(true)}}
	case Ne:
		ivs = []interval{{unbounded, at(false)}, {at(false), unbounded}}
	case Gt:
		ivs = []interval{{at(false), unbounded}}
	case Ge:
		ivs = []interval{{at(true), unbounded}}
	case Lt:
		ivs = []interval{{unbounded, at(false)}}
	case Le:
		ivs = []interval{{unbounded, at(true)}}
	}
	out := ivs[:0]
	for _, iv := range ivs {
		iv.lo = normLow(iv.lo)
		if !iv.empty() {
			out = append(out, iv)
		}
	}
	return out
}

// normLow writes ge ” (every key) as no bound.
func normLow(b Bound) Bound {
	if !b.Unbounded && b.Inclusive && b.Value == "" {
		return unbounded
	}
	return b
}

// cmpLow orders lower bounds, looser first.
func cmpLow(a, b Bound) int {
	switch {
	case a.Unbounded && b.Unbounded:
		return 0
	case a.Unbounded:
		return -1
	case b.Unbounded:
		return 1
	}
	if c := store.CompareOrdinal(a.Value, b.Value); c != 0 {
		return c
	}
	switch {
	case a.Inclusive == b.Inclusive:
		return 0
	case a.Inclusive:
		return -1
	}
	return 1
}

// cmpHigh orders upper bounds, tighter first.
func cmpHigh(a, b Bound) int {
	switch {
	case a.Unbounded && b.Unbounded:
		return 0
	case a.Unbounded:
		return 1
	case b.Unbounded:
		return -1
	}
	if c := store.CompareOrdinal(a.Value, b.Value); c != 0 {
		return c
	}
	switch {
	case a.Inclusive == b.Inclusive:
		return 0
	case a.Inclusive:
		return 1
	}
	return -1
}

// empty reports whether no string lies in the interval.
func (iv interval) empty() bool {
	if iv.hi.Unbounded {
		return false
	}
	lo := iv.lo
	if lo.Unbounded {
		lo = Bound{Value: "", Inclusive: true}
	}
	c := store.CompareOrdinal(lo.Value, iv.hi.Value)
	return c > 0 || (c == 0 && !(lo.Inclusive && iv.hi.Inclusive))
}

func (iv interval) intersect(jv interval) interval {
	out := iv
	if cmpLow(jv.lo, iv.lo) > 0 {
		out.lo = jv.lo
	}
	if cmpHigh(jv.hi, iv.hi) < 0 {
		out.hi = jv.hi
	}
	return out
}

func (iv interval) hull(jv interval) interval {
	out := iv
	if cmpLow(jv.lo, iv.lo) < 0 {
		out.lo = jv.lo
	}
	if cmpHigh(jv.hi, iv.hi) > 0 {
		out.hi = jv.hi
	}
	return out
}

func intersectBoxes(as, bs []box) []box {
	var out []box
	for _, a := range as {
		for _, b := range bs {
			c := box{a.pk.intersect(b.pk), a.rk.intersect(b.rk)}
			if !c.pk.empty() && !c.rk.empty() {
				out = append(out, c)
			}
		}
	}
	return out
}

// normalize sorts boxes by their start key and merges boxes whose walks
// overlap into their hull, so that the walks of the result are disjoint.
// Past maxBoxes after merging it returns the hull of all.
func normalize(bs []box) []box {
	bs = mergeOverlaps(bs)
	if len(bs) > maxBoxes {
		h := bs[0]
		for _, b := range bs[1:] {
			h = box{h.pk.hull(b.pk), h.rk.hull(b.rk)}
		}
		return []box{h}
	}
	return bs
}

// mergeOverlaps sorts boxes by start key and merges those whose walks overlap.
func mergeOverlaps(bs []box) []box {
	if len(bs) <= 1 {
		return bs
	}
	// Merging lowers a hull's start, which can make it overlap a box
	// already passed: repeat until a pass merges nothing.
	for {
		slices.SortFunc(bs, func(a, b box) int {
			if c := cmpLow(a.pk.lo, b.pk.lo); c != 0 {
				return c
			}
			return cmpLow(a.rk.lo, b.rk.lo)
		})
		merged := false
		out := bs[:1]
		for _, b := range bs[1:] {
			cur := &out[len(out)-1]
			pk, rk, ok := b.keyRange().Start()
			if !ok || !cur.keyRange().Past(pk, rk) {
				*cur = box{cur.pk.hull(b.pk), cur.rk.hull(b.rk)}
				merged = true
				continue
			}
			out = append(out, b)
		}
		bs = out
		if !merged {
			return bs
		}
	}
}
