package filter

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

var (
	t2024 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	gid   = store.GUID{0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9}
)

// sample is an entity carrying one property of every type.
func sample() *store.Entity {
	return &store.Entity{
		PartitionKey: "Sales",
		RowKey:       "0042",
		Timestamp:    t2024.Add(time.Hour),
		Properties: map[string]any{
			"Name":    "O'Brien",
			"Bin":     []byte{0x0a, 0x1b},
			"Active":  true,
			"Age":     int32(30),
			"Big":     int64(5_000_000_000),
			"Score":   1.5,
			"When":    t2024,
			"ID":      gid,
			"Nil":     nil,
			"NaN":     math.NaN(),
			"Emoji":   "\U0001F600", // supplementary: a surrogate pair in UTF-16
			"Private": "\uE000",     // U+E000: above the surrogates in UTF-16
		},
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		rule, filter string
		want         bool
	}{
		// Keys and Timestamp.
		{"PartitionKey eq", "PartitionKey eq 'Sales'", true},
		{"PartitionKey is case-sensitive", "PartitionKey eq 'sales'", false},
		{"RowKey range", "RowKey ge '0040' and RowKey lt '0050'", true},
		{"RowKey ordinal: digits sort as text", "RowKey gt '100'", false},
		{"Timestamp after", "Timestamp gt datetime'2024-01-01T00:00:00Z'", true},
		{"Timestamp before", "Timestamp lt datetime'2024-01-01T00:00:00Z'", false},
		{"PartitionKey with a number matches nothing", "PartitionKey eq 42", false},
		{"PartitionKey ne a number matches nothing", "PartitionKey ne 42", false},
		{"Timestamp with a string matches nothing", "Timestamp gt '2000'", false},
		// String.
		{"string eq with escaped quote", "Name eq 'O''Brien'", true},
		{"string ne", "Name ne 'x'", true},
		{"string gt ordinal", "Name gt 'O'", true},
		{"string lt: upper case sorts before lower", "Name lt 'o'", true},
		{"string le itself", "Name le 'O''Brien'", true},
		{"string vs Int32 matches nothing", "Name eq 1", false},
		{"string ne Int32 matches nothing", "Name ne 1", false},
		// UTF-16 order: U+E000 sorts after a supplementary character.
		{"supplementary below U+E000 (UTF-16)", "Emoji lt '\uE000'", true},
		{"U+E000 above supplementary (UTF-16)", "Private gt '\U0001F600'", true},
		{"U+E000 not below supplementary", "Private lt '\U0001F600'", false},
		// Binary.
		{"binary eq", "Bin eq X'0A1B'", true},
		{"binary lt bytewise", "Bin lt X'0A1C'", true},
		{"binary shorter prefix is smaller", "Bin gt X'0A'", true},
		{"binary vs string matches nothing", "Bin eq '0A1B'", false},
		// Boolean.
		{"bool eq", "Active eq true", true},
		{"bool ne", "Active ne false", true},
		{"bool gt: false < true", "Active gt false", true},
		{"bool lt: nothing below false", "Active lt false", false},
		{"bool vs Int32 matches nothing", "Active eq 1", false},
		// Int32.
		{"Int32 eq", "Age eq 30", true},
		{"Int32 gt", "Age gt 29", true},
		{"Int32 le", "Age le 29", false},
		{"Int32 vs Int64 literal matches nothing", "Age eq 30L", false},
		{"Int32 ne Int64 literal matches nothing", "Age ne 31L", false},
		{"Int32 vs Double literal matches nothing", "Age eq 30.0", false},
		// Int64.
		{"Int64 eq", "Big eq 5000000000L", true},
		{"Int64 gt", "Big gt 4999999999L", true},
		{"Int64 vs Int32 literal matches nothing", "Big gt 1", false},
		{"Int64 vs Double literal matches nothing", "Big gt 1.0", false},
		// Double.
		{"Double eq", "Score eq 1.5", true},
		{"Double lt", "Score lt 1.6", true},
		{"Double vs Int32 literal matches nothing", "Score gt 1", false},
		{"NaN matches no eq", "NaN eq 1.0", false},
		{"NaN matches no ne", "NaN ne 1.0", false},
		{"NaN matches no lt", "NaN lt 1.0", false},
		// DateTime.
		{"DateTime eq", "When eq datetime'2024-01-01T00:00:00Z'", true},
		{"DateTime eq same instant other offset", "When eq datetime'2024-01-01T02:00:00+02:00'", true},
		{"DateTime gt", "When gt datetime'2023-12-31T23:59:59.9999999Z'", true},
		{"DateTime vs string matches nothing", "When eq '2024-01-01T00:00:00Z'", false},
		// Guid.
		{"Guid eq", "ID eq guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'", true},
		{"Guid ne", "ID ne guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'", false},
		{"Guid ordered by its written digits", "ID lt guid'0a1b2c3e-0000-0000-0000-000000000000'", true},
		{"Guid vs string matches nothing", "ID eq '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'", false},
		// Missing and nil properties.
		{"missing eq", "Missing eq 'x'", false},
		{"missing ne (Azurite #1929)", "Missing ne ''", false},
		{"missing gt (Azurite #2342)", "Missing gt ''", false},
		{"missing lt", "Missing lt 'zzz'", false},
		{"nil counts as missing", "Nil ne 1", false},
		{"not over a missing comparison is true", "not (Missing eq 'x')", true},
		{"not over missing ne is true", "not (Missing ne 'x')", true},
		{"properties are case-sensitive", "name eq 'O''Brien'", false},
		// Logic.
		{"and both", "Age eq 30 and Active eq true", true},
		{"and one false", "Age eq 30 and Active eq false", false},
		{"or one true", "Age eq 31 or Active eq true", true},
		{"or none", "Age eq 31 or Active eq false", false},
		{"not", "not (Age eq 31)", true},
		{"not not", "not not (Age eq 31)", false},
		{"empty filter", "", true},
	}
	e := sample()
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			f, err := Parse(tt.filter)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.filter, err)
			}
			if got := f.Match(e); got != tt.want {
				t.Fatalf("Match(%q) = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
}

func TestMatchUnwrittenTimestamp(t *testing.T) {
	f, err := Parse("Timestamp ne datetime'2024-01-01T00:00:00Z'")
	if err != nil {
		t.Fatal(err)
	}
	if f.Match(&store.Entity{PartitionKey: "a"}) {
		t.Fatal("an entity without a Timestamp matched a comparison on Timestamp")
	}
}

func TestMatchNilProperties(t *testing.T) {
	f, err := Parse("PartitionKey eq 'a' and not (X eq 1)")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(&store.Entity{PartitionKey: "a"}) {
		t.Fatal("an entity with a nil Properties map must still be evaluated")
	}
	if f.Match(&store.Entity{PartitionKey: "b"}) {
		t.Fatal("PartitionKey eq 'a' matched 'b'")
	}
}

func TestEmptyFilters(t *testing.T) {
	var nilF *Filter
	empty, err := Parse("")
	if err != nil {
		t.Fatal(err)
	}
	zero, err := Cond{}.Filter()
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Entity{PartitionKey: "a"}
	for name, f := range map[string]*Filter{"nil": nilF, "Parse(\"\")": empty, "Cond{}": zero} {
		if !f.Match(e) || !f.MatchesAll() || f.String() != "" {
			t.Errorf("%s: want a filter matching everything that prints as \"\"", name)
		}
		p := f.Plan()
		if p.Kind != TableScan || len(p.Ranges) != 1 {
			t.Errorf("%s: Plan() = %v with %d ranges, want one table scan range", name, p.Kind, len(p.Ranges))
		}
		if _, _, ok := p.Ranges[0].Start(); ok || p.Ranges[0].Past("\uffff", "\uffff") {
			t.Errorf("%s: the table scan range must be unbounded", name)
		}
	}
	nonEmpty, _ := Parse("A eq 1")
	if nonEmpty.MatchesAll() {
		t.Error("A eq 1 reports MatchesAll")
	}
}

func TestProperties(t *testing.T) {
	cases := map[string][]string{
		"":                                      nil,
		"PartitionKey eq 'a' and RowKey gt 'b'": nil,
		"Timestamp ge datetime'2024-01-01T00:00:00Z'": nil,
		"B eq 1 or (A eq 'x' and not (B lt 3))":       {"A", "B"},
		"PartitionKey eq 'p' and Zed eq true":         {"Zed"},
	}
	for src, want := range cases {
		f, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Properties(); !slices.Equal(got, want) {
			t.Errorf("Properties(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	if f, err := ParseQuery(store.Query{Filter: "A eq 1", Top: 1000, Select: []string{"A"}}); err != nil || f.Comparisons() != 1 {
		t.Fatalf("ParseQuery of a valid query: %v", err)
	}
	for _, q := range []store.Query{
		{Top: 1001}, {Top: -1}, {Select: []string{"a b"}}, {Filter: "startswith(A, 'x')"},
	} {
		if _, err := ParseQuery(q); !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("ParseQuery(%+v) = %v, want an invalid-input error", q, err)
		}
	}
}
