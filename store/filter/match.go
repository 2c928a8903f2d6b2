package filter

import (
	"bytes"
	"time"

	"github.com/tablekit/tablekit/store"
)

// matcher is the compiled form of a tree: each node is a small value whose
// match method does no allocation, so that an engine can call Match for
// every entity it visits.
type matcher interface {
	match(e *store.Entity) bool
}

type (
	allM  struct{}
	noneM struct{}
	andM  []matcher
	orM   []matcher
	notM  struct{ m matcher }
	// pkM and rkM compare a key with a string literal.
	pkM struct {
		op Op
		v  string
	}
	rkM struct {
		op Op
		v  string
	}
	// tsM compares the Timestamp with a datetime literal.
	tsM struct {
		op Op
		t  time.Time
	}
	// propM compares a custom property with a literal.
	propM struct {
		name string
		op   Op
		lit  literal
	}
)

func (allM) match(*store.Entity) bool  { return true }
func (noneM) match(*store.Entity) bool { return false }

func (m andM) match(e *store.Entity) bool {
	for _, k := range m {
		if !k.match(e) {
			return false
		}
	}
	return true
}

func (m orM) match(e *store.Entity) bool {
	for _, k := range m {
		if k.match(e) {
			return true
		}
	}
	return false
}

func (m notM) match(e *store.Entity) bool { return !m.m.match(e) }

func (m pkM) match(e *store.Entity) bool {
	return m.op.holds(store.CompareOrdinal(e.PartitionKey, m.v))
}

func (m rkM) match(e *store.Entity) bool {
	return m.op.holds(store.CompareOrdinal(e.RowKey, m.v))
}

func (m tsM) match(e *store.Entity) bool {
	if e.Timestamp.IsZero() { // never written: no Timestamp
		return false
	}
	return m.op.holds(e.Timestamp.Compare(m.t))
}

func (m *propM) match(e *store.Entity) bool {
	v, ok := e.Properties[m.name]
	if !ok || v == nil {
		return false
	}
	c, ok := compareValue(v, &m.lit)
	if !ok {
		return false
	}
	return m.op.holds(c)
}

// compareValue compares a stored value with a literal of the same EDM
// type. ok is false when the types differ (a comparison across types
// matches nothing) or when a double is NaN, which is unordered.
func compareValue(v any, l *literal) (c int, ok bool) {
	switch x := v.(type) {
	case string:
		if l.typ != store.EdmString {
			return 0, false
		}
		return store.CompareOrdinal(x, l.s), true
	case int32:
		if l.typ != store.EdmInt32 {
			return 0, false
		}
		return cmpInt(int64(x), l.i), true
	case int64:
		if l.typ != store.EdmInt64 {
			return 0, false
		}
		return cmpInt(x, l.i), true
	case float64:
		if l.typ != store.EdmDouble || x != x {
			return 0, false
		}
		switch {
		case x < l.f:
			return -1, true
		case x > l.f:
			return 1, true
		}
		return 0, true
	case bool:
		if l.typ != store.EdmBoolean {
			return 0, false
		}
		var i int64
		if x {
			i = 1
		}
		return cmpInt(i, l.i), true
	case time.Time:
		if l.typ != store.EdmDateTime {
			return 0, false
		}
		return x.Compare(l.t), true
	case []byte:
		if l.typ != store.EdmBinary {
			return 0, false
		}
		return bytes.Compare(x, l.b), true
	case store.GUID:
		if l.typ != store.EdmGuid {
			return 0, false
		}
		return bytes.Compare(x[:], l.g[:]), true
	}
	return 0, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compile turns a checked tree into matchers.
func compile(n *node) matcher {
	switch n.kind {
	case kindAll:
		return allM{}
	case kindAnd:
		m := make(andM, len(n.kids))
		for i, k := range n.kids {
			m[i] = compile(k)
		}
		return m
	case kindOr:
		m := make(orM, len(n.kids))
		for i, k := range n.kids {
			m[i] = compile(k)
		}
		return m
	case kindNot:
		return notM{compile(n.kids[0])}
	}
	switch n.prop {
	case "PartitionKey", "RowKey":
		if n.lit.typ != store.EdmString {
			return noneM{}
		}
		if n.prop == "PartitionKey" {
			return pkM{n.op, n.lit.s}
		}
		return rkM{n.op, n.lit.s}
	case "Timestamp":
		if n.lit.typ != store.EdmDateTime {
			return noneM{}
		}
		return tsM{n.op, n.lit.t}
	}
	return &propM{n.prop, n.op, n.lit}
}
