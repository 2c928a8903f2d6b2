package storetest

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// filters proves the service's $filter semantics: typed comparisons,
// missing properties, ordinal string order, every literal form.
func (s *suite) filters(t *testing.T) {
	guid, err := store.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	must(t, err, "ParseGUID")
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := []store.Entity{
		ent("p", "r1", "I32", int32(5), "I64", int64(5), "D", 5.0, "S", "5", "Bool", true,
			"T", day, "G", guid, "B", []byte{0x0A, 0x1B}, "Str", "apple"),
		ent("p", "r2", "I32", int32(7), "I64", int64(1)<<40, "D", 7.5, "S", "Banana", "Bool", false,
			"T", day.Add(time.Hour), "Str", "O'Brien"),
		ent("p", "r3", "Str", "banana"),
		ent("p", "r4", "I32", int32(-1), "Str", ""),
		ent("q", "r1", "Str", "é", "I32", int32(5)),
	}
	cases := []struct {
		name, filter string
		want         []key
	}{
		{"Int32_Equal", "I32 eq 5", []key{{"p", "r1"}, {"q", "r1"}}},
		{"Int32VersusInt64Literal_NoMatch", "I32 eq 5L", nil},
		{"Int64_Equal", "I64 eq 5L", []key{{"p", "r1"}}},
		{"Int64VersusInt32Literal_NoMatch", "I64 eq 5", nil},
		{"Int64_Range", "I64 gt 1000000L", []key{{"p", "r2"}}},
		{"StringVersusNumber_NoMatch", "S eq 5", nil},
		{"NumberVersusString_NoMatch", "I32 eq '5'", nil},
		{"String_Equal", "S eq '5'", []key{{"p", "r1"}}},
		{"Double_Compare", "D lt 6.0 or D ge 7.5", []key{{"p", "r1"}, {"p", "r2"}}},
		{"Boolean_Equal", "Bool eq false", []key{{"p", "r2"}}},
		{"DateTime_Literal", "T eq datetime'2024-01-01T00:00:00Z'", []key{{"p", "r1"}}},
		{"DateTime_Range", "T gt datetime'2024-01-01T00:30:00.0000000Z'", []key{{"p", "r2"}}},
		{"Guid_Literal", "G eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'", []key{{"p", "r1"}}},
		{"Binary_XLiteral", "B eq X'0A1B'", []key{{"p", "r1"}}},
		{"Binary_BinaryLiteral", "B eq binary'0a1b'", []key{{"p", "r1"}}},
		{"MissingProperty_NeverMatches", "Nope eq 'x' or Nope ne 'x' or Nope lt 'x' or Nope gt 'x'", nil},
		{"MissingProperty_NeSkipsEntity", "I32 ne 5", []key{{"p", "r2"}, {"p", "r4"}}},
		{"MissingProperty_NeEmptyString", "S ne ''", []key{{"p", "r1"}, {"p", "r2"}}},
		{"MissingProperty_NeBoolean", "Bool ne true", []key{{"p", "r2"}}},
		{"String_OrdinalOrder", "Str ge 'a'", []key{{"p", "r1"}, {"p", "r3"}, {"q", "r1"}}},
		{"String_UpperBeforeLower", "Str lt 'a' and Str gt ''", []key{{"p", "r2"}}},
		{"String_EscapedQuote", "Str eq 'O''Brien'", []key{{"p", "r2"}}},
		{"String_Empty", "Str eq ''", []key{{"p", "r4"}}},
		{"Logic_AndOrParentheses", "(I32 eq 5 or I32 eq 7) and Bool eq false", []key{{"p", "r2"}}},
		{"Logic_Not", "not (I32 eq 5) and I32 ge -1", []key{{"p", "r2"}, {"p", "r4"}}},
		// not is plain negation (docs/filter.md): it matches the entities
		// its operand does not, those lacking the property or holding
		// another type included.
		{"Logic_NotMatchesMissingProperty", "not (I32 eq 5)", []key{{"p", "r2"}, {"p", "r3"}, {"p", "r4"}}},
		{"Logic_NotOfOtherTypeMatchesAll", "not (I32 ne 5.0)", []key{{"p", "r1"}, {"p", "r2"}, {"p", "r3"}, {"p", "r4"}, {"q", "r1"}}},
		{"Binary_OrderedBytewise", "B lt X'FF' and B gt X'00'", []key{{"p", "r1"}}},
		{"Double_PlainAndExponent", "D eq 7.5 or D eq 5e0 or D eq 0.75E1D", []key{{"p", "r1"}, {"p", "r2"}}},
		{"Logic_Precedence", "I32 eq 7 or I32 eq 5 and PartitionKey eq 'q'", []key{{"p", "r2"}, {"q", "r1"}}},
		{"Keys_PointQuery", "PartitionKey eq 'q' and RowKey eq 'r1'", []key{{"q", "r1"}}},
		{"Keys_RowRange", "PartitionKey eq 'p' and RowKey ge 'r2' and RowKey lt 'r4'", []key{{"p", "r2"}, {"p", "r3"}}},
		{"Keys_PartitionRange", "PartitionKey gt 'p'", []key{{"q", "r1"}}},
		{"Keys_TableScan", "RowKey eq 'r1'", []key{{"p", "r1"}, {"q", "r1"}}},
		{"Keys_UnicodeLiteral", "Str eq 'é'", []key{{"q", "r1"}}},
	}
	s.run(t, "Semantics", func(t *testing.T) {
		_, tbl := s.newTable(t)
		_, err := tbl.Transact(t.Context(), []store.Action{
			{Kind: store.ActionInsert, Entity: rows[0]}, {Kind: store.ActionInsert, Entity: rows[1]},
			{Kind: store.ActionInsert, Entity: rows[2]}, {Kind: store.ActionInsert, Entity: rows[3]},
		})
		must(t, err, "insert rows")
		mustInsert(t, tbl, rows[4])
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, _ := scanAll(t, tbl, store.Query{Filter: c.filter}, store.MaxPageSize)
				if !equalKeys(keysOf(got), c.want) {
					t.Errorf("$filter=%s returned %v, want %v", c.filter, keysOf(got), c.want)
				}
			})
		}
	})
}
