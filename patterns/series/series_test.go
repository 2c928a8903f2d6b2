package series

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

func TestHourlyCountersLiveInOneEntity(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ft := &faultTable{Table: freshTable(t, b)}
		s := newSeries(t, ft.wrap(), "emp000123", "20261122", Layout{Slots: 24})
		want := make([]int64, 24)
		writes := 0
		for _, h := range []int{9, 9, 14, 23, 0, 9} {
			n, err := s.Add(t.Context(), h, 1)
			if err != nil {
				t.Fatal(err)
			}
			want[h]++
			writes++
			if n != want[h] {
				t.Fatalf("Add(%d) = %d, want %d", h, n, want[h])
			}
		}
		if _, err := s.Add(t.Context(), 14, 41); err != nil {
			t.Fatal(err)
		}
		want[14] += 41
		writes++
		queries := ft.n("query")
		sn := mustRead(t, s)
		if ft.n("query")-queries != 1 || ft.n("get") != 0 {
			t.Fatalf("a read took %d queries and %d gets, want one query", ft.n("query")-queries, ft.n("get"))
		}
		got, err := sn.Int64s()
		if err != nil || !slices.Equal(got, want) || sn.Segments != 1 || sn.Version != int64(writes) {
			t.Fatalf("read %v (segments %d, version %d), want %v in 1 entity at version %d", got, sn.Segments, sn.Version, want, writes)
		}
		// One entity, one property per written hour, as the guide draws it.
		rs := rows(t, ft.Table, "emp000123")
		head, _ := keys.Join("20261122", "000")
		if len(rs) != 1 || rs[0].RowKey != head || rs[0].Properties["V14"] != int64(42) || rs[0].Properties["V09"] != int64(3) || len(rs[0].Properties) != 4+2 {
			t.Fatalf("stored %+v", rs)
		}
		// Every write was one request: a transaction of one action, the head
		// row (the series' entity) with its slots; no other write.
		if ft.n("transact") != writes || ft.actions != writes || ft.n("insert")+ft.n("update")+ft.n("upsert") != 0 {
			t.Fatalf("writes: %v, %d actions in the transactions, want %d transactions of one action", ft.counts, ft.actions, writes)
		}
		// A series never written reads as empty.
		empty := newSeries(t, ft.wrap(), "emp000123", "20261123", Layout{Slots: 24})
		if sn := mustRead(t, empty); sn.Version != 0 || sn.Segments != 0 || slices.ContainsFunc(sn.Values, func(v any) bool { return v != nil }) {
			t.Fatalf("unwritten series: %+v", sn)
		}
	})
}

func TestDailyValuesSpillIntoASecondEntity(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := freshTable(t, b)
		s := newSeries(t, tbl, "emp000123", "2026", Layout{Slots: 366, Prefix: "D"})
		// Day by day on memstore; in a few writes on Azurite.
		step := 1
		if b.Short() {
			step = 61
		}
		for d := 0; d < 366; d += step {
			err := s.Update(t.Context(), func([]any) (map[int]any, error) {
				m := map[int]any{}
				for i := d; i < min(d+step, 366); i++ {
					m[i] = float64(i) / 2
				}
				return m, nil
			})
			if err != nil {
				t.Fatalf("day %d: %v", d, err)
			}
		}
		sn := mustRead(t, s)
		got, err := sn.Float64s()
		if err != nil || sn.Segments != 2 {
			t.Fatalf("read: %d segments, %v", sn.Segments, err)
		}
		for i, v := range got {
			if v != float64(i)/2 {
				t.Fatalf("day %d = %v", i, v)
			}
		}
		rs := rows(t, tbl, "emp000123")
		if len(rs) != 2 || len(rs[0].Properties) != store.MaxCustomProperties || len(rs[1].Properties) != 366-(store.MaxCustomProperties-2) {
			t.Fatalf("%d entities of %d and %d properties, want the first full (252 with its 2 own) and the rest in the second", len(rs), len(rs[0].Properties), len(rs[1].Properties))
		}
		if rs[0].Properties["D000"] != 0.0 || rs[1].Properties["D365"] != 182.5 {
			t.Fatalf("first and last day in the wrong entities")
		}
	})
}

func TestLargeValuesSpillBySizeMoveAndShrink(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		const big, frames = 60_000, 24
		tbl := freshTable(t, b)
		s := newSeries(t, tbl, "sensor7", "frames", Layout{Slots: frames})
		frame := func(i, n int) []byte { return bytes.Repeat([]byte{byte(i)}, n) }
		err := s.Update(t.Context(), func([]any) (map[int]any, error) {
			m := map[int]any{}
			for i := range frames {
				m[i] = frame(i, big)
			}
			return m, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		check := func(want func(i int) []byte, what string) []store.Entity {
			t.Helper()
			sn := mustRead(t, s)
			for i, v := range sn.Values {
				if w := want(i); !bytes.Equal(asBytes(v), w) {
					t.Fatalf("%s: slot %d has %d bytes, want %d", what, i, len(asBytes(v)), len(w))
				}
			}
			rs := rows(t, tbl, "sensor7")
			if sn.Segments != len(rs) {
				t.Fatalf("%s: %d segments read, %d stored", what, sn.Segments, len(rs))
			}
			for _, e := range rs {
				if err := store.ValidateEntity(&e); err != nil {
					t.Fatalf("%s: stored entity over the limits: %v", what, err)
				}
			}
			return rs
		}
		rs := check(func(i int) []byte { return frame(i, big) }, "24 frames of 60 KB")
		// 17 frames fit 1 MiB by the size formula, but their base64 (80,000
		// bytes each) holds the first entity, whose every change is a
		// replace, to 13 in 1 MiB of JSON body.
		if len(rs) != 2 || len(rs[0].Properties) != 2+13 {
			t.Fatalf("24 frames of 60 KB in %d entities, %d properties in the first, want 2 (13 frames and the head's 2 in the first)", len(rs), len(rs[0].Properties))
		}
		// Frames in the first entity grow past its room: they move out, in
		// one transaction with the entities they move to.
		sizes := func(i int) int {
			if i < 3 {
				return 65_536
			}
			return big
		}
		err = s.Update(t.Context(), func([]any) (map[int]any, error) {
			return map[int]any{0: frame(0, 65_536), 1: frame(1, 65_536), 2: frame(2, 65_536)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		check(func(i int) []byte { return frame(i, sizes(i)) }, "3 frames grown")
		// Clearing every frame of the last entities deletes them.
		err = s.Update(t.Context(), func([]any) (map[int]any, error) {
			m := map[int]any{}
			for i := 10; i < frames; i++ {
				m[i] = nil
			}
			return m, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rs = check(func(i int) []byte {
			if i >= 10 {
				return nil
			}
			return frame(i, sizes(i))
		}, "14 frames cleared")
		if len(rs) > 2 {
			t.Fatalf("%d entities left for 10 frames", len(rs))
		}
	})
}

func asBytes(v any) []byte {
	b, _ := v.([]byte)
	return b
}

func TestBadInputIsRefusedAndNothingWritten(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := freshTable(t, b)
		for _, tc := range []struct {
			pk, id string
			l      Layout
			opts   *Options
			want   string
		}{
			{"emp/1", "d", Layout{Slots: 24}, nil, `"emp/1" contains '/'`},
			{"emp#1", "d", Layout{Slots: 24}, nil, `contains '#'`},
			{"emp", strings.Repeat("x", 1020), Layout{Slots: 24}, nil, "the limit is 1024"},
			{"emp", "d", Layout{Slots: 0}, nil, "Slots 0 is out of range"},
			{"emp", "d", Layout{Slots: MaxSlots + 1}, nil, "Slots 100001 is out of range"},
			{"emp", "d", Layout{Slots: 24, Prefix: "1x"}, nil, `"1x"`},
			{"emp", "d", Layout{Slots: 24, Prefix: "a-b"}, nil, `"a-b"`},
			{"emp", "d", Layout{Slots: 24, Prefix: "TkSeries"}, nil, `Layout.Prefix "TkSeries" starts with "Tk" (store.ReservedPrefix)`},
			{"emp", "d", Layout{Slots: 24}, &Options{MaxSegments: MaxSegments + 1}, "Options.MaxSegments"},
			{"emp", "d", Layout{Slots: 24}, &Options{Attempts: -1}, "Options.Attempts -1: want 0 (the default, 10) or more"},
		} {
			if _, err := New(tbl, tc.pk, tc.id, tc.l, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%q, %q, %+v): %v, want %s", tc.pk, tc.id, tc.l, err, tc.want)
			}
		}
		// Any string may be an id: keys.Join escapes it.
		odd := newSeries(t, tbl, "emp", "a/b#c?d\\e", Layout{Slots: 3})
		if _, err := odd.Add(t.Context(), 0, 1); err != nil {
			t.Fatalf("id with forbidden characters: %v", err)
		}

		s := newSeries(t, tbl, "emp", "d", Layout{Slots: 24}, Options{MaxSegments: 1})
		if _, err := s.Add(t.Context(), 1, 5); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			do   func() error
			want []string
			is   error
		}{
			{"slot -1", func() error { _, err := s.Add(t.Context(), -1, 1); return err }, []string{"slot -1 is out of range", "0 to 23"}, nil},
			{"slot 24", func() error { return s.Set(t.Context(), 24, int64(1)) }, []string{"slot 24 is out of range"}, nil},
			{"unsupported type", func() error { return s.Set(t.Context(), 2, struct{}{}) }, []string{`"V02"`, "unsupported Go type"}, store.ErrInvalidInput},
			{"string too long", func() error { return s.Set(t.Context(), 2, strings.Repeat("x", store.MaxStringUnits+1)) },
				[]string{`"V02"`, "32767"}, store.ErrTooLarge},
			{"no room in the one entity allowed", func() error {
				return s.Update(t.Context(), func([]any) (map[int]any, error) {
					m := map[int]any{}
					for i := range 24 {
						m[i] = bytes.Repeat([]byte{1}, 60_000)
					}
					return m, nil
				})
			}, []string{"slot 13 (property V13", "60018 bytes by the service's size formula", "252 properties", "1048576 bytes", "1 entities per series"}, ErrNoRoom},
			{"Add to a non-integer", func() error {
				return s.Update(t.Context(), func(v []any) (map[int]any, error) {
					if v[3] == nil {
						return map[int]any{3: "text"}, nil
					}
					return nil, nil
				})
			}, nil, nil},
			{"Add over a string", func() error { _, err := s.Add(t.Context(), 3, 1); return err }, []string{"slot 3 holds a string"}, nil},
			{"Add overflow", func() error {
				if err := s.Set(t.Context(), 4, int64(1<<62)); err != nil {
					return err
				}
				_, err := s.Add(t.Context(), 4, 1<<62)
				return err
			}, []string{"overflows an Int64"}, nil},
		} {
			before := mustRead(t, s)
			err := tc.do()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				continue
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v, want an error containing %s", tc.name, err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%s: %v does not match %v", tc.name, err, tc.is)
			}
			after := mustRead(t, s)
			if tc.name != "Add overflow" && (after.Version != before.Version || !slices.EqualFunc(after.Values, before.Values, sameValue)) {
				t.Errorf("%s: the refused write changed the series (version %d to %d)", tc.name, before.Version, after.Version)
			}
		}
	})
}

func sameValue(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestForeignRowsInTheSeriesRangeAreReported(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := freshTable(t, b)
		s := newSeries(t, tbl, "emp", "2026", Layout{Slots: 24})
		if _, err := s.Add(t.Context(), 0, 1); err != nil {
			t.Fatal(err)
		}
		// Rows of other kinds next to the series are not read.
		other, _ := keys.Join("20261", "000")
		for _, rk := range []string{"2026", other, "profile"} {
			if _, err := tbl.Insert(t.Context(), store.Entity{PartitionKey: "emp", RowKey: rk, Properties: map[string]any{"V00": int64(99)}}); err != nil {
				t.Fatal(err)
			}
		}
		if sn := mustRead(t, s); sn.Values[0] != int64(1) || sn.Segments != 1 {
			t.Fatalf("read next to other rows: %+v", sn)
		}
		// A row inside the series' range that is none of its segments is an error.
		bad, _ := keys.Join("2026", "abc")
		if _, err := tbl.Insert(t.Context(), store.Entity{PartitionKey: "emp", RowKey: bad, Properties: map[string]any{"V00": int64(99)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(t.Context()); err == nil || !strings.Contains(err.Error(), "is not one of its segments") {
			t.Fatalf("read over a foreign row: %v", err)
		}
	})
}
