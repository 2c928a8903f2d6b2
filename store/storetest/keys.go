package storetest

import (
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// keys proves the key rules: length in UTF-16 units, forbidden and
// control characters, the empty key, ordinal order.
func (s *suite) keys(t *testing.T) {
	s.run(t, "EmptyKey_Valid", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("", "", "A", "both empty"))
		mustInsert(t, tbl, ent("", "r", "A", "empty pk"))
		mustInsert(t, tbl, ent("p", "", "A", "empty rk"))
		got := mustGet(t, tbl, "", "")
		wantProps(t, "Get(\"\", \"\")", got.Properties, map[string]any{"A": "both empty"})
		wantKeys(t, tbl, key{"", ""}, key{"", "r"}, key{"p", ""})
		must(t, tbl.Delete(t.Context(), "", "", store.ETagAny), "Delete(\"\", \"\")")
		wantKeys(t, tbl, key{"", "r"}, key{"p", ""})
	})

	s.run(t, "TooLong_KeyValueTooLarge", func(t *testing.T) {
		_, tbl := s.newTable(t)
		// Exactly the limit passes, in ASCII and with supplementary
		// characters counting two units each.
		var ok []key
		longest := store.MaxKeyUnits
		if n := s.h.ServerKeyUnits; n > 0 && n < longest {
			longest = n
			// A server stricter than the service (Azurite) refuses the
			// keys between its edge and the service's with InvalidInput.
			for _, k := range []string{units(n+1, false), units(store.MaxKeyUnits, false)} {
				_, err := tbl.Insert(t.Context(), ent("p", k))
				wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
			}
		}
		for i, k := range []string{units(longest, false), units(longest, true)} {
			pk := fmt.Sprintf("p%d", i)
			mustInsert(t, tbl, ent(pk, k, "Which", "RowKey"))
			mustInsert(t, tbl, ent(k, pk, "Which", "PartitionKey"))
			got := mustGet(t, tbl, k, pk)
			if got.PartitionKey != k {
				t.Errorf("PartitionKey of %d units came back as %d units", store.UTF16Len(k), store.UTF16Len(got.PartitionKey))
			}
			ok = append(ok, key{pk, k}, key{k, pk})
		}
		// One unit over fails, however the units are made up.
		for _, k := range []string{
			units(store.MaxKeyUnits+1, false),
			units(store.MaxKeyUnits+1, true),                 // 512 supplementary + 'a'
			units(store.MaxKeyUnits-1, false) + "\U0001F600", // 1023 + 2
			"a" + units(store.MaxKeyUnits, true),             // 1 + 1024
		} {
			if n := store.UTF16Len(k); n <= store.MaxKeyUnits {
				t.Fatalf("test bug: key of %d units is not over the limit", n)
			}
			_, err := tbl.Insert(t.Context(), ent("p", k))
			wantErr(t, err, store.CodeKeyValueTooLarge, 400, noIndex)
			_, err = tbl.Insert(t.Context(), ent(k, "r"))
			wantErr(t, err, store.CodeKeyValueTooLarge, 400, noIndex)
			_, err = tbl.Upsert(t.Context(), ent("p", k), store.Merge)
			wantErr(t, err, store.CodeKeyValueTooLarge, 400, noIndex)
		}
		all, _ := scanAll(t, tbl, store.Query{}, store.MaxPageSize)
		if len(all) != len(ok) {
			t.Errorf("table holds %d entities after the refused writes, want %d", len(all), len(ok))
		}
	})

	s.run(t, "ForbiddenCharacter_OutOfRangeInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		for _, c := range []string{"/", `\`, "#", "?"} {
			for _, e := range []store.Entity{ent("a"+c+"b", "r"), ent("p", c), ent("p", "x"+c)} {
				_, err := tbl.Insert(t.Context(), e)
				wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex)
				_, err = tbl.Upsert(t.Context(), e, store.Replace)
				wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex)
			}
		}
		wantEmpty(t, tbl)
	})

	s.run(t, "ForbiddenCharacterInBatch_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		for _, c := range []string{"/", `\`, "#", "?", "\n"} {
			_, err := tbl.Transact(t.Context(), []store.Action{
				{Kind: store.ActionInsert, Entity: ent("p", "ok")},
				{Kind: store.ActionInsert, Entity: ent("p", "bad"+c)},
			})
			wantErr(t, err, store.CodeInvalidInput, 400, 1)
		}
		wantEmpty(t, tbl)
	})

	s.run(t, "ControlCharacter_OutOfRangeInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		for _, c := range []rune{0x00, 0x01, '\t', '\n', '\r', 0x1F, 0x7F, 0x80, 0x9F} {
			for _, e := range []store.Entity{ent(string(c), "r"), ent("p", "a"+string(c))} {
				_, err := tbl.Insert(t.Context(), e)
				if !wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex) {
					t.Logf("key with U+%04X", c)
				}
			}
		}
		wantEmpty(t, tbl)
		// The neighbours of the control ranges are allowed.
		for i, c := range []rune{' ', '~', 0xA0, 0xFF} {
			mustInsert(t, tbl, ent("p"+string(c), fmt.Sprint(i)))
		}
	})

	s.run(t, "Order_OrdinalPartitionKeyFirst", func(t *testing.T) {
		_, tbl := s.newTable(t)
		// Written out of order; expected in ordinal (UTF-16 code unit)
		// order: upper case before lower case, U+00E9 after ASCII, a
		// supplementary character (surrogates D800-DFFF) before U+FFFD.
		want := []key{
			{"", "z"}, {"A", "b"}, {"B", "a"}, {"a", ""}, {"a", "B"}, {"a", "a"}, {"a", "a0"},
			{"a", "b"}, {"a0", "a"}, {"b", "a"}, {"é", "a"}, {"中", "a"}, {"\U0001F600", "a"}, {"\uFFFD", "a"},
		}
		order := []int{7, 3, 12, 0, 9, 1, 13, 5, 10, 2, 8, 4, 11, 6}
		for _, i := range order {
			mustInsert(t, tbl, ent(want[i].pk, want[i].rk))
		}
		wantKeys(t, tbl, want...)
	})

	s.run(t, "UnicodeKeys_RoundTrip", func(t *testing.T) {
		_, tbl := s.newTable(t)
		pk, rk := "ключ 鍵 'quote' \"dq\" %25 +", "\U0001F600\U0001D11E é"
		mustInsert(t, tbl, ent(pk, rk, "A", int32(1)))
		got := mustGet(t, tbl, pk, rk)
		if got.PartitionKey != pk || got.RowKey != rk {
			t.Errorf("Get returned keys (%q, %q), want (%q, %q)", got.PartitionKey, got.RowKey, pk, rk)
		}
		wantKeys(t, tbl, key{pk, rk})
		must(t, tbl.Delete(t.Context(), pk, rk, got.ETag), "Delete")
		wantEmpty(t, tbl)
	})
}
