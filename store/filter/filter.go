// Package filter is the Table service's $filter language: a parser and
// evaluator with the service's semantics, a printer that writes the
// canonical form, a typed builder that escapes every value, and a query
// planner that tells which key ranges a query can be restricted to.
//
// The dialect is the subset of OData the Table service accepts: the
// comparisons eq ne gt ge lt le between a property and a literal, joined
// with and, or, not and parentheses, and the literals of the eight EDM
// types. Anything else (functions such as startswith, arithmetic,
// double-quoted strings, null, more than store.MaxFilterComparisons
// comparisons) is refused with a *store.Error of code InvalidInput.
// docs/filter.md gives the grammar and cites the service documentation for
// every rule.
package filter

import (
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"slices"
)

// Op is a comparison operator.
type Op uint8

// The six comparison operators of the $filter language.
const (
	Eq Op = iota + 1 // eq: equal
	Ne               // ne: not equal
	Gt               // gt: greater than
	Ge               // ge: greater than or equal
	Lt               // lt: less than
	Le               // le: less than or equal
)

// String returns the operator's keyword (eq, ne, ...).
func (o Op) String() string {
	switch o {
	case Eq:
		return "eq"
	case Ne:
		return "ne"
	case Gt:
		return "gt"
	case Ge:
		return "ge"
	case Lt:
		return "lt"
	case Le:
		return "le"
	}
	return "op?"
}

// holds reports whether the operator is satisfied by a three-way
// comparison result c (negative, zero, positive).
func (o Op) holds(c int) bool {
	switch o {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	}
	return false
}

// kind is the kind of a node of the syntax tree.
type kind uint8

const (
	kindAll kind = iota // the empty filter: matches every entity
	kindCmp             // property op literal
	kindAnd             // every child holds (two or more children)
	kindOr              // some child holds (two or more children)
	kindNot             // the one child does not hold
)

// node is one node of a filter's syntax tree. And and or nodes are n-ary
// and never have a child of their own kind, so that a tree has exactly one
// printed form and printing then parsing gives the same tree back.
type node struct {
	kind kind
	op   Op
	prop string
	lit  literal
	kids []*node
}

// Filter is a parsed, compiled $filter. It is immutable and safe for
// concurrent use. The zero of *Filter (nil) and Parse("") match every
// entity.
type Filter struct {
	root  *node
	prog  matcher
	count int
	props []string // custom properties compared, sorted, each once
}

// Parse parses a $filter string in the Table service's dialect. The empty
// string (or one of only spaces) matches every entity. A malformed or
// unsupported filter is refused with a *store.Error of code
// store.CodeInvalidInput (status 400) whose message names the offset and
// the offending token.
func Parse(s string) (*Filter, error) {
	root, count, err := parse(s)
	if err != nil {
		return nil, err
	}
	return newFilter(root, count), nil
}

// ParseQuery checks a query request as the service does, $top (0 to
// 1,000), the $select names and the $filter, and returns the parsed
// filter. Every backend calls it before running a query, so they refuse the
// same requests with the same codes.
func ParseQuery(q store.Query) (*Filter, error) {
	if err := store.ValidateTop(q.Top); err != nil {
		return nil, err
	}
	if err := store.ValidateSelect(q.Select); err != nil {
		return nil, err
	}
	if err := driver.ValidateFilterLength(q.Filter); err != nil {
		return nil, err
	}
	f, err := Parse(q.Filter)
	if err != nil {
		return nil, err
	}
	// The filter goes out in its canonical form, which can be longer (a
	// Double written without its exponent): check that too, when it could
	// matter.
	if len(q.Filter) > store.MaxFilterBytes/4 {
		if err := driver.ValidateFilterLength(f.String()); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// newFilter compiles a checked tree.
func newFilter(root *node, count int) *Filter {
	return &Filter{root: root, prog: compile(root), count: count, props: propertyNames(root)}
}

// propertyNames lists the custom properties the tree compares, sorted.
func propertyNames(root *node) []string {
	var names []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.kind == kindCmp {
			switch n.prop {
			case "PartitionKey", "RowKey", "Timestamp":
			default:
				if !slices.Contains(names, n.prop) {
					names = append(names, n.prop)
				}
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	slices.Sort(names)
	return names
}

// Properties returns the names of the custom properties the filter
// compares (not PartitionKey, RowKey or Timestamp), sorted, each once. An
// engine can decode just these before calling Match, and decode the rest
// only for the entities that match. The caller must not modify the slice.
func (f *Filter) Properties() []string {
	if f == nil {
		return nil
	}
	return f.props
}

// Comparisons returns the number of comparisons in the filter, the count
// the service limits to store.MaxFilterComparisons.
func (f *Filter) Comparisons() int {
	if f == nil {
		return 0
	}
	return f.count
}

// MatchesAll reports whether the filter is empty and so matches every entity.
func (f *Filter) MatchesAll() bool {
	return f == nil || f.root.kind == kindAll
}

// Match reports whether the entity satisfies the filter, with the service's
// semantics: typed comparisons, a missing (or nil) property never
// satisfies a comparison, strings in ordinal order. Match does not
// allocate.
func (f *Filter) Match(e *store.Entity) bool {
	if f == nil {
		return true
	}
	return f.prog.match(e)
}

// invalidAt builds the InvalidInput error every refusal uses.
func invalidAt(pos int, tok string, format string, args ...any) *store.Error {
	err := store.Errorf(store.CodeInvalidInput, 400, format, args...)
	err.Message = "$filter: at offset " + itoa(pos) + " (" + quoteTok(tok) + "): " + err.Message
	return err
}
