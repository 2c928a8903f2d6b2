package filter

import "github.com/tablekit/tablekit/store"

// Comparison describes one comparison of a filter, for a caller that needs
// to know what a server will be asked to evaluate.
type Comparison struct {
	// Property is the property compared (PartitionKey, RowKey and
	// Timestamp included).
	Property string
	// Op is the operator.
	Op Op
	// Type is the EDM type of the literal.
	Type store.EdmType
	// Negated is set when the comparison sits under a not (any number).
	Negated bool
}

// EachComparison calls fn for every comparison of the filter, in text
// order. azstore uses it to see which filters Azurite evaluates wrongly: a
// server that matches too many entities is corrected by checking each
// result with Match, but under a not it may also match too few.
func (f *Filter) EachComparison(fn func(Comparison)) {
	if f == nil {
		return
	}
	var walk func(n *node, negated bool)
	walk = func(n *node, negated bool) {
		switch n.kind {
		case kindCmp:
			fn(Comparison{Property: n.prop, Op: n.op, Type: n.lit.typ, Negated: negated})
		case kindNot:
			negated = true
		}
		for _, k := range n.kids {
			walk(k, negated)
		}
	}
	walk(f.root, false)
}
