package filter

import (
	"slices"

	"github.com/tablekit/tablekit/store"
)

// Kind classifies a query by the design guide's efficiency ranking, best
// first: a point query, then a range of rows in one partition, then a
// scan of one partition, then a range of partitions, then a scan of the
// whole table. Empty, better than all, is a filter that can match nothing.
type Kind uint8

// The query kinds, in the guide's order of efficiency (best first).
const (
	// Empty: the filter can match no entity (PartitionKey eq 'a' and
	// PartitionKey eq 'b', or a key compared with a number).
	Empty Kind = iota
	// PointQuery: PartitionKey eq and RowKey eq.
	PointQuery
	// RowRange: PartitionKey eq and RowKey bounds, joined by and only.
	RowRange
	// PartitionScan: PartitionKey eq and no RowKey bound, or RowKey
	// conditions joined by or (the guide: an or over RowKey values is a
	// partition scan, not a range query).
	PartitionScan
	// PartitionRange: PartitionKey bounds without eq, or several
	// partitions joined by or.
	PartitionRange
	// TableScan: no usable PartitionKey constraint.
	TableScan
)

// String names the kind as the guide does.
func (k Kind) String() string {
	switch k {
	case Empty:
		return "empty"
	case PointQuery:
		return "point query"
	case RowRange:
		return "row range"
	case PartitionScan:
		return "partition scan"
	case PartitionRange:
		return "partition range"
	case TableScan:
		return "table scan"
	}
	return "unknown"
}

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

// interval is a range of one key.
type interval struct{ lo, hi Bound }

var fullInterval = interval{unbounded, unbounded}

// box is a KeyRange during planning.
type box struct{ pk, rk interval }

func (b box) keyRange() KeyRange {
	return KeyRange{PKLow: b.pk.lo, PKHigh: b.pk.hi, RKLow: b.rk.lo, RKHigh: b.rk.hi}
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

// Plan is how an engine may run a filter: the query's kind, and the key
// ranges every match lies in. Ranges are sorted, and their walks (from
// Start to Past) are disjoint, so visiting each range in turn visits no
// key twice. The ranges are a superset of the matches: the engine still
// calls Match on every entity it visits.
type Plan struct {
	Kind   Kind
	Ranges []KeyRange
}

// Plan classifies the filter and computes its key ranges. A filter that
// constrains no key is a TableScan with one unbounded range; one that can
// match nothing is Empty with no ranges.
func (f *Filter) Plan() Plan {
	var root *node
	if f != nil {
		root = f.root
	}
	boxes := []box{{fullInterval, fullInterval}}
	if root != nil {
		boxes = normalize(planNode(root, false))
	}
	p := Plan{Kind: Empty, Ranges: make([]KeyRange, len(boxes))}
	for i, b := range boxes {
		p.Ranges[i] = b.keyRange()
		p.Kind = max(p.Kind, p.Ranges[i].kind())
	}
	// The guide: "Using an or to specify a filter based on RowKey values
	// results in a partition scan, and isn't treated as a range query."
	// So a disjunction over keys is at best a partition scan, and one
	// spanning several partitions a partition range.
	if p.Kind != Empty && (len(p.Ranges) > 1 || (root != nil && disjunctive(root, false))) {
		if onePartition(p.Ranges) {
			p.Kind = max(p.Kind, PartitionScan)
		} else {
			p.Kind = max(p.Kind, PartitionRange)
		}
	}
	return p
}

// onePartition reports whether every range lies in the same single partition.
func onePartition(rs []KeyRange) bool {
	for _, r := range rs {
		if r.PKLow.Unbounded || r.PKHigh.Unbounded || !r.PKLow.Inclusive || !r.PKHigh.Inclusive ||
			r.PKLow.Value != r.PKHigh.Value || r.PKLow.Value != rs[0].PKLow.Value {
			return false
		}
	}
	return true
}

// disjunctive reports whether n (not n when neg) constrains a key through
// a disjunction: an or (or a negated and) over a key comparison, or a key
// ne, which is two ranges.
func disjunctive(n *node, neg bool) bool {
	switch n.kind {
	case kindCmp:
		if !isKeyCmp(n) {
			return false
		}
		return (n.op == Ne) != neg
	case kindNot:
		return disjunctive(n.kids[0], !neg)
	case kindAnd, kindOr:
		or := (n.kind == kindOr) != neg
		for _, k := range n.kids {
			if (or && mentionsKey(k)) || (!or && disjunctive(k, neg)) {
				return true
			}
		}
	}
	return false
}

// isKeyCmp reports a comparison of PartitionKey or RowKey with a string.
func isKeyCmp(n *node) bool {
	return n.kind == kindCmp && (n.prop == "PartitionKey" || n.prop == "RowKey") && n.lit.typ == store.EdmString
}

func mentionsKey(n *node) bool {
	if n.kind == kindCmp {
		return isKeyCmp(n)
	}
	for _, k := range n.kids {
		if mentionsKey(k) {
			return true
		}
	}
	return false
}

// maxBoxes bounds the ranges of a plan: an and of ors multiplies them, and
// past this many the plan widens to their hull.
const maxBoxes = 64

// planNode computes the boxes that hold every match of n (of not n when
// neg is set). Negation is pushed down with De Morgan's laws, which hold
// because a comparison is simply false when a property is missing.
func planNode(n *node, neg bool) []box {
	full := []box{{fullInterval, fullInterval}}
	switch n.kind {
	case kindAll:
		if neg {
			return nil
		}
		return full
	case kindNot:
		return planNode(n.kids[0], !neg)
	case kindAnd, kindOr:
		intersect := (n.kind == kindAnd) != neg
		var acc []box
		for i, k := range n.kids {
			kb := planNode(k, neg)
			switch {
			case i == 0:
				acc = kb
			case intersect:
				acc = intersectBoxes(acc, kb)
			default:
				acc = append(acc, kb...)
			}
			// Merging is left to the end, since a box unbounded in one key
			// cannot be kept apart from its neighbours, though an and may
			// bound it later; only a growing list is merged early.
			if len(acc) > maxBoxes {
				acc = normalize(acc)
			}
		}
		return acc
	}
	isPK, isRK := n.prop == "PartitionKey", n.prop == "RowKey"
	if !isPK && !isRK {
		return full
	}
	if n.lit.typ != store.EdmString {
		// A key compared with another type never matches; its negation
		// always does.
		if neg {
			return full
		}
		return nil
	}
	op := n.op
	if neg {
		op = negate(op)
	}
	var out []box
	for _, iv := range intervalsOf(op, n.lit.s) {
		b := box{fullInterval, fullInterval}
		if isPK {
			b.pk = iv
		} else {
			b.rk = iv
		}
		out = append(out, b)
	}
	return out
}

// negate gives the operator of not (a op b) on a key, which is never missing.
func negate(o Op) Op {
	switch o {
	case Eq:
		return Ne
	case Ne:
		return Eq
	case Gt:
		return Le
	case Ge:
		return Lt
	case Lt:
		return Ge
	}
	return Gt // Le
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
