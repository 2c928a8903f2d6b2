package filter

import (
	"math"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// FuzzBuilderRoundTrip proves that no value can change a built filter's
// structure: whatever the string, name, number or bytes, build -> print
// -> parse gives back the same tree, with the same number of comparisons,
// and the parsed filter still matches the entity holding those values.
func FuzzBuilderRoundTrip(f *testing.F) {
	seeds := []string{
		"", "'", "''", "'''", "a' or 'a' eq 'a", "') or (", "' or ", "eq", "and", "not (",
		"PartitionKey eq 'x'", "x' or PartitionKey ne '", "\"", "(", ")", "datetime'2024-01-01T00:00:00Z'",
		"X'00'", "startswith(", "\t", "\x00", "\uffff", "\U0010FFFF", "😀", "\xff", "emp_",
	}
	for i, s := range seeds {
		f.Add(s, "Name", int64(i)-3, float64(i)/3, []byte(s))
	}
	f.Add("v", "and", int64(math.MaxInt64), math.Inf(1), []byte(nil))
	f.Add("v", "A B", int64(math.MinInt32), math.Copysign(0, -1), []byte{0xff})
	f.Add("v", "Größe", int64(math.MinInt64), 1e300, []byte{})
	f.Fuzz(func(t *testing.T, s, name string, i int64, fl float64, b []byte) {
		at := time.Unix(0, i).UTC()
		c := And(
			PK.Eq(s),
			Or(RK.Gt(s), Not(Prop(name).Ne(s)), PK.HasPrefix(s)),
			Prop(name).Le(b),
			Or(Prop("I").Eq(int32(i)), Prop("L").Ge(i), Prop("D").Lt(fl)),
			Timestamp.Ge(at),
		)
		if err := c.Err(); err != nil {
			// Only bad input may fail: invalid UTF-8, a name that is not
			// an identifier, a NaN or infinite double.
			var se *store.Error
			if !asStoreError(err, &se) || se.Code != store.CodeInvalidInput {
				t.Fatalf("error %v is not InvalidInput", err)
			}
			if utf8.ValidString(s) && checkName(name) == nil && !math.IsNaN(fl) && !math.IsInf(fl, 0) {
				t.Fatalf("valid input refused: %v", err)
			}
			return
		}
		text := c.String()
		g, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		built, _ := c.Filter()
		if !sameTree(built.root, g.root) {
			t.Fatalf("structure changed:\nbuilt  %s\nparsed %s\ntext   %q", sexpr(built.root), sexpr(g.root), text)
		}
		wantCount := 10
		if _, ok := PrefixEnd(s); !ok {
			wantCount = 9
		}
		if g.Comparisons() != wantCount {
			t.Fatalf("parsed %d comparisons, built %d: %q", g.Comparisons(), wantCount, text)
		}
		if g.String() != text {
			t.Fatalf("printing is not canonical: %q then %q", text, g.String())
		}
		e := &store.Entity{PartitionKey: s, RowKey: s, Timestamp: at,
			Properties: map[string]any{name: b, "I": int32(i)}}
		if name == "I" {
			e.Properties["I"] = int32(i) // the name collides: keep the Int32 branch true
		}
		if !e.Timestamp.IsZero() && name != "I" && !g.Match(e) {
			t.Fatalf("the parsed filter does not match the entity it was built from: %q", text)
		}
	})
}

func asStoreError(err error, target **store.Error) bool {
	se, ok := err.(*store.Error)
	if ok {
		*target = se
	}
	return ok
}

// FuzzParse proves that Parse never panics, refuses only with
// InvalidInput, and that whatever it accepts prints to a canonical text
// that parses back to the same tree.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "PartitionKey eq 'a' and RowKey ge 'b''c'", "(A eq 1 or B eq 2L) and not (C eq 1.5D)",
		"T eq datetime'2024-01-01T00:00:00.1234567+01:00'", "G ne guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'",
		"B lt X'0a' or B gt binary'FF'", "not not (A eq true)", "A eq -0.0", "A eq 1e-5", "((A eq 1))",
		"startswith(A,'x')", "A eq \"x\"", "A eq 1 add 2", "A eq 'unterminated",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			var se *store.Error
			if !asStoreError(err, &se) || se.Code != store.CodeInvalidInput || se.Status != 400 {
				t.Fatalf("Parse(%q) error %v is not InvalidInput 400", s, err)
			}
			return
		}
		text := p.String()
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its printed form %q is refused: %v", s, text, err)
		}
		if !sameTree(p.root, q.root) {
			t.Fatalf("%q: tree %s printed as %q parses to %s", s, sexpr(p.root), text, sexpr(q.root))
		}
		if q.String() != text {
			t.Fatalf("printing is not canonical: %q then %q", text, q.String())
		}
		_ = p.Plan()
	})
}
