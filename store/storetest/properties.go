package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// properties proves the property rules: count, names, value limits,
// types, nulls, entity size, and the service-owned Timestamp.
func (s *suite) properties(t *testing.T) {
	s.run(t, "TooMany_TooManyProperties", func(t *testing.T) {
		_, tbl := s.newTable(t)
		e := ent("p", "ok")
		e.Properties = props(store.MaxCustomProperties)
		// Nil values are not stored and do not count.
		for i := range 5 {
			e.Properties[fmt.Sprintf("Nil%d", i)] = nil
		}
		mustInsert(t, tbl, e)
		got := mustGet(t, tbl, "p", "ok")
		if n := len(got.Properties); n != store.MaxCustomProperties {
			t.Errorf("entity read back with %d properties, want %d", n, store.MaxCustomProperties)
		}

		over := ent("p", "over")
		over.Properties = props(store.MaxCustomProperties + 1)
		_, err := tbl.Insert(t.Context(), over)
		wantErr(t, err, store.CodeTooManyProperties, 400, noIndex)
		_, err = tbl.Upsert(t.Context(), over, store.Replace)
		wantErr(t, err, store.CodeTooManyProperties, 400, noIndex)
		// So is a replace of the stored entity with one too many.
		over.RowKey = "ok"
		_, err = tbl.Update(t.Context(), over, store.Replace, store.ETagAny)
		wantErr(t, err, store.CodeTooManyProperties, 400, noIndex)
		wantKeys(t, tbl, key{"p", "ok"})
		if after := mustGet(t, tbl, "p", "ok"); after.ETag != got.ETag {
			t.Errorf("refused update changed the ETag from %s to %s", got.ETag, after.ETag)
		}
	})

	s.run(t, "NameTooLong_PropertyNameTooLong", func(t *testing.T) {
		_, tbl := s.newTable(t)
		name255 := "N" + strings.Repeat("x", store.MaxPropertyNameUnits-1)
		mustInsert(t, tbl, ent("p", "ok", name255, "v"))
		wantProps(t, "255-character name", mustGet(t, tbl, "p", "ok").Properties, map[string]any{name255: "v"})
		_, err := tbl.Insert(t.Context(), ent("p", "over", name255+"x", "v"))
		wantErr(t, err, store.CodePropertyNameTooLong, 400, noIndex)
		_, err = tbl.Update(t.Context(), ent("p", "ok", name255+"x", "v"), store.Merge, store.ETagAny)
		wantErr(t, err, store.CodePropertyNameTooLong, 400, noIndex)
		wantKeys(t, tbl, key{"p", "ok"})
	})

	s.run(t, "NameInvalid_PropertyNameInvalid", func(t *testing.T) {
		_, tbl := s.newTable(t)
		for _, name := range []string{"", "1abc", "a-b", "a b", "a.b", "a$", "a'b", "a/b", "é-x", "a\x00"} {
			_, err := tbl.Insert(t.Context(), ent("p", "r", name, "v"))
			if !wantErr(t, err, store.CodePropertyNameInvalid, 400, noIndex) {
				t.Logf("property name %q", name)
			}
		}
		wantEmpty(t, tbl)
		// C# identifiers pass: a letter or '_' first, then letters, digits, '_'.
		valid := map[string]any{"_": "u", "_x1": "a", "x_1": "b", "Größe": "c", "ÉtéX9": "d"}
		e := ent("p", "r")
		e.Properties = valid
		mustInsert(t, tbl, e)
		wantProps(t, "identifier names", mustGet(t, tbl, "p", "r").Properties, valid)
	})

	s.run(t, "NamesCaseSensitive_DistinctProperties", func(t *testing.T) {
		_, tbl := s.newTable(t)
		want := map[string]any{"Name": "upper", "name": "lower", "NAME": int32(3)}
		e := ent("p", "r")
		e.Properties = want
		mustInsert(t, tbl, e)
		wantProps(t, "case variants", mustGet(t, tbl, "p", "r").Properties, want)
	})

	// Timestamp is not among them: the service accepts a property of that
	// name and ignores it (timestampProperty).
	s.run(t, "ReservedName_PropertyNameInvalid", func(t *testing.T) {
		_, tbl := s.newTable(t)
		for _, name := range []string{"PartitionKey", "RowKey", "ETag", "odata.etag"} {
			_, err := tbl.Insert(t.Context(), ent("p", "r", name, "v"))
			wantErr(t, err, store.CodePropertyNameInvalid, 400, noIndex)
			_, err = tbl.Upsert(t.Context(), ent("p", "r", name, "v"), store.Merge)
			wantErr(t, err, store.CodePropertyNameInvalid, 400, noIndex)
		}
		wantEmpty(t, tbl)
	})

	s.run(t, "StringTooLarge_PropertyValueTooLarge", func(t *testing.T) {
		_, tbl := s.newTable(t)
		for i, sup := range []bool{false, true} {
			rk := fmt.Sprint(i)
			v := units(store.MaxStringUnits, sup)
			mustInsert(t, tbl, ent("p", rk, "S", v))
			got := mustGet(t, tbl, "p", rk)
			if g, _ := got.Properties["S"].(string); g != v {
				t.Errorf("string of %d units came back as %d units", store.UTF16Len(v), store.UTF16Len(g))
			}
			_, err := tbl.Insert(t.Context(), ent("p", "over"+rk, "S", units(store.MaxStringUnits+1, sup)))
			wantErr(t, err, store.CodePropertyValueTooLarge, 400, noIndex)
		}
		// A supplementary character at the end pushes 32,766 units over.
		_, err := tbl.Insert(t.Context(), ent("p", "x", "S", units(store.MaxStringUnits-1, false)+"\U0001F600"))
		wantErr(t, err, store.CodePropertyValueTooLarge, 400, noIndex)
		wantKeys(t, tbl, key{"p", "0"}, key{"p", "1"})
	})

	s.run(t, "BinaryTooLarge_PropertyValueTooLarge", func(t *testing.T) {
		_, tbl := s.newTable(t)
		v := make([]byte, store.MaxBinaryBytes)
		for i := range v {
			v[i] = byte(i * 7)
		}
		mustInsert(t, tbl, ent("p", "ok", "B", v))
		wantProps(t, "64 KiB binary", mustGet(t, tbl, "p", "ok").Properties, map[string]any{"B": v})
		_, err := tbl.Insert(t.Context(), ent("p", "over", "B", append(v, 1)))
		wantErr(t, err, store.CodePropertyValueTooLarge, 400, noIndex)
		_, err = tbl.Update(t.Context(), ent("p", "ok", "B", append(v, 1)), store.Replace, store.ETagAny)
		wantErr(t, err, store.CodePropertyValueTooLarge, 400, noIndex)
		wantKeys(t, tbl, key{"p", "ok"})
	})

	s.run(t, "DateTimeRange_OutOfRangeInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tick := 100 * time.Nanosecond
		for i, v := range []time.Time{store.MinTime, store.MaxTime, store.MinTime.Add(tick), store.MaxTime.Add(-tick)} {
			rk := fmt.Sprint(i)
			mustInsert(t, tbl, ent("p", rk, "T", v))
			wantProps(t, "DateTime "+v.String(), mustGet(t, tbl, "p", rk).Properties, map[string]any{"T": v})
		}
		for _, v := range []time.Time{
			store.MinTime.Add(-tick),
			store.MaxTime.Add(tick),
			time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC),
			time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), // Go's zero time
			time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
			// 1601-01-01 00:30 in UTC+1 is 1600-12-31 23:30 UTC.
			time.Date(1601, 1, 1, 0, 30, 0, 0, time.FixedZone("UTC+1", 3600)),
		} {
			_, err := tbl.Insert(t.Context(), ent("p", "bad", "T", v))
			if !wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex) {
				t.Logf("DateTime %s", v)
			}
		}
		wantKeys(t, tbl, key{"p", "0"}, key{"p", "1"}, key{"p", "2"}, key{"p", "3"})
	})

	s.run(t, "UnsupportedType_InvalidValueType", func(t *testing.T) {
		_, tbl := s.newTable(t)
		type named string
		str := "x"
		for _, v := range []any{
			int(1), int8(1), int16(1), uint8(1), uint32(1), uint64(1), float32(1),
			named("x"), &str, []string{"a"}, map[string]any{}, struct{}{}, time.Second, [16]byte{},
		} {
			_, err := tbl.Insert(t.Context(), ent("p", "r", "V", v))
			if !wantErr(t, err, store.CodeInvalidValueType, 400, noIndex) {
				t.Logf("value of type %T", v)
			}
		}
		wantEmpty(t, tbl)
	})

	s.run(t, "Null_NotStored", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r", "A", "a", "N", nil))
		got := mustGet(t, tbl, "p", "r")
		wantProps(t, "insert with a nil property", got.Properties, map[string]any{"A": "a"})
		// A nil in a merge leaves the stored property alone; in a replace
		// the property is left out, so it goes.
		_, err := tbl.Update(t.Context(), ent("p", "r", "A", nil, "B", "b"), store.Merge, store.ETagAny)
		must(t, err, "merge with a nil property")
		wantProps(t, "after merge", mustGet(t, tbl, "p", "r").Properties, map[string]any{"A": "a", "B": "b"})
		_, err = tbl.Update(t.Context(), ent("p", "r", "A", nil, "C", "c"), store.Replace, store.ETagAny)
		must(t, err, "replace with a nil property")
		wantProps(t, "after replace", mustGet(t, tbl, "p", "r").Properties, map[string]any{"C": "c"})
	})

	s.run(t, "EntityTooLarge_EntityTooLarge", func(t *testing.T) {
		_, tbl := s.newTable(t)
		e := entityOfSize(t, "p", "ok", store.MaxEntitySize)
		mustInsert(t, tbl, e)
		got := mustGet(t, tbl, "p", "ok")
		if n := store.EntitySize(&got); n != store.MaxEntitySize {
			t.Errorf("entity read back is %d bytes by the formula, want %d", n, store.MaxEntitySize)
		}
		over := entityOfSize(t, "p", "over", store.MaxEntitySize+1)
		_, err := tbl.Insert(t.Context(), over)
		wantErr(t, err, store.CodeEntityTooLarge, 400, noIndex)
		_, err = tbl.Upsert(t.Context(), over, store.Replace)
		wantErr(t, err, store.CodeEntityTooLarge, 400, noIndex)
		_, err = tbl.Update(t.Context(), entityOfSize(t, "p", "ok", store.MaxEntitySize+1), store.Replace, store.ETagAny)
		wantErr(t, err, store.CodeEntityTooLarge, 400, noIndex)
		wantKeys(t, tbl, key{"p", "ok"})
		if after := mustGet(t, tbl, "p", "ok"); after.ETag != got.ETag {
			t.Errorf("refused update changed the ETag from %s to %s", got.ETag, after.ETag)
		}
	})

	s.timestampProperty(t)

	s.run(t, "Timestamp_SetByService", func(t *testing.T) {
		_, tbl := s.newTable(t)
		fake := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
		e := ent("p", "r", "A", int32(1))
		e.Timestamp = fake
		before := time.Now().Add(-time.Hour)
		mustInsert(t, tbl, e)
		first := mustGet(t, tbl, "p", "r")
		if first.Timestamp.Equal(fake) || first.Timestamp.Before(before) {
			t.Errorf("Timestamp after insert = %s: the client's %s was not ignored", first.Timestamp, fake)
		}
		if first.Timestamp.Location() != time.UTC {
			t.Errorf("Timestamp %s is not in UTC", first.Timestamp)
		}
		if _, ok := first.Properties["Timestamp"]; ok {
			t.Errorf("Timestamp came back as a custom property")
		}
		prev := first.Timestamp
		for i, write := range []func() error{
			func() error { _, err := tbl.Update(t.Context(), e, store.Merge, store.ETagAny); return err },
			func() error { _, err := tbl.Update(t.Context(), e, store.Replace, store.ETagAny); return err },
			func() error { _, err := tbl.Upsert(t.Context(), e, store.Merge); return err },
		} {
			must(t, write(), fmt.Sprintf("write %d", i))
			got := mustGet(t, tbl, "p", "r")
			if got.Timestamp.Before(prev) || got.Timestamp.Equal(fake) {
				t.Errorf("write %d: Timestamp went from %s to %s", i, prev, got.Timestamp)
			}
			prev = got.Timestamp
		}
	})
}

// entityOfSize builds an entity of exactly size bytes by the service's
// formula (store.EntitySize), with binary properties.
func entityOfSize(t testing.TB, pk, rk string, size int) store.Entity {
	t.Helper()
	e := ent(pk, rk)
	const overhead = 8 + 2*4 + 4 // 8 + 2*len("B000") + the binary's 4
	left := size - store.EntitySize(&e)
	for i := 0; left > 0; i++ {
		n := min(store.MaxBinaryBytes, left-overhead)
		if n < 0 {
			t.Fatalf("test bug: cannot make an entity of exactly %d bytes", size)
		}
		e.Properties[fmt.Sprintf("B%03d", i)] = make([]byte, n)
		left -= overhead + n
	}
	if got := store.EntitySize(&e); got != size {
		t.Fatalf("test bug: entity is %d bytes, want %d", got, size)
	}
	return e
}
