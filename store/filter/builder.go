package filter

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// Cond is a condition under construction: build it from KeyField, Field,
// And, Or and Not, then call String for the escaped $filter or Filter for
// a compiled one. Every value is typed and escaped, so no value can change
// the filter's structure.
//
// The zero Cond matches every entity and prints as "". A Cond built from
// bad input (an unsupported Go type, an invalid property name, invalid
// UTF-8, more than store.MaxFilterComparisons comparisons) carries an
// error, reported by Err and Filter; it never panics.
type Cond struct {
	n     *node
	count int
	err   error
}

// Err returns the error the condition carries, or nil. It is a
// *store.Error of code InvalidInput.
func (c Cond) Err() error { return c.err }

// String returns the escaped $filter text of the condition. A condition
// that carries an error prints as text that starts with "<invalid filter:"
// and that every parser refuses, so that a mistake fails loudly instead of
// becoming the empty filter, which would match every entity. Check Err
// first.
func (c Cond) String() string {
	if c.err != nil {
		return "<invalid filter: " + c.err.Error() + ">"
	}
	if c.n == nil {
		return ""
	}
	return string(appendNode(nil, c.n))
}

// Filter compiles the condition, or returns the error it carries.
func (c Cond) Filter() (*Filter, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.n == nil {
		return newFilter(&node{kind: kindAll}, 0), nil
	}
	return newFilter(c.n, c.count), nil
}

// Cond returns the condition of a parsed filter, to combine it with
// others (And, Or, Not). The filter that matches everything gives the zero
// Cond.
func (f *Filter) Cond() Cond {
	if f.MatchesAll() {
		return Cond{}
	}
	return Cond{n: f.root, count: f.count}
}

// And returns c and every one of others.
func (c Cond) And(others ...Cond) Cond { return And(append([]Cond{c}, others...)...) }

// Or returns c or any one of others.
func (c Cond) Or(others ...Cond) Cond { return Or(append([]Cond{c}, others...)...) }

// And holds when every condition holds. The zero Cond (match everything)
// is left out; And() with no conditions matches every entity.
func And(conds ...Cond) Cond { return join(kindAnd, conds) }

// Or holds when any condition holds. Or with no conditions, which would
// match nothing, carries an error (the language has no false); a zero Cond
// among them makes the whole Or match everything.
func Or(conds ...Cond) Cond {
	if len(conds) == 0 {
		return Cond{err: store.Errorf(store.CodeInvalidInput, 400, "filter.Or needs at least one condition")}
	}
	return join(kindOr, conds)
}

// Not holds when c does not. Not of the zero Cond carries an error, as a
// filter cannot express "nothing".
func Not(c Cond) Cond {
	if c.err != nil {
		return c
	}
	if c.n == nil {
		return Cond{err: store.Errorf(store.CodeInvalidInput, 400, "filter.Not of the empty condition would match nothing")}
	}
	return Cond{n: &node{kind: kindNot, kids: []*node{c.n}}, count: c.count}
}

// join builds an and or an or, flattening nested nodes of the same kind
// (as Parse does) and counting comparisons.
func join(k kind, conds []Cond) Cond {
	var kids []*node
	count := 0
	for _, c := range conds {
		if c.err != nil {
			return c
		}
		if c.n == nil {
			if k == kindOr {
				return Cond{} // true or x is true
			}
			continue // true and x is x
		}
		kids = appendFlat(kids, k, c.n)
		count += c.count
	}
	if count > store.MaxFilterComparisons {
		return Cond{err: store.Errorf(store.CodeInvalidInput, 400,
			"the filter has %d comparisons: the service allows at most %d discrete comparisons in a $filter", count, store.MaxFilterComparisons)}
	}
	switch len(kids) {
	case 0:
		return Cond{}
	case 1:
		return Cond{n: kids[0], count: count}
	}
	return Cond{n: &node{kind: k, kids: kids}, count: count}
}

// KeyField is PartitionKey or RowKey, whose values are strings. Use the
// constants PK and RK.
type KeyField string

// The two key properties.
const (
	PK KeyField = "PartitionKey"
	RK KeyField = "RowKey"
)

// Eq holds when the key equals v.
func (k KeyField) Eq(v string) Cond { return compare(string(k), Eq, v) }

// Ne holds when the key differs from v.
func (k KeyField) Ne(v string) Cond { return compare(string(k), Ne, v) }

// Gt holds when the key sorts after v (ordinal order).
func (k KeyField) Gt(v string) Cond { return compare(string(k), Gt, v) }

// Ge holds when the key is v or sorts after it.
func (k KeyField) Ge(v string) Cond { return compare(string(k), Ge, v) }

// Lt holds when the key sorts before v.
func (k KeyField) Lt(v string) Cond { return compare(string(k), Lt, v) }

// Le holds when the key is v or sorts before it.
func (k KeyField) Le(v string) Cond { return compare(string(k), Le, v) }

// Between holds when lo <= key < hi: a half-open range, the shape of a
// RowRange or PartitionRange plan.
func (k KeyField) Between(lo, hi string) Cond { return And(k.Ge(lo), k.Lt(hi)) }

// HasPrefix holds when the key starts with prefix. The service has no
// startswith, so it is written as key ge prefix and key lt next, where
// next is the first string after every string that starts with prefix; see
// PrefixEnd. It costs two comparisons.
func (k KeyField) HasPrefix(prefix string) Cond { return Field(k).HasPrefix(prefix) }

// InRange holds when the key lies in r, a range from package keys
// (keys.PrefixRange, keys.Between, keys.InvertedTicksRange): ge Lower,
// then lt Upper (le when UpperIncluded). The zero Range holds every key.
func (k KeyField) InRange(r keys.Range) Cond {
	var parts []Cond
	if r.Lower != "" {
		parts = append(parts, k.Ge(r.Lower))
	}
	if r.HasUpper {
		if r.UpperIncluded {
			parts = append(parts, k.Le(r.Upper))
		} else {
			parts = append(parts, k.Lt(r.Upper))
		}
	}
	return And(parts...)
}

// Field is a property to compare: Prop("Age"), or Timestamp. Its methods
// take the Go value of the property's type: string, []byte, bool, int32,
// int64, float64, time.Time or store.GUID. The literal's type decides the
// EDM type compared with, and the service matches only properties of that
// type: Prop("Age").Eq(int64(30)) does not match an Int32 property.
type Field string

// Timestamp is the entity's Timestamp, an Edm.DateTime set by the service.
const Timestamp Field = "Timestamp"

// Prop names a property to compare.
func Prop(name string) Field { return Field(name) }

// Eq holds when the property equals v.
func (f Field) Eq(v any) Cond { return compare(string(f), Eq, v) }

// Ne holds when the property has v's type and differs from v. An entity
// without the property does not match.
func (f Field) Ne(v any) Cond { return compare(string(f), Ne, v) }

// Gt holds when the property is greater than v.
func (f Field) Gt(v any) Cond { return compare(string(f), Gt, v) }

// Ge holds when the property is greater than or equal to v.
func (f Field) Ge(v any) Cond { return compare(string(f), Ge, v) }

// Lt holds when the property is less than v.
func (f Field) Lt(v any) Cond { return compare(string(f), Lt, v) }

// Le holds when the property is less than or equal to v.
func (f Field) Le(v any) Cond { return compare(string(f), Le, v) }

// HasPrefix holds when a string property starts with prefix (ge prefix
// and lt PrefixEnd(prefix)). The empty prefix matches every entity that
// has the property as a string.
func (f Field) HasPrefix(prefix string) Cond {
	lo := compare(string(f), Ge, prefix)
	end, ok := PrefixEnd(prefix)
	if !ok {
		return lo
	}
	return And(lo, compare(string(f), Lt, end))
}

// PrefixEnd returns the first string, in the service's ordinal (UTF-16)
// order, that sorts after every string starting with prefix: the prefix
// with its last character incremented, after dropping trailing U+FFFF
// characters, which have no successor. ok is false when there is no such
// string (prefix is empty or only U+FFFF characters): every string at or
// after prefix then starts with it.
//
// The increment follows UTF-16 code units: after U+D7FF comes U+10000
// (U+D800 to U+DFFF are surrogates, not characters), and after U+10FFFF
// comes U+E000.
func PrefixEnd(prefix string) (string, bool) {
	for prefix != "" {
		r, size := utf8.DecodeLastRuneInString(prefix)
		head := prefix[:len(prefix)-size]
		switch {
		case r == 0xFFFF:
			prefix = head
			continue
		case r == 0xD7FF:
			return head + "\U00010000", true
		case r == utf8.MaxRune:
			return head + "\uE000", true
		}
		return head + string(r+1), true
	}
	return "", false
}

// compare builds one comparison after checking the name and the value.
func compare(name string, op Op, v any) Cond {
	if err := checkName(name); err != nil {
		return Cond{err: err}
	}
	if _, isInt := v.(int); isInt {
		return Cond{err: store.Errorf(store.CodeInvalidInput, 400,
			"property %s: Go int is not a property type: use int32(v) for Edm.Int32 or int64(v) for Edm.Int64", name)}
	}
	l, err := literalOf(v)
	if err != nil {
		se := err.(*store.Error)
		se.Message = "property " + name + ": " + se.Message
		return Cond{err: se}
	}
	return Cond{n: &node{kind: kindCmp, op: op, prop: name, lit: l}, count: 1}
}

// checkName accepts the names a $filter can carry: identifiers (a letter
// or '_', then letters, digits, '_'), at most 255 UTF-16 units, and not a
// keyword of the language.
func checkName(name string) error {
	bad := func(why string) error {
		return store.Errorf(store.CodeInvalidInput, 400, "filter property name %s %s", quoteTok(name), why)
	}
	if name == "" {
		return bad("is empty")
	}
	if !utf8.ValidString(name) {
		return bad("is not valid UTF-8")
	}
	for i, r := range name {
		if !(isIdentStart(r) || (i > 0 && isIdentPart(r))) {
			return bad("is not an identifier (a letter or '_', then letters, digits or '_')")
		}
	}
	if n := len(utf16.Encode([]rune(name))); n > store.MaxPropertyNameUnits {
		return bad("is longer than " + itoa(store.MaxPropertyNameUnits) + " characters")
	}
	if isKeyword(name) {
		return bad("is a keyword of the $filter language")
	}
	return nil
}
