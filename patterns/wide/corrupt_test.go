package wide

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// Rows in a value's key range that the package did not write as they are
// make a read fail, naming the row; a part of another version makes it
// read again and give up, never assemble a mixed value.
func TestReadRefusesForeignRows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(rows []store.Entity) // rows 0..2 of a 3-row value, as written
		want   error
	}{
		{"a part of another version", func(r []store.Entity) { r[2].Properties[propVersion] = int64(7) }, ErrInconsistentRead},
		{"a part missing", func(r []store.Entity) { r[1].RowKey = "" }, ErrInconsistentRead},
		{"a part without its version", func(r []store.Entity) { delete(r[1].Properties, propVersion) }, ErrCorrupt},
		{"a header without its version", func(r []store.Entity) { delete(r[0].Properties, propVersion) }, ErrCorrupt},
		{"a header naming 101 rows", func(r []store.Entity) { r[0].Properties[propRows] = int32(101) }, ErrCorrupt},
		{"a header without writes", func(r []store.Entity) { r[0].Properties[propWrites] = "" }, ErrCorrupt},
		{"a property in two rows", func(r []store.Entity) { r[2].Properties["C0000"] = int32(1) }, ErrCorrupt},
		{"an unknown reserved property", func(r []store.Entity) { r[2].Properties["TkWideOther"] = "x" }, ErrCorrupt},
		{"a piece missing", func(r []store.Entity) { delete(r[0].Properties, pieceName("Body", 0)) }, ErrCorrupt},
		{"pieces of two types", func(r []store.Entity) { r[0].Properties[pieceName("Body", 0)] = []byte("x") }, ErrCorrupt},
		{"a value both whole and in pieces", func(r []store.Entity) { r[2].Properties["Body"] = "x" }, ErrCorrupt},
		{"a row of another key scheme in the range", func(r []store.Entity) { r[2].RowKey = r[2].RowKey[:len(r[2].RowKey)-2] + "x" }, ErrCorrupt},
	} {
		for _, typed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/typed=%v", tc.name, typed), func(t *testing.T) {
				backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
					st := b.Store
					if !typed {
						st = entityRoute(st)
					}
					w := newWide[Properties](t, st, freshTable(t, b), &Options{Attempts: 3})
					v := counters(600, 0)
					v["Body"] = string(make([]byte, 40_000)) // two pieces, in the header
					actions, err := planOf(w, "p", "v", v, &header{})
					if err != nil {
						t.Fatal(err)
					}
					rows := make([]store.Entity, len(actions))
					for i := range actions {
						rows[i] = actions[i].Entity
					}
					if len(rows) != 3 {
						t.Fatalf("%d rows", len(rows))
					}
					tc.change(rows)
					for _, e := range rows {
						if e.RowKey == "" {
							continue
						}
						if _, err := w.Table().Insert(t.Context(), e); err != nil {
							t.Fatal(err)
						}
					}
					_, err = w.Read(t.Context(), "p", "v")
					if !errors.Is(err, tc.want) {
						t.Fatalf("Read: %v, want %v", err, tc.want)
					}
					t.Logf("%s: %v", b.Name, err)
				})
			})
		}
	}
}

// entityRoute hides the typed lane of st's tables: reads go through Query
// and store.Entity values, as over a store without one.
func entityRoute(st store.Store) store.Store {
	return wrapped{st, func(tb store.Table) store.Table { return entityOnly{tb} }}
}

// entityOnly is a table with only store.Table's methods.
type entityOnly struct{ store.Table }
