package wide

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// A mapped struct round-trips: its fields, its extra properties (500
// counters), a body over the string limit and a scan over the binary
// limit; Get fills its keys and ETag, Put its ETag.
func TestStructRoundTrip(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		w := newWide[Doc](t, b.Store, freshTable(t, b), nil)
		d := Doc{Tenant: "ignored", ID: "ignored", Title: "Quarterly report", Body: strings.Repeat("lorem ipsum ", 10_000),
			Scan: make([]byte, 200_000), Tags: []string{"q3", "draft"}, Edited: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC),
			Counts: counters(500, 7), Private: "not stored"}
		for i := range d.Scan {
			d.Scan[i] = byte(i % 251)
		}
		etag, err := w.Put(t.Context(), "acme", "report q3", &d, "")
		if err != nil {
			t.Fatal(err)
		}
		if d.ETag != etag || etag == "" {
			t.Fatalf("Put returned %q and left %q in the etag field", etag, d.ETag)
		}
		got, getTag, err := w.Get(t.Context(), "acme", "report q3")
		if err != nil {
			t.Fatal(err)
		}
		if got.Tenant != "acme" || got.ID != "report q3" || got.ETag != etag || getTag != etag || got.Title != d.Title || got.Body != d.Body ||
			!slices.Equal(got.Scan, d.Scan) || !slices.Equal(got.Tags, d.Tags) || !got.Edited.Equal(d.Edited) || got.Private != "" {
			t.Fatalf("read back %s/%s %q, body %d bytes, scan %d bytes, tags %v, edited %s, private %q",
				got.Tenant, got.ID, got.Title, len(got.Body), len(got.Scan), got.Tags, got.Edited, got.Private)
		}
		if err := sameProps(got.Counts, d.Counts); err != nil {
			t.Fatalf("extra properties: %v", err)
		}
		s, err := w.Read(t.Context(), "acme", "report q3")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d properties (body %d bytes, scan %d bytes) in %d rows, read with %d request", b.Name, 505, len(d.Body), len(d.Scan), s.Rows, s.Requests)
		if s.Rows < 3 || s.Requests != 1 {
			t.Fatalf("%d rows, %d requests", s.Rows, s.Requests)
		}
	})
}

// A value that shrinks leaves no row behind; one that grows again gets
// its rows back; each write is one version, and every row carries it.
func TestShrinkAndGrow(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		w := newWide[Properties](t, b.Store, freshTable(t, b), nil)
		var etag store.ETag
		for i, n := range []int{1200, 10, 600, 600, 0, 2000, 251} {
			v := counters(n, i*10_000)
			var err error
			etag, err = w.Put(t.Context(), "p", "v", &v, etag)
			if err != nil {
				t.Fatalf("write %d (%d properties): %v", i, n, err)
			}
			s, err := w.Read(t.Context(), "p", "v")
			if err != nil {
				t.Fatal(err)
			}
			if err := sameProps(s.Value, v); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			all := rows(t, w.Table(), "p")
			if s.Rows != rowsFor(n) || len(all) != s.Rows || s.Version != int64(i+1) || s.ETag != etag {
				t.Fatalf("write %d of %d properties: %d rows stored, %d read (want %d), version %d", i, n, len(all), s.Rows, rowsFor(n), s.Version)
			}
			for _, e := range all {
				if e.Properties[propVersion] != int64(i+1) {
					t.Fatalf("row %q carries version %v after write %d", e.RowKey, e.Properties[propVersion], i+1)
				}
			}
		}
	})
}

// Several values share a partition with rows of other kinds: every read
// reads only the value's own rows, and IDs finds the headers.
func TestValuesShareAPartition(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		name := freshTable(t, b)
		w := newWide[Properties](t, b.Store, name, nil)
		tbl := w.Table()
		// Rows of other kinds around and between the values' key ranges.
		for _, rk := range []string{"", "a", "a!", "a \"", "ab", "b", "~"} {
			if _, err := tbl.Insert(t.Context(), store.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"Other": rk, propVersion: int64(9)}}); err != nil {
				t.Fatal(err)
			}
		}
		ids := []string{"a", "a b", "a !00", "ab", "", "b/c"}
		for i, id := range ids {
			v := counters(300+i, i*1000)
			v["ID"] = id
			if _, err := w.Put(t.Context(), "p", id, &v, ""); err != nil {
				t.Fatalf("Put %q: %v", id, err)
			}
		}
		for i, id := range ids {
			got, _, err := w.Get(t.Context(), "p", id)
			if err != nil {
				t.Fatalf("Get %q: %v", id, err)
			}
			want := counters(300+i, i*1000)
			want["ID"] = id
			if err := sameProps(got, want); err != nil {
				t.Fatalf("value %q: %v", id, err)
			}
		}
		if err := w.Delete(t.Context(), "p", "ab", store.ETagAny); err != nil {
			t.Fatal(err)
		}
		var listed []string
		for id, err := range w.IDs(t.Context(), "p") {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, id)
		}
		want := []string{"", "a", "a !00", "a b", "b/c"}
		if !slices.Equal(listed, want) {
			t.Fatalf("IDs: %q, want %q", listed, want)
		}
		if _, _, err := w.Get(t.Context(), "p", "c"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get of a value never written: %v", err)
		}
	})
}

// Delete removes a value's rows and keeps a marker; the value can be
// created again, its version going on; a stale or missing delete fails.
func TestDelete(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		w := newWide[Properties](t, b.Store, freshTable(t, b), nil)
		v := counters(700, 0)
		etag, err := w.Put(t.Context(), "p", "v", &v, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Delete(t.Context(), "p", "v", `W/"stale"`); !errors.Is(err, partition.ErrChanged) || !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("Delete with a stale ETag: %v", err)
		}
		if err := w.Delete(t.Context(), "p", "v", etag); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Get(t.Context(), "p", "v"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get after Delete: %v", err)
		}
		if n := len(rows(t, w.Table(), "p")); n != 1 {
			t.Fatalf("%d rows after Delete, want the header's marker alone", n)
		}
		if err := w.Delete(t.Context(), "p", "v", store.ETagAny); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Delete of a deleted value: %v", err)
		}
		if _, err := w.Put(t.Context(), "p", "v", &v, etag); !errors.Is(err, partition.ErrChanged) {
			t.Fatalf("Put on the deleted value's old ETag: %v", err)
		}
		v2 := counters(3, 5)
		if _, err := w.Put(t.Context(), "p", "v", &v2, ""); err != nil {
			t.Fatalf("create again: %v", err)
		}
		s, err := w.Read(t.Context(), "p", "v")
		if err != nil {
			t.Fatal(err)
		}
		if s.Version != 3 || s.Rows != 1 || sameProps(s.Value, v2) != nil {
			t.Fatalf("re-created: version %d, %d rows", s.Version, s.Rows)
		}
	})
}

// Conditional writes: create refuses an existing value, a stale ETag is a
// conflict, ETagAny overwrites.
func TestConditions(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		w := newWide[Properties](t, b.Store, freshTable(t, b), nil)
		v := counters(260, 0)
		first, err := w.Put(t.Context(), "p", "v", &v, "")
		if err != nil {
			t.Fatal(err)
		}
		var ce *ConditionError
		if _, err := w.Put(t.Context(), "p", "v", &v, ""); !errors.As(err, &ce) || ce.Current != first || !errors.Is(err, partition.ErrDuplicate) || !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("second create: %v", err)
		}
		second, err := w.Put(t.Context(), "p", "v", &v, first)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Put(t.Context(), "p", "v", &v, first); !errors.As(err, &ce) || ce.Current != second {
			t.Fatalf("stale ETag: %v", err)
		}
		if _, err := w.Put(t.Context(), "p", "missing", &v, first); !errors.As(err, &ce) || ce.Current != "" {
			t.Fatalf("ETag on a missing value: %v", err)
		}
		if _, err := w.Put(t.Context(), "p", "v", &v, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Put(t.Context(), "p", "new", &v, store.ETagAny); err != nil {
			t.Fatal(err)
		}
	})
}

// Kind is a type with a RowKey prefix: its ids must carry it, and IDs
// lists only its own values.
type Kind struct {
	PK    string `table:",pk"`
	RK    string `table:",rk"`
	Notes string
}

func (Kind) TableKind() mapper.Kind { return mapper.Kind{Prefix: "kind_"} }

func TestKindPrefix(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		name := freshTable(t, b)
		w := newWide[Kind](t, b.Store, name, nil)
		other := newWide[Properties](t, b.Store, name, nil)
		k := Kind{Notes: strings.Repeat("n", 40_000)}
		if _, err := w.Put(t.Context(), "p", "x", &k, ""); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("id without the kind's prefix: %v", err)
		}
		if _, err := w.Put(t.Context(), "p", "kind_x", &k, ""); err != nil {
			t.Fatal(err)
		}
		m := Properties{"A": "b"}
		if _, err := other.Put(t.Context(), "p", "plain", &m, ""); err != nil {
			t.Fatal(err)
		}
		var listed []string
		for id, err := range w.IDs(t.Context(), "p") {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, id)
		}
		got, _, err := w.Get(t.Context(), "p", "kind_x")
		if err != nil || got.Notes != k.Notes || got.RK != "kind_x" || !slices.Equal(listed, []string{"kind_x"}) {
			t.Fatalf("Get: %v, notes %d bytes, RowKey field %q, IDs %q", err, len(got.Notes), got.RK, listed)
		}
	})
}

// Bad input is refused, naming the value and the limit, and nothing is
// written.
func TestBadInput(t *testing.T) {
	type reserved struct {
		PK  string `table:",pk"`
		RK  string `table:",rk"`
		Bad string `table:"TkX"`
	}
	type tooLong struct {
		PK   string `table:",pk"`
		RK   string `table:",rk"`
		Name string `table:"N0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"`
	}
	type noKeys struct{ A string }
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		name := freshTable(t, b)
		for what, err := range map[string]error{
			"a field named with the reserved prefix": func() error { _, err := New[reserved](b.Store, name, nil); return err }(),
			"a field name over 245 characters":       func() error { _, err := New[tooLong](b.Store, name, nil); return err }(),
			"a type the mapper cannot map":           func() error { _, err := New[noKeys](b.Store, name, nil); return err }(),
			"a bad table name":                       func() error { _, err := New[Properties](b.Store, "no-dashes", nil); return err }(),
			"no store":                               func() error { _, err := New[Properties](nil, name, nil); return err }(),
			"negative attempts":                      func() error { _, err := New[Properties](b.Store, name, &Options{Attempts: -1}); return err }(),
			"a page size over 1,000":                 func() error { _, err := New[Properties](b.Store, name, &Options{PageSize: 1001}); return err }(),
		} {
			if !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("New with %s: %v, want an invalid-input error", what, err)
			}
		}
		w := newWide[Properties](t, b.Store, name, nil)
		d := newWide[Doc](t, b.Store, name, nil)
		ok := Properties{"A": "x"}
		long := strings.Repeat("i", 1022)
		badUTF8 := string([]byte{'a', 0xff})
		var nilMap Properties
		for _, tc := range []struct {
			name string
			put  func() error
			code string
		}{
			{"nil pointer", func() error { _, err := w.Put(t.Context(), "p", "v", nil, ""); return err }, store.CodeInvalidInput},
			{"nil struct pointer", func() error { _, err := d.Put(t.Context(), "p", "v", nil, ""); return err }, store.CodeInvalidInput},
			{"nil map", func() error { _, err := w.Put(t.Context(), "p", "v", &nilMap, ""); return err }, store.CodeInvalidInput},
			{"PartitionKey with a slash", func() error { _, err := w.Put(t.Context(), "a/b", "v", &ok, ""); return err }, store.CodeOutOfRangeInput},
			{"PartitionKey with a control character", func() error { _, err := w.Put(t.Context(), "a\tb", "v", &ok, ""); return err }, store.CodeOutOfRangeInput},
			{"id too long for its row keys", func() error { _, err := w.Put(t.Context(), "p", long, &ok, ""); return err }, store.CodeKeyValueTooLarge},
			{"id not UTF-8", func() error { _, err := w.Put(t.Context(), "p", badUTF8, &ok, ""); return err }, store.CodeInvalidInput},
			{"reserved property name", func() error {
				v := Properties{"TkWideRows": int32(1)}
				_, err := w.Put(t.Context(), "p", "v", &v, "")
				return err
			}, store.CodePropertyNameInvalid},
			{"property name with a dash", func() error { v := Properties{"a-b": "x"}; _, err := w.Put(t.Context(), "p", "v", &v, ""); return err }, store.CodePropertyNameInvalid},
			{"property name of 250 characters", func() error {
				v := Properties{strings.Repeat("N", 250): "x"}
				_, err := w.Put(t.Context(), "p", "v", &v, "")
				return err
			}, store.CodePropertyNameTooLong},
			{"string not UTF-8", func() error {
				v := Properties{"S": strings.Repeat(badUTF8, 40_000)}
				_, err := w.Put(t.Context(), "p", "v", &v, "")
				return err
			}, store.CodeInvalidInput},
			{"unsupported type", func() error { v := Properties{"N": 3}; _, err := w.Put(t.Context(), "p", "v", &v, ""); return err }, store.CodeInvalidValueType},
			{"time out of range", func() error {
				v := Properties{"T": time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}
				_, err := w.Put(t.Context(), "p", "v", &v, "")
				return err
			}, store.CodeOutOfRangeInput},
			{"struct time out of range", func() error {
				v := Doc{Edited: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}
				_, err := d.Put(t.Context(), "p", "v", &v, "")
				return err
			}, store.CodeOutOfRangeInput},
			{"malformed ETag", func() error { _, err := w.Put(t.Context(), "p", "v", &ok, "abc"); return err }, store.CodeInvalidInput},
			{"Delete without an ETag", func() error { return w.Delete(t.Context(), "p", "v", "") }, store.CodeInvalidInput},
			{"a value that cannot be split into one transaction", func() error {
				v := Properties{"Big": make([]byte, 5<<20)}
				_, err := w.Put(t.Context(), "p", "v", &v, "")
				return err
			}, store.CodeRequestBodyTooLarge},
			{"a value of more than 100 rows", func() error { v := counters(30_000, 0); _, err := w.Put(t.Context(), "p", "v", &v, ""); return err }, store.CodeInvalidInput},
		} {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.put()
				if store.Code(err) != tc.code || !errors.Is(err, store.ErrInvalidInput) || store.SourceOf(err) != store.SourceClient {
					t.Fatalf("%v (code %q, source %s), want code %s from the client", err, store.Code(err), store.SourceOf(err), tc.code)
				}
			})
		}
		if all := rows(t, w.Table(), "p"); len(all) != 0 {
			t.Fatalf("%d rows written by refused writes", len(all))
		}
		if _, _, err := w.Get(t.Context(), "p", long); store.Code(err) != store.CodeKeyValueTooLarge {
			t.Fatalf("Get with an id too long: %v", err)
		}
	})
}

// The layout does not depend on the order a map is built or iterated in:
// the same value gives the same rows.
func TestLayoutIsDeterministic(t *testing.T) {
	w := newWide[Properties](t, memstore.New(), "Docs", nil)
	var first []store.Action
	for round := range 20 {
		v := Properties{}
		names := make([]string, 0, 800)
		for i := range 800 {
			names = append(names, fmt.Sprintf("P%03d", i))
		}
		r := seeded(uint64(round))
		for i := len(names) - 1; i > 0; i-- {
			j := int(r() % uint64(i+1))
			names[i], names[j] = names[j], names[i]
		}
		for _, n := range names {
			v[n] = strings.Repeat("x", int(n[3]-'0')*100)
		}
		v["P000"] = strings.Repeat("long ", 30_000) // split in pieces
		actions, err := planOf(w, "p", "v", v, &header{})
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			first = actions
			continue
		}
		if len(actions) != len(first) {
			t.Fatalf("round %d: %d rows, round 0: %d", round, len(actions), len(first))
		}
		for i := range actions {
			a, b := actions[i].Entity.Properties, first[i].Entity.Properties
			if err := sameProps(a, b); err != nil {
				t.Fatalf("round %d, row %d: %v", round, i, err)
			}
		}
	}
}

// What one logical operation costs in requests: a write is one point read
// of the header and one transaction, whatever the value's rows; a read is
// one query.
func TestRequestsPerOperation(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		var ft *faultTable
		st := wrapped{b.Store, func(tbl store.Table) store.Table { ft = &faultTable{Table: tbl}; return ft }}
		w := newWide[Properties](t, st, freshTable(t, b), nil)
		counts := func() [3]int { return [3]int{ft.n("get"), ft.n("transact"), ft.n("query")} }
		step := func(what string, op func() error, want [3]int) {
			t.Helper()
			before := counts()
			if err := op(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			after := counts()
			got := [3]int{after[0] - before[0], after[1] - before[1], after[2] - before[2]}
			t.Logf("%s: %s: %d point reads, %d transactions, %d queries", b.Name, what, got[0], got[1], got[2])
			if got != want {
				t.Fatalf("%s: %v requests (point reads, transactions, queries), want %v", what, got, want)
			}
		}
		var etag store.ETag
		big, small := counters(1500, 0), counters(10, 0)
		step("create a value of 7 rows", func() (err error) { etag, err = w.Put(t.Context(), "p", "v", &big, ""); return }, [3]int{1, 1, 0})
		step("read it", func() error { _, _, err := w.Get(t.Context(), "p", "v"); return err }, [3]int{0, 0, 1})
		step("shrink it to 1 row", func() (err error) { etag, err = w.Put(t.Context(), "p", "v", &small, etag); return }, [3]int{1, 1, 0})
		step("read it", func() error { _, _, err := w.Get(t.Context(), "p", "v"); return err }, [3]int{0, 0, 1})
		step("delete it", func() error { return w.Delete(t.Context(), "p", "v", etag) }, [3]int{1, 1, 0})
	})
}
