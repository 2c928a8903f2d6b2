package xindex_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// rowCount counts every row of a table.
func rowCount(t *testing.T, st store.Store, table string) int {
	t.Helper()
	n := 0
	for _, err := range store.All(context.Background(), st.Table(table), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestBadInputIsRefused: a value too long for a key, an entity key with a
// forbidden character, an index partition too long, a projection of a
// missing field, a type without a prefix: clear errors naming the value
// and the limit, and nothing written (no entity, no claim, no outbox
// row). A forbidden character inside a value is escaped, not refused.
func TestBadInputIsRefused(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		f := newFixture(t, e, "bad", nil, xindex.Options{})
		x := f.x
		long := emp("Sales", 1, "A", "B", strings.Repeat("e", 1100))
		err := x.Insert(ctx, long)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "index email") || !strings.Contains(err.Error(), "1024") ||
			!strings.Contains(err.Error(), "eeee") {
			t.Fatalf("a value too long for a key: %v", err)
		}
		bad := emp("Sales", 2, "A", "B", "a@b")
		bad.ID = "emp_a/b"
		if err := x.Insert(ctx, bad); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "emp_a/b") {
			t.Fatalf("a key with '/': %v", err)
		}
		longLast := emp("Sales", 3, "A", strings.Repeat("n", 1010), "ok@b")
		if err := x.Insert(ctx, longLast); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "index lastname") {
			t.Fatalf("a non-unique value too long with the entity's keys: %v", err)
		}
		if n := rowCount(t, e.B.Store, f.staff) + rowCount(t, e.B.Store, f.ix); n != 0 {
			t.Fatalf("%d rows written by refused writes", n)
		}
		// A partition name too long for a key.
		wide := emp(strings.Repeat("D", 1020), 4, "A", "B", "w@b")
		if err := x.Insert(ctx, wide); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "copy partition") || !strings.Contains(err.Error(), "1024") {
			t.Fatalf("an index partition too long: %v", err)
		}
		if n := rowCount(t, e.B.Store, f.staff); n != 0 {
			t.Fatalf("%d rows written by a refused write", n)
		}
		// A forbidden character in a value is escaped, not refused.
		odd := emp("Sales", 5, "A", "B/C#?", "x/y#z@q")
		if err := x.Insert(ctx, odd); err != nil {
			t.Fatalf("a value with '/', '#': %v", err)
		}
		f.drain(t)
		if h, err := x.Find(ctx, "Sales", "email", "x/y#z@q"); err != nil || h.Value.ID != odd.ID {
			t.Fatalf("find it back: %+v, %v", h, err)
		}
		if _, err := x.Find(ctx, "Sales", "email", strings.Repeat("q", 1100)); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a lookup of a value too long for a key: %v", err)
		}
		if _, err := x.Find(ctx, "Sales", "lastname", "B"); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("Find on a non-unique index: %v", err)
		}
		for _, err := range x.FindAll(ctx, "Sales", "nope", "v") {
			if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "nope") {
				t.Fatalf("an unknown index: %v", err)
			}
		}

		// Declarations.
		eng := eventualtest.NewEngine(t, e.B.Store, e.Opts("bad2"))
		table := f.staff + "x"
		email := func(v *Employee) string { return v.Email }
		if _, err := xindex.New[Employee](eng, table, nil, xindex.Unique[Employee]("email", email).Project("Nope")); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "Nope") {
			t.Fatalf("a projection of a missing field: %v", err)
		}
		if _, err := xindex.New[Employee](eng, table, nil, xindex.Unique[Employee]("bad name", email)); err == nil || !strings.Contains(err.Error(), "bad name") {
			t.Fatalf("an index name with a space: %v", err)
		}
		if _, err := xindex.New[Employee](eng, table, nil, xindex.Unique[Employee]("emp", email)); err == nil || !strings.Contains(err.Error(), "overlap") {
			t.Fatalf("copies overlapping the entities' prefix: %v", err)
		}
		if _, err := xindex.New[Employee](eng, table, nil, xindex.Unique[Employee]("email", email).InTable("1bad")); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a bad copy table: %v", err)
		}
		if _, err := xindex.New[Employee](eng, f.staff, nil, xindex.Unique[Employee]("email", email)); err != nil {
			t.Fatal(err)
		}
		if _, err := xindex.New[Employee](eng, f.staff, nil, xindex.Unique[Employee]("email", email)); err == nil || !strings.Contains(err.Error(), "registered already") {
			t.Fatalf("a second Table of one entity table on one engine: %v", err)
		}
		type noKind struct {
			PK string `table:",pk"`
			RK string `table:",rk"`
			A  string
		}
		if _, err := xindex.New[noKind](eng, table, nil, xindex.Unique[noKind]("a", func(v *noKind) string { return v.A })); err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Fatalf("a type without a kind prefix: %v", err)
		}
		// The refused writes left no outbox row either.
		ob, err := partition.NewOutbox(e.B.Store.Table(f.staff), nil)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ob.Pending(ctx, "Sales")
		if err != nil || len(rows) != 0 {
			t.Fatalf("outbox rows left: %d, %v", len(rows), err)
		}
	})
}

// TestNilOptionsTakeTheDefaults: New with nil options builds a working
// index with the defaults, and a bad option value is refused naming the
// field.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		f := newFixture(t, e, "nilopts", nil, xindex.Options{})
		spec := xindex.Unique[Employee]("email", func(v *Employee) string { return v.Email })
		if _, err := xindex.New[Employee](f.eng, f.staff+"x", nil, spec); err != nil {
			t.Fatalf("nil options: %v", err)
		}
		_, err := xindex.New[Employee](f.eng, f.staff+"y", &xindex.Options{ClaimLease: -time.Second}, spec)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "ClaimLease") {
			t.Fatalf("negative ClaimLease: %v, want ErrInvalidInput naming ClaimLease", err)
		}
	})
}
