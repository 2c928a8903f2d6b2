package filter

import (
	"testing"

	"github.com/tablekit/tablekit/store"
)

// coarseDateTimes widens DateTime comparisons as for a server that
// compares them at millisecond precision.
func coarseDateTimes(c Comparison) (Op, bool) {
	if c.Type != store.EdmDateTime {
		return c.Op, true
	}
	switch c.Op {
	case Gt:
		return Ge, true
	case Lt:
		return Le, true
	case Ne:
		return c.Op, false
	}
	return c.Op, true
}

func TestWiden(t *testing.T) {
	const t1 = "datetime'2024-01-01T00:00:00.1234567Z'"
	cases := []struct{ in, want string }{
		{"", ""},
		{"A eq 1", "A eq 1"},
		{"W gt " + t1, "W ge " + t1},
		{"W gt " + t1 + " and W lt " + t1, "W ge " + t1 + " and W le " + t1},
		{"PartitionKey eq 'p' and W ne " + t1, "PartitionKey eq 'p'"},
		{"W ne " + t1, ""},
		{"A eq 1 or W ne " + t1, ""},
		{"(A eq 1 and W ne " + t1 + ") or B eq 2", "A eq 1 or B eq 2"},
		{"not (W gt " + t1 + ")", ""},
		{"A eq 1 and not (W ge " + t1 + ")", "A eq 1 and not (W ge " + t1 + ")"},
		{"A eq 1 and not (W gt " + t1 + " or B eq 1)", "A eq 1"},
	}
	for _, c := range cases {
		f, err := Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got := f.Widen(coarseDateTimes)
		if got.String() != c.want {
			t.Errorf("Widen(%q) = %q, want %q", c.in, got.String(), c.want)
		}
		if _, err := Parse(got.String()); err != nil {
			t.Errorf("Widen(%q) prints %q, which does not parse: %v", c.in, got.String(), err)
		}
	}
	// Unchanged filters come back as they are.
	f, _ := Parse("A eq 1 and B gt 2")
	if f.Widen(coarseDateTimes) != f {
		t.Error("a filter with nothing to widen was copied")
	}
}

// TestWidenIsASuperset: over random entities, whatever the original
// filter matches, the widened one matches too.
func TestWidenIsASuperset(t *testing.T) {
	widenAll := func(c Comparison) (Op, bool) {
		switch c.Op {
		case Gt:
			return Ge, true
		case Lt:
			return Le, true
		case Ne:
			return c.Op, false
		}
		return c.Op, true
	}
	for _, text := range []string{
		"A gt 3", "A lt 3 and B ne 2", "not (A gt 3) or B eq 1", "(A ne 1 or B lt 2) and not (A eq 5)", "not (not (A gt 2))",
	} {
		f, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		w := f.Widen(widenAll)
		for a := int32(0); a < 7; a++ {
			for b := int32(0); b < 4; b++ {
				e := store.Entity{Properties: map[string]any{"A": a, "B": b}}
				if f.Match(&e) && !w.Match(&e) {
					t.Errorf("%q matches A=%d B=%d but its widening %q does not", text, a, b, w)
				}
			}
		}
	}
}
