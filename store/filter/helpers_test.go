package filter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// sexpr renders a tree as an S-expression with typed literals, so tests
// can state the expected structure independently of the printer.
func sexpr(n *node) string {
	switch n.kind {
	case kindAll:
		return "(all)"
	case kindCmp:
		return fmt.Sprintf("(%s %s %s)", n.op, n.prop, litString(n.lit))
	}
	var b strings.Builder
	switch n.kind {
	case kindAnd:
		b.WriteString("(and")
	case kindOr:
		b.WriteString("(or")
	case kindNot:
		b.WriteString("(not")
	}
	for _, k := range n.kids {
		b.WriteString(" ")
		b.WriteString(sexpr(k))
	}
	b.WriteString(")")
	return b.String()
}

func litString(l literal) string {
	name := strings.TrimPrefix(string(l.typ), "Edm.")
	switch l.typ {
	case store.EdmString:
		return fmt.Sprintf("%s:%q", name, l.s)
	case store.EdmBinary:
		return fmt.Sprintf("%s:%x", name, l.b)
	case store.EdmBoolean:
		return fmt.Sprintf("%s:%v", name, l.i != 0)
	case store.EdmInt32, store.EdmInt64:
		return fmt.Sprintf("%s:%d", name, l.i)
	case store.EdmDouble:
		return fmt.Sprintf("%s:%v", name, l.f)
	case store.EdmDateTime:
		return fmt.Sprintf("%s:%s", name, l.t.Format("2006-01-02T15:04:05.999999999Z07:00"))
	case store.EdmGuid:
		return fmt.Sprintf("%s:%s", name, l.g)
	}
	return "?"
}

// sameTree reports whether two trees are identical, literal by literal.
func sameTree(a, b *node) bool {
	if a.kind != b.kind || a.op != b.op || a.prop != b.prop || len(a.kids) != len(b.kids) {
		return false
	}
	if a.kind == kindCmp && !a.lit.equal(b.lit) {
		return false
	}
	for i := range a.kids {
		if !sameTree(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// wantInvalid asserts err is a *store.Error with code InvalidInput and
// status 400 whose message contains every fragment.
func wantInvalid(t *testing.T, err error, fragments ...string) {
	t.Helper()
	var se *store.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *store.Error", err, err)
	}
	if se.Code != store.CodeInvalidInput || se.Status != 400 {
		t.Fatalf("error code %q status %d, want %q 400: %v", se.Code, se.Status, store.CodeInvalidInput, err)
	}
	if !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("errors.Is(%v, ErrInvalidInput) is false", err)
	}
	for _, f := range fragments {
		if !strings.Contains(se.Message, f) {
			t.Errorf("message %q lacks %q", se.Message, f)
		}
	}
}
