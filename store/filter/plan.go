package filter

import "github.com/tablekit/tablekit/store"

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
