package storetest

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// ent builds an entity from alternating property names and values.
func ent(pk, rk string, kv ...any) store.Entity {
	e := store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Properties[kv[i].(string)] = kv[i+1]
	}
	return e
}

// key is an entity's (PartitionKey, RowKey).
type key struct{ pk, rk string }

func (k key) String() string { return fmt.Sprintf("(%q, %q)", k.pk, k.rk) }

// scanAll follows continuation tokens from q to the end and returns every
// entity, checking that no page exceeds limit entities. A page may be
// short or empty and may even repeat the token it was given (the service
// ran out of time before it made progress).
func scanAll(t testing.TB, tbl store.Table, q store.Query, limit int) ([]store.Entity, int) {
	t.Helper()
	var all []store.Entity
	pages := 0
	q0 := q
	for {
		p, err := tbl.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("Query(%+v) page %d: %v", q, pages, err)
		}
		pages++
		if len(p.Entities) > limit {
			t.Errorf("page %d has %d entities: the limit is %d", pages, len(p.Entities), limit)
		}
		all = append(all, p.Entities...)
		if p.Continuation == "" {
			sameTypedScan(t, tbl, q0, limit, all)
			return all, pages
		}
		if pages > 10000 {
			t.Fatalf("more than 10000 pages: the continuation never ends")
		}
		q.Continuation = p.Continuation
	}
}

// keysOf lists the keys of entities in order.
func keysOf(es []store.Entity) []key {
	out := make([]key, len(es))
	for i, e := range es {
		out[i] = key{e.PartitionKey, e.RowKey}
	}
	return out
}

// wantKeys checks that the whole table holds exactly these keys, in this order.
func wantKeys(t testing.TB, tbl store.Table, want ...key) {
	t.Helper()
	all, _ := scanAll(t, tbl, store.Query{}, store.MaxPageSize)
	got := keysOf(all)
	if !equalKeys(got, want) {
		t.Errorf("table %s holds %v, want %v", tbl.Name(), got, want)
	}
}

// wantEmpty checks that a refused write left nothing behind.
func wantEmpty(t testing.TB, tbl store.Table) {
	t.Helper()
	wantKeys(t, tbl)
}

func equalKeys(a, b []key) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mustInsert inserts e and returns its ETag.
func mustInsert(t testing.TB, tbl store.Table, e store.Entity) store.ETag {
	t.Helper()
	tag, err := tbl.Insert(t.Context(), e)
	if err != nil {
		t.Fatalf("Insert(%q, %q): %v", e.PartitionKey, e.RowKey, err)
	}
	if tag == "" {
		t.Fatalf("Insert(%q, %q) returned an empty ETag", e.PartitionKey, e.RowKey)
	}
	return tag
}

// mustGet reads an entity that must exist.
func mustGet(t testing.TB, tbl store.Table, pk, rk string) store.Entity {
	t.Helper()
	e, err := tbl.Get(t.Context(), pk, rk, nil)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", pk, rk, err)
	}
	return e
}

// wantMissing checks that an entity does not exist.
func wantMissing(t testing.TB, tbl store.Table, pk, rk string) {
	t.Helper()
	_, err := tbl.Get(t.Context(), pk, rk, nil)
	wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
}

// wantProps checks that got holds exactly the properties of want, with
// values of the same Go type and value.
func wantProps(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: property %q is missing, want %s", what, k, show(w))
			continue
		}
		if !sameValue(g, w) {
			t.Errorf("%s: property %q = %s, want %s", what, k, show(g), show(w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected property %q = %s", what, k, show(g))
		}
	}
}

// sameValue compares two property values as the service stores them: same
// Go type, same value; NaN equals NaN; times equal as instants and in UTC.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.IsNaN(x) && math.IsNaN(y)
		}
		return x == y && math.Signbit(x) == math.Signbit(y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && x.Location() == time.UTC
	}
	return a == b
}

// show formats a value with its Go type, shortening long ones.
func show(v any) string {
	s := fmt.Sprintf("%T(%v)", v, v)
	if len(s) > 120 {
		s = s[:120] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// props makes n properties named P000, P001, ... with int32 values.
func props(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("P%03d", i)] = int32(i)
	}
	return m
}

// units returns a string of n UTF-16 code units: ASCII 'a', or with
// supplementary characters (2 units each) and one 'a' when n is odd.
func units(n int, supplementary bool) string {
	if !supplementary {
		return strings.Repeat("a", n)
	}
	return strings.Repeat("\U0001F600", n/2) + strings.Repeat("a", n%2)
}
