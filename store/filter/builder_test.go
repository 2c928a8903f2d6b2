package filter

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

func TestBuilderString(t *testing.T) {
	tests := []struct {
		rule string
		c    Cond
		want string
	}{
		{"key eq", PK.Eq("Sales"), "PartitionKey eq 'Sales'"},
		{"quote escaped", Prop("Name").Eq("O'Brien"), "Name eq 'O''Brien'"},
		{"keywords stay inside the string", PK.Eq("a' or RowKey ne 'b"), "PartitionKey eq 'a'' or RowKey ne ''b'"},
		{"RowKey ge", RK.Ge("a"), "RowKey ge 'a'"},
		{"Int32", Prop("Age").Gt(int32(30)), "Age gt 30"},
		{"Int64", Prop("Big").Le(int64(-5)), "Big le -5L"},
		{"Double", Prop("Score").Lt(2.0), "Score lt 2.0"},
		{"Double large, without exponent", Prop("Score").Lt(1e21), "Score lt 1000000000000000000000.0"},
		{"Double million", Prop("Score").Ge(2.5e6), "Score ge 2500000.0"},
		{"Double small, without exponent", Prop("Score").Gt(1.5e-7), "Score gt 0.00000015"},
		{"bool", Prop("Active").Ne(false), "Active ne false"},
		{"binary", Prop("Bin").Eq([]byte{0x0a, 0xff}), "Bin eq X'0AFF'"},
		{"datetime in UTC", Timestamp.Ge(time.Date(2024, 1, 1, 2, 0, 0, 0, time.FixedZone("x", 7200))),
			"Timestamp ge datetime'2024-01-01T00:00:00.0000000Z'"},
		{"guid", Prop("ID").Eq(gid), "ID eq guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'"},
		{"and", And(PK.Eq("a"), RK.Eq("1")), "PartitionKey eq 'a' and RowKey eq '1'"},
		{"or of ands gets parentheses", Or(And(PK.Eq("a"), RK.Eq("1")), And(PK.Eq("b"), RK.Eq("2"))),
			"(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey eq '2')"},
		{"and of ors gets parentheses", And(Or(PK.Eq("a"), PK.Eq("b")), RK.Eq("1")),
			"(PartitionKey eq 'a' or PartitionKey eq 'b') and RowKey eq '1'"},
		{"nested ands flatten", And(PK.Eq("a"), And(RK.Ge("1"), RK.Lt("2"))), "PartitionKey eq 'a' and RowKey ge '1' and RowKey lt '2'"},
		{"method chaining", PK.Eq("a").And(RK.Eq("1")).Or(PK.Eq("c")), "(PartitionKey eq 'a' and RowKey eq '1') or PartitionKey eq 'c'"},
		{"not", Not(Prop("Age").Eq(int32(3))), "not (Age eq 3)"},
		{"zero Cond is everything", Cond{}, ""},
		{"And() is everything", And(), ""},
		{"And drops everything", And(Cond{}, PK.Eq("a")), "PartitionKey eq 'a'"},
		{"Or with everything is everything", Or(Cond{}, PK.Eq("a")), ""},
		{"single And is its operand", And(PK.Eq("a")), "PartitionKey eq 'a'"},
		{"Between", RK.Between("a", "b"), "RowKey ge 'a' and RowKey lt 'b'"},
		{"HasPrefix", PK.HasPrefix("emp_"), "PartitionKey ge 'emp_' and PartitionKey lt 'emp`'"},
		{"HasPrefix on a property", Prop("Name").HasPrefix("ab"), "Name ge 'ab' and Name lt 'ac'"},
		{"HasPrefix empty", PK.HasPrefix(""), "PartitionKey ge ''"},
		{"HasPrefix of U+FFFF only", PK.HasPrefix("\uffff"), "PartitionKey ge '\uffff'"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if err := tt.c.Err(); err != nil {
				t.Fatalf("Err() = %v", err)
			}
			if got := tt.c.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			f, err := tt.c.Filter()
			if err != nil {
				t.Fatal(err)
			}
			g, err := Parse(tt.c.String())
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.c.String(), err)
			}
			if !sameTree(f.root, g.root) {
				t.Fatalf("built %s, parsed %s", sexpr(f.root), sexpr(g.root))
			}
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	many := make([]Cond, 16)
	for i := range many {
		many[i] = Prop("A").Eq(int32(i))
	}
	tests := []struct {
		rule string
		c    Cond
		want string
	}{
		{"Go int", Prop("Age").Eq(30), "use int32(v)"},
		{"unsupported type", Prop("Age").Eq(uint8(3)), "Go type uint8 is not supported"},
		{"nil value", Prop("Age").Eq(nil), "null"},
		{"NaN", Prop("X").Eq(nan()), "NaN"},
		{"invalid UTF-8 value", PK.Eq("\xff"), "not valid UTF-8"},
		{"year 10000", Timestamp.Gt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)), "0001 to 9999"},
		{"empty name", Prop("").Eq(int32(1)), "is empty"},
		{"name with a space", Prop("A B").Eq(int32(1)), "not an identifier"},
		{"name with a quote", Prop("A'B").Eq(int32(1)), "not an identifier"},
		{"name starting with a digit", Prop("1A").Eq(int32(1)), "not an identifier"},
		{"keyword name", Prop("and").Eq(int32(1)), "keyword"},
		{"long name", Prop(strings.Repeat("a", 256)).Eq(int32(1)), "longer than 255"},
		{"sixteen comparisons", And(many...), "16 comparisons"},
		{"sixteen comparisons by HasPrefix", And(append(many[:14:14], PK.HasPrefix("a"))...), "16 comparisons"},
		{"empty Or", Or(), "at least one"},
		{"Not of everything", Not(Cond{}), "nothing"},
		{"error propagates through And", And(PK.Eq("a"), Prop("X").Eq(30)), "use int32(v)"},
		{"error propagates through Or", Or(Prop("X").Eq(30), PK.Eq("a")), "use int32(v)"},
		{"error propagates through Not", Not(Prop("X").Eq(30)), "use int32(v)"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			wantInvalid(t, tt.c.Err(), tt.want)
			if _, err := tt.c.Filter(); err != tt.c.Err() {
				t.Fatalf("Filter() error %v, want %v", err, tt.c.Err())
			}
			s := tt.c.String()
			if !strings.HasPrefix(s, "<invalid filter:") {
				t.Fatalf("String() = %q, want the invalid marker", s)
			}
			if _, err := Parse(s); err == nil {
				t.Fatalf("Parse accepted the invalid marker %q", s)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"emp_", "emp`", true},
		{"a", "b", true},
		{"a\uffff", "b", true},
		{"a\uffff\uffff", "b", true},
		{"\uffff", "", false},
		{"", "", false},
		{"a\ud7ff", "a\U00010000", true},
		{"a\U0001F600", "a\U0001F601", true},
		{"a\U0010FFFF", "a\uE000", true},
		{"a\uE000", "a\uE001", true},
		{"é", "ê", true},
	}
	for _, tt := range tests {
		got, ok := PrefixEnd(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("PrefixEnd(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestHasPrefixExact checks HasPrefix against strings.HasPrefix on strings
// around the UTF-16 edges: the range must hold exactly the prefixed strings.
func TestHasPrefixExact(t *testing.T) {
	alphabet := []string{"", "a", "b", "\ud7ff", "\U00010000", "\U0001F600", "\U0010FFFF", "\uE000", "\uffff", "`", "_"}
	var words []string
	for _, x := range alphabet {
		for _, y := range alphabet {
			for _, z := range alphabet {
				words = append(words, x+y+z)
			}
		}
	}
	for _, p := range words {
		f, err := PK.HasPrefix(p).Filter()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range words {
			if !utf8.ValidString(w) {
				continue
			}
			got := f.Match(&store.Entity{PartitionKey: w})
			if want := strings.HasPrefix(w, p); got != want {
				t.Fatalf("PK.HasPrefix(%q) on %q = %v, want %v (filter %s)", p, w, got, want, f)
			}
		}
	}
}
