package filter

// String returns the canonical $filter text of f: single spaces, lower-case
// keywords, literals in their canonical form (strings with ” for a quote,
// X'..' for binary, datetime with seven fraction digits and Z, guid in
// lower case), each or-operand that is an and in parentheses, and the
// operand of not always in parentheses. Parse(f.String()) gives back the
// same tree. The filter that matches everything prints as "".
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return string(appendNode(nil, f.root))
}

// appendNode writes the canonical text of n.
func appendNode(b []byte, n *node) []byte {
	switch n.kind {
	case kindAll:
		return b
	case kindCmp:
		b = append(b, n.prop...)
		b = append(b, ' ')
		b = append(b, n.op.String()...)
		b = append(b, ' ')
		return appendLiteral(b, n.lit)
	case kindNot:
		b = append(b, "not ("...)
		b = appendNode(b, n.kids[0])
		return append(b, ')')
	}
	sep := " and "
	if n.kind == kindOr {
		sep = " or "
	}
	for i, k := range n.kids {
		if i > 0 {
			b = append(b, sep...)
		}
		// An or inside an and needs parentheses; an and inside an or does
		// not, but gets them for readability.
		if k.kind == kindAnd || k.kind == kindOr {
			b = append(b, '(')
			b = appendNode(b, k)
			b = append(b, ')')
		} else {
			b = appendNode(b, k)
		}
	}
	return b
}
