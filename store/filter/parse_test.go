package filter

import (
	"strings"
	"testing"
)

func TestParseGrammar(t *testing.T) {
	tests := []struct {
		rule, in, want string
	}{
		{"empty filter matches all", "", "(all)"},
		{"blank filter matches all", "   ", "(all)"},
		{"string literal", "PartitionKey eq 'Sales'", `(eq PartitionKey String:"Sales")`},
		{"doubled quote escapes a quote", "Name eq 'O''Brien'", `(eq Name String:"O'Brien")`},
		{"only a doubled quote", "Name eq ''''", `(eq Name String:"'")`},
		{"empty string", "Name eq ''", `(eq Name String:"")`},
		{"keywords inside a string are text", "Name eq ' or 1 eq 1) or ('", `(eq Name String:" or 1 eq 1) or (")`},
		{"non-ASCII string", "Name eq 'café 😀'", `(eq Name String:"café 😀")`},
		{"operator ne", "A ne 1", "(ne A Int32:1)"},
		{"operator gt", "A gt 1", "(gt A Int32:1)"},
		{"operator ge", "A ge 1", "(ge A Int32:1)"},
		{"operator lt", "A lt 1", "(lt A Int32:1)"},
		{"operator le", "A le 1", "(le A Int32:1)"},
		{"Int32 negative", "A eq -7", "(eq A Int32:-7)"},
		{"Int32 max", "A eq 2147483647", "(eq A Int32:2147483647)"},
		{"Int32 min", "A eq -2147483648", "(eq A Int32:-2147483648)"},
		{"Int64 L suffix", "A eq 42L", "(eq A Int64:42)"},
		{"Int64 lower-case l", "A eq 42l", "(eq A Int64:42)"},
		{"Int64 beyond Int32", "A eq 3000000000L", "(eq A Int64:3000000000)"},
		{"Int64 min", "A eq -9223372036854775808L", "(eq A Int64:-9223372036854775808)"},
		{"Double with point", "A eq 1.5", "(eq A Double:1.5)"},
		{"Double with exponent", "A eq 1e10", "(eq A Double:1e+10)"},
		{"Double with signed exponent", "A eq 2.5E-3", "(eq A Double:0.0025)"},
		{"Double 2.0", "A eq 2.0", "(eq A Double:2)"},
		{"Double D suffix", "A eq 2D", "(eq A Double:2)"},
		{"Double negative", "A lt -0.5", "(lt A Double:-0.5)"},
		{"true", "A eq true", "(eq A Boolean:true)"},
		{"false", "A ne false", "(ne A Boolean:false)"},
		{"datetime Z", "Timestamp ge datetime'2024-01-01T00:00:00Z'", "(ge Timestamp DateTime:2024-01-01T00:00:00Z)"},
		{"datetime 7 fraction digits", "T eq datetime'2024-01-01T10:20:30.1234567Z'", "(eq T DateTime:2024-01-01T10:20:30.1234567Z)"},
		{"datetime 1 fraction digit", "T eq datetime'2024-01-01T10:20:30.5Z'", "(eq T DateTime:2024-01-01T10:20:30.5Z)"},
		{"datetime without zone is UTC", "T eq datetime'2024-01-01T10:20:30'", "(eq T DateTime:2024-01-01T10:20:30Z)"},
		{"datetime without seconds", "T eq datetime'2024-01-01T10:20Z'", "(eq T DateTime:2024-01-01T10:20:00Z)"},
		{"datetime offset to UTC", "T eq datetime'2024-01-01T10:20:30+02:00'", "(eq T DateTime:2024-01-01T08:20:30Z)"},
		{"guid any case", "G eq guid'0A1B2C3D-4e5f-6071-8293-A4B5C6D7E8F9'", "(eq G Guid:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)"},
		{"binary X", "B eq X'0A1b'", "(eq B Binary:0a1b)"},
		{"binary keyword", "B eq binary'FF00'", "(eq B Binary:ff00)"},
		{"empty binary", "B eq X''", "(eq B Binary:)"},
		{"and", "A eq 1 and B eq 2", "(and (eq A Int32:1) (eq B Int32:2))"},
		{"or", "A eq 1 or B eq 2", "(or (eq A Int32:1) (eq B Int32:2))"},
		{"and binds tighter than or", "A eq 1 or B eq 2 and C eq 3", "(or (eq A Int32:1) (and (eq B Int32:2) (eq C Int32:3)))"},
		{"parentheses override", "(A eq 1 or B eq 2) and C eq 3", "(and (or (eq A Int32:1) (eq B Int32:2)) (eq C Int32:3))"},
		{"and chains flatten", "A eq 1 and (B eq 2 and C eq 3)", "(and (eq A Int32:1) (eq B Int32:2) (eq C Int32:3))"},
		{"or chains flatten", "(A eq 1 or B eq 2) or C eq 3", "(or (eq A Int32:1) (eq B Int32:2) (eq C Int32:3))"},
		{"not", "not (A eq 1)", "(not (eq A Int32:1))"},
		{"not not", "not not (A eq 1)", "(not (not (eq A Int32:1)))"},
		{"not over and", "not (A eq 1 and B eq 2) or C eq 3", "(or (not (and (eq A Int32:1) (eq B Int32:2))) (eq C Int32:3))"},
		{"redundant parentheses", "((A eq 1))", "(eq A Int32:1)"},
		{"tabs and no spaces around parentheses", "(A\teq\t1)and(B eq 2)", "(and (eq A Int32:1) (eq B Int32:2))"},
		{"underscore and digits in names", "_a1 eq 1", "(eq _a1 Int32:1)"},
		{"non-ASCII letters in names", "Größe eq 1", "(eq Größe Int32:1)"},
		{"keys and Timestamp", "PartitionKey eq 'a' and RowKey gt 'b' and Timestamp lt datetime'2030-01-01T00:00:00Z'",
			`(and (eq PartitionKey String:"a") (gt RowKey String:"b") (lt Timestamp DateTime:2030-01-01T00:00:00Z))`},
		{"fifteen comparisons", strings.Repeat("A eq 1 and ", 14) + "A eq 1", "(and" + strings.Repeat(" (eq A Int32:1)", 15) + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			f, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := sexpr(f.root); got != tt.want {
				t.Fatalf("Parse(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			// The printed form parses back to the same tree.
			g, err := Parse(f.String())
			if err != nil {
				t.Fatalf("Parse(String()=%q): %v", f.String(), err)
			}
			if !sameTree(f.root, g.root) {
				t.Fatalf("round trip changed the tree: %s -> %q -> %s", sexpr(f.root), f.String(), sexpr(g.root))
			}
		})
	}
}

func TestParseRefusals(t *testing.T) {
	tests := []struct {
		rule, in string
		offset   string // "at offset N"
		token    string // the offending token, as quoted in the message
		reason   string
	}{
		{"function startswith", "startswith(Name, 'a')", "0", `"startswith("`, "function calls"},
		{"function substringof", "substringof('a', Name) eq true", "0", `"substringof("`, "function calls"},
		{"function after and", "A eq 1 and endswith(Name,'x')", "11", `"endswith("`, "function calls"},
		{"double-quoted string", `Name eq "a"`, "8", `"\"a\""`, "double-quoted"},
		{"arithmetic add", "A add 1 eq 2", "2", `"add"`, "arithmetic"},
		{"arithmetic after literal", "A eq 1 add 2", "7", `"add"`, "arithmetic"},
		{"arithmetic symbol", "A eq 1 + 2", "7", `"+"`, "arithmetic"},
		{"negation of a property", "A eq -B", "5", `"-B"`, "arithmetic"},
		{"symbolic operator", "A == 1", "2", `"=="`, "symbolic"},
		{"upper-case operator", "A EQ 1", "2", `"EQ"`, "lower case"},
		{"upper-case and", "A eq 1 AND B eq 2", "7", `"AND"`, "lower case"},
		{"upper-case literal prefix", "T eq DATETIME'2024-01-01T00:00:00Z'", "5", `"DATETIME'2024-01-01T00:00:00Z'"`, "unknown literal prefix"},
		{"upper-case true", "A eq TRUE", "5", `"TRUE"`, "comparing property A with property TRUE"},
		{"two properties", "PartitionKey eq RowKey", "16", `"RowKey"`, "one side must be a literal"},
		{"two literals", "'a' eq 'a'", "0", `"'a'"`, "starts with a property"},
		{"literal on the left", "1 lt A", "0", `"1"`, "starts with a property"},
		{"null", "A eq null", "5", `"null"`, "null is not supported"},
		{"bare property", "IsActive", "8", `"end of filter"`, "comparison operator"},
		{"bare property in and", "IsActive and A eq 1", "9", `"and"`, "comparison operator"},
		{"missing literal", "A eq", "4", `"end of filter"`, "expected a literal"},
		{"missing operand of and", "A eq 1 and", "10", `"end of filter"`, "expected a comparison"},
		{"trailing or", "A eq 1 or ", "10", `"end of filter"`, "expected a comparison"},
		{"two comparisons without and", "A eq 1 B eq 2", "7", `"B"`, "expected and, or"},
		{"chained comparison", "A eq 1 eq 2", "7", `"eq"`, "expected and, or"},
		{"unclosed parenthesis", "(A eq 1", "7", `"end of filter"`, "')'"},
		{"extra closing parenthesis", "A eq 1)", "6", `")"`, "expected and, or"},
		{"empty parentheses", "()", "1", `")"`, "empty parentheses"},
		{"not without parentheses", "not A eq 1", "0", `"not A"`, "parenthesized"},
		{"keyword as property", "and eq 1", "0", `"and"`, "property name"},
		{"unterminated string", "A eq 'abc", "5", `"'abc"`, "unterminated"},
		{"unterminated escaped string", "A eq 'it''s", "5", `"'it''s"`, "unterminated"},
		{"Int32 overflow", "A eq 2147483648", "5", `"2147483648"`, "does not fit Int32"},
		{"Int32 underflow", "A eq -2147483649", "5", `"-2147483649"`, "does not fit Int32"},
		{"Int64 overflow", "A eq 9223372036854775808L", "5", `"9223372036854775808L"`, "does not fit Int64"},
		{"Int64 with point", "A eq 1.5L", "5", `"1.5L"`, "Int64"},
		{"decimal", "A eq 1.5M", "5", `"1.5M"`, "decimal"},
		{"single", "A eq 1.5f", "5", `"1.5f"`, "single"},
		{"point without digits", "A eq 1.", "5", `"1."`, "decimal point"},
		{"leading point", "A eq .5", "5", `"."`, "unexpected character"},
		{"exponent without digits", "A eq 1e", "5", `"1e"`, "exponent"},
		{"double overflow", "A eq 1e400", "5", `"1e400"`, "out of range"},
		{"letters after a number", "A eq 12abc", "5", `"12abc"`, "malformed number"},
		{"datetime malformed", "T eq datetime'2024-13-01T00:00:00Z'", "5", `"datetime'2024-13-01T00:00:00Z'"`, "malformed datetime"},
		{"datetime 8 fraction digits", "T eq datetime'2024-01-01T00:00:00.12345678Z'", "5", "datetime'", "at most 7"},
		{"datetime February 30", "T eq datetime'2024-02-30T00:00:00Z'", "5", "datetime'", "malformed datetime"},
		{"datetime offset before year 1", "T eq datetime'0001-01-01T00:00:00+01:00'", "5", "datetime'", "malformed datetime"},
		{"datetime offset after year 9999", "T eq datetime'9999-12-31T23:00:00-02:00'", "5", "datetime'", "malformed datetime"},
		{"datetime date only", "T eq datetime'2024-02-03'", "5", "datetime'", "malformed datetime"},
		{"guid malformed", "G eq guid'1234'", "5", `"guid'1234'"`, "malformed guid"},
		{"guid without quotes", "G eq 0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9", "5", `"0a1b2c3d`, "malformed number"},
		{"binary odd digits", "B eq X'ABC'", "5", `"X'ABC'"`, "odd number"},
		{"binary not hex", "B eq X'GG'", "5", `"X'GG'"`, "hex digits"},
		{"lower-case x prefix", "B eq x'00'", "5", `"x'00'"`, "unknown literal prefix"},
		{"unknown prefix", "T eq datetimeoffset'2024-01-01T00:00:00Z'", "5", `"datetimeoffset'`, "unknown literal prefix"},
		{"blank after a literal prefix", "T eq datetime '2024-01-01T00:00:00Z'", "5", `"datetime '"`, "no blank"},
		{"newline is not a blank", "A eq 1\nor B eq 2", "6", `"\n"`, "unexpected character"},
		{"unexpected character", "A eq 1 ; B eq 2", "7", `";"`, "unexpected character"},
		{"sixteen comparisons", strings.Repeat("A eq 1 and ", 15) + "Z eq 1", "165", `"Z"`, "more than 15 comparisons"},
		{"sixteen comparisons in ors", strings.Repeat("A eq 1 or ", 15) + "Z eq 1", "150", `"Z"`, "more than 15 comparisons"},
		{"deep nesting", strings.Repeat("(", 65) + "A eq 1" + strings.Repeat(")", 65), "64", `"("`, "nests more than 64"},
		{"deep not nesting", strings.Repeat("not ", 65) + "(A eq 1)", "256", `"not"`, "nests more than 64"},
		{"invalid UTF-8 outside strings", "A eq 1 and \xff", "11", `"\xff"`, "not valid UTF-8"},
		{"invalid UTF-8 in a string", "A eq '\xff'", "5", `"'\xff'"`, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			f, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tt.in, sexpr(f.root))
			}
			wantInvalid(t, err, "at offset "+tt.offset+" ", tt.token, tt.reason)
		})
	}
}

func TestComparisonsCount(t *testing.T) {
	f, err := Parse("(A eq 1 or B eq 2) and not (C eq 3)")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Comparisons(); got != 3 {
		t.Fatalf("Comparisons() = %d, want 3", got)
	}
	var nilF *Filter
	if nilF.Comparisons() != 0 || !nilF.MatchesAll() || nilF.String() != "" {
		t.Fatal("a nil *Filter must be the empty filter")
	}
}
