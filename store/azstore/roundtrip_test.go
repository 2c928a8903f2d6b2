package azstore

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// edgeEntities are entities whose every EDM type sits at an edge: the
// range limits of Int32, Int64 and DateTime, whole and special Doubles,
// empty and escaped strings, empty and all-byte binaries.
func edgeEntities() []store.Entity {
	g, _ := store.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	props := []map[string]any{
		{"S": "", "B": []byte{}, "T": false, "I32": int32(0), "I64": int64(0), "D": 0.0, "DT": store.MinTime, "G": store.GUID{}},
		{"S": "quote\" back\\slash \u2028 tab\t nl\n 😀 é", "B": all, "T": true, "I32": int32(math.MaxInt32), "I64": int64(math.MaxInt64),
			"D": 1.0, "DT": store.MaxTime, "G": g},
		{"I32": int32(math.MinInt32), "I64": int64(math.MinInt64), "D": math.MaxFloat64, "DT": time.Date(2024, 2, 29, 12, 0, 0, 100, time.UTC)},
		{"D": -2.5e-300, "I64": int64(1 << 53), "S": strings.Repeat("x", 1000)},
		{"D": math.Inf(1), "E": math.Inf(-1), "F": math.NaN(), "W": 123456789.0},
		// A negative zero and a NaN with another payload: no backend keeps
		// either distinction (store.NormalizeDouble).
		{"Z": math.Copysign(0, -1), "N": math.Float64frombits(0x7ff8dead0000beef), "Sub": -5e-324},
		{}, // no properties at all: an empty, non-nil map on both backends
	}
	out := make([]store.Entity, len(props))
	for i, p := range props {
		out[i] = store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%02d", i), Properties: p}
	}
	return out
}

// doubleBits stands for a float64 in a compared entity, so that the
// comparison is bit for bit (reflect.DeepEqual finds -0 equal to 0 and a
// NaN unequal to itself).
type doubleBits uint64

// normalize clears what differs by design between backends (ETag and
// Timestamp) and replaces every Double by its bits.
func normalize(es []store.Entity) []store.Entity {
	out := make([]store.Entity, len(es))
	for i, e := range es {
		c := e.Clone()
		c.ETag, c.Timestamp = "", time.Time{}
		for k, v := range c.Properties {
			if f, ok := v.(float64); ok {
				c.Properties[k] = doubleBits(math.Float64bits(f))
			}
		}
		out[i] = c
	}
	return out
}

// readBack writes the entities to a fresh table of st and reads them back
// by Get and by Query.
func readBack(t *testing.T, st store.Store, table string, in []store.Entity) (gets, query []store.Entity) {
	t.Helper()
	ctx := t.Context()
	if err := st.CreateTable(ctx, table); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(ctx, table) })
	tbl := st.Table(table)
	for _, e := range in {
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatalf("Insert %s: %v", e.RowKey, err)
		}
		got, err := tbl.Get(ctx, e.PartitionKey, e.RowKey, nil)
		if err != nil {
			t.Fatalf("Get %s: %v", e.RowKey, err)
		}
		gets = append(gets, got)
	}
	page, err := tbl.Query(ctx, store.Query{})
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	return gets, page.Entities
}

// TestRoundTripMatchesMemstore proves every EDM type survives Azurite
// exactly as it survives memstore: the same Go values, types and bytes.
func TestRoundTripMatchesMemstore(t *testing.T) {
	az := azuriteStore(t)
	in := edgeEntities()
	name := fmt.Sprintf("roundtrip%d", time.Now().UnixNano()%1e9)
	memGets, memQuery := readBack(t, memstore.New(), name, in)
	azGets, azQuery := readBack(t, az, name, in)
	want := normalize(in)
	for i := range want {
		// Every backend stores DateTime at 100 ns precision in UTC, a
		// negative zero as 0 and one NaN.
		props := make(map[string]any, len(in[i].Properties))
		for k, v := range in[i].Properties {
			switch x := v.(type) {
			case time.Time:
				v = store.NormalizeTime(x)
			case float64:
				v = store.NormalizeDouble(x)
			}
			props[k] = v
		}
		want[i].Properties = normalize([]store.Entity{{Properties: props}})[0].Properties
	}
	for _, c := range []struct {
		what     string
		mem, azr []store.Entity
	}{{"Get", memGets, azGets}, {"Query", memQuery, azQuery}} {
		m, a := normalize(c.mem), normalize(c.azr)
		if !reflect.DeepEqual(m, a) {
			for i := range m {
				if i < len(a) && !reflect.DeepEqual(m[i], a[i]) {
					t.Errorf("%s %s: memstore %#v\nazstore %#v", c.what, m[i].RowKey, m[i].Properties, a[i].Properties)
				}
			}
			if len(m) != len(a) {
				t.Errorf("%s: memstore %d entities, azstore %d", c.what, len(m), len(a))
			}
		}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%s: memstore does not return what was written", c.what)
		}
	}
}
