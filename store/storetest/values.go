package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// values proves that every property type survives a write and a read (and
// a query) with the same Go type and value.
func (s *suite) values(t *testing.T) {
	guid, err := store.ParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	must(t, err, "ParseGUID")

	cases := []struct {
		name  string
		props map[string]any
	}{
		{"String", map[string]any{
			"Empty": "", "ASCII": "hello", "Unicode": "héllo 世界 ключ",
			"Supplementary": "\U0001F600\U0001D11E", "Quotes": `it's "quoted" \ back`,
			"Whitespace": " lead\ttab\nline\r\n trail ", "Control": "\x01\x7f", "Keyword": "null",
		}},
		{"Binary", map[string]any{
			"Empty": []byte{}, "Bytes": []byte{0, 1, 2, 0xFE, 0xFF}, "Text": []byte("plain"),
		}},
		{"Boolean", map[string]any{"True": true, "False": false}},
		{"Int32", map[string]any{
			"Min": int32(math.MinInt32), "Max": int32(math.MaxInt32), "Zero": int32(0), "Minus": int32(-1),
		}},
		{"Int64", map[string]any{
			"Min": int64(math.MinInt64), "Max": int64(math.MaxInt64), "Zero": int64(0),
			"BeyondDouble": int64(1<<53 + 1), "Small": int64(5),
		}},
		{"Double", map[string]any{
			"Zero": 0.0, "Whole": 5.0, "Fraction": 1.5, "Third": 1.0 / 3, "Max": math.MaxFloat64,
			"SmallestNormal": 2.2250738585072014e-308, "Subnormal": 5e-324, "Negative": -123.456e10,
		}},
		{"DoubleSpecial", map[string]any{
			"NaN": math.NaN(), "PlusInf": math.Inf(1), "MinusInf": math.Inf(-1),
		}},
		{"DateTime", map[string]any{
			"Ticks":  time.Date(2024, 2, 29, 23, 59, 59, 123456700, time.UTC),
			"Second": time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
			"Min":    store.MinTime, "Max": store.MaxTime,
			"Epoch": time.Unix(0, 0).UTC(),
		}},
		{"Guid", map[string]any{"G": guid, "Zero": store.GUID{}}},
	}
	for _, c := range cases {
		s.run(t, c.name+"_RoundTrip", func(t *testing.T) {
			_, tbl := s.newTable(t)
			e := ent("p", "r")
			e.Properties = c.props
			mustInsert(t, tbl, e)
			wantProps(t, "Get", mustGet(t, tbl, "p", "r").Properties, c.props)
			all, _ := scanAll(t, tbl, store.Query{}, store.MaxPageSize)
			if len(all) != 1 {
				t.Fatalf("query returned %d entities, want 1", len(all))
			}
			wantProps(t, "Query", all[0].Properties, c.props)
		})
	}

	s.run(t, "DoubleNegativeZero_ReadsAsZero", func(t *testing.T) {
		// A negative zero reads back as 0 on every backend
		// (store.NormalizeDouble): Azurite cannot keep the sign.
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r", "Z", math.Copysign(0, -1)))
		want := map[string]any{"Z": 0.0}
		wantProps(t, "Get", mustGet(t, tbl, "p", "r").Properties, want)
		all, _ := scanAll(t, tbl, store.Query{Filter: "Z eq 0.0"}, store.MaxPageSize)
		if len(all) != 1 {
			t.Fatalf("query Z eq 0.0 returned %d entities, want 1", len(all))
		}
		wantProps(t, "Query", all[0].Properties, want)
	})

	s.run(t, "DateTime_UTCAt100ns", func(t *testing.T) {
		_, tbl := s.newTable(t)
		zone := time.FixedZone("UTC-7", -7*3600)
		local := time.Date(2024, 6, 1, 5, 0, 0, 123456789, zone)
		mustInsert(t, tbl, ent("p", "r", "Local", local))
		got := mustGet(t, tbl, "p", "r").Properties["Local"]
		want := time.Date(2024, 6, 1, 12, 0, 0, 123456700, time.UTC)
		if !sameValue(got, want) {
			t.Errorf("DateTime %s came back as %s, want %s (UTC, truncated to 100 ns)", local, show(got), want)
		}
	})

	s.run(t, "AllTypesInOneEntity_RoundTrip", func(t *testing.T) {
		_, tbl := s.newTable(t)
		want := map[string]any{
			"S": "s", "B": []byte{1}, "Bool": true, "I32": int32(-7), "I64": int64(-7),
			"D": -7.5, "T": time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC).Truncate(100), "G": guid,
		}
		e := ent("p", "r")
		e.Properties = want
		mustInsert(t, tbl, e)
		wantProps(t, "Get", mustGet(t, tbl, "p", "r").Properties, want)
		// Every type survives a replace and a merge as well.
		_, err := tbl.Update(t.Context(), e, store.Replace, store.ETagAny)
		must(t, err, "replace")
		_, err = tbl.Update(t.Context(), e, store.Merge, store.ETagAny)
		must(t, err, "merge")
		wantProps(t, "after replace and merge", mustGet(t, tbl, "p", "r").Properties, want)
	})

	s.run(t, "WriteDoesNotAlias_CallerData", func(t *testing.T) {
		_, tbl := s.newTable(t)
		b := []byte{1, 2, 3}
		e := ent("p", "r", "B", b)
		mustInsert(t, tbl, e)
		b[0] = 9
		e.Properties["New"] = "after"
		got := mustGet(t, tbl, "p", "r")
		wantProps(t, "after the caller changed its data", got.Properties, map[string]any{"B": []byte{1, 2, 3}})
		got.Properties["B"].([]byte)[1] = 9
		wantProps(t, "after changing a read", mustGet(t, tbl, "p", "r").Properties, map[string]any{"B": []byte{1, 2, 3}})
	})
}
