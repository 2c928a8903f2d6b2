package wide

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// A read through the table's typed lane (rows read straight into one
// slice) and one through Query (rows as store.Entity values) return the
// same value: every EDM type, values split into pieces, a value of three
// rows, on one page and on pages of one row.
func TestReadRoutesAgree(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		name := freshTable(t, b)
		v := counters(600, 7)
		v["Str"] = "text"
		v["Bin"] = []byte{0, 1, 2, 255}
		v["Bool"] = true
		v["I64"] = int64(-1 << 40)
		v["F"] = 2.5
		v["When"] = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
		v["G"] = store.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		v["Long"] = strings.Repeat("é", 50_000)           // 100 KB: pieces
		v["Blob"] = bytes.Repeat([]byte{7, 8, 9}, 30_000) // 90 KB: pieces
		w := newWide[Properties](t, b.Store, name, nil)
		if _, err := w.Put(t.Context(), "p", "v", &v, ""); err != nil {
			t.Fatal(err)
		}
		for _, pageSize := range []int{0, 1} {
			typed := newWide[Properties](t, b.Store, name, &Options{PageSize: pageSize})
			entity := newWide[Properties](t, entityRoute(b.Store), name, &Options{PageSize: pageSize})
			a, err := typed.Read(t.Context(), "p", "v")
			if err != nil {
				t.Fatal(err)
			}
			e, err := entity.Read(t.Context(), "p", "v")
			if err != nil {
				t.Fatal(err)
			}
			if err := sameProps(a.Value, v); err != nil {
				t.Fatalf("typed lane, pages of %d: %v", pageSize, err)
			}
			if err := sameProps(e.Value, v); err != nil {
				t.Fatalf("Query, pages of %d: %v", pageSize, err)
			}
			if a.Rows != e.Rows || a.Version != e.Version || a.ETag != e.ETag || a.Requests != e.Requests {
				t.Fatalf("typed lane %+v, Query %+v", a, e)
			}
			t.Logf("%s, pages of %d: %d properties in %d rows, %d requests on both routes", b.Name, pageSize, len(a.Value), a.Rows, a.Requests)
		}
	})
}
