package filter

// Widen returns a filter that matches every entity f matches, and perhaps
// more, for a server that compares some values more coarsely than the
// service: fn sees each comparison and returns the operator to send
// instead (its own to keep it), or keep false to leave the comparison out
// (as if it matched everything). A comparison fn changes under a not
// cannot be widened there (a wider match inside is a narrower one
// outside), so the whole not is left out. Check the entities the wider
// filter returns with f's Match to get f's exact answer.
func (f *Filter) Widen(fn func(c Comparison) (op Op, keep bool)) *Filter {
	if f.MatchesAll() {
		return f
	}
	root := widen(f.root, fn, false)
	if root == nil {
		return newFilter(&node{kind: kindAll}, 0)
	}
	if root == f.root {
		return f
	}
	return newFilter(root, countComparisons(root))
}

// widen returns n widened, nil for "matches everything", or n itself when
// nothing changed.
func widen(n *node, fn func(Comparison) (Op, bool), negated bool) *node {
	switch n.kind {
	case kindCmp:
		op, keep := fn(Comparison{Property: n.prop, Op: n.op, Type: n.lit.typ, Negated: negated})
		switch {
		case keep && op == n.op:
			return n
		case negated:
			return &node{kind: kindNot} // marks "changed under not"
		case !keep:
			return nil
		}
		c := *n
		c.op = op
		return &c
	case kindNot:
		k := widen(n.kids[0], fn, true)
		if k == n.kids[0] {
			return n
		}
		return nil
	}
	changed := false
	var kids []*node
	for _, k := range n.kids {
		w := widen(k, fn, negated)
		if w != k {
			changed = true
		}
		if negated && w != k {
			return &node{kind: kindNot}
		}
		if w == nil {
			if n.kind == kindOr {
				return nil // one side matches everything: so does the or
			}
			continue
		}
		kids = append(kids, w)
	}
	if !changed {
		return n
	}
	switch len(kids) {
	case 0:
		return nil
	case 1:
		return kids[0]
	}
	return &node{kind: n.kind, kids: kids}
}

// countComparisons counts the comparisons of a tree.
func countComparisons(n *node) int {
	if n.kind == kindCmp {
		return 1
	}
	c := 0
	for _, k := range n.kids {
		c += countComparisons(k)
	}
	return c
}
