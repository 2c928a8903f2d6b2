package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// rawSource writes whatever it is told, in the order given: a source that
// breaks the rules the mapper's own checks would have caught.
type rawSource []func(w store.PropertyWriter) error

func (s rawSource) WriteProperties(w store.PropertyWriter) error {
	for _, f := range s {
		if err := f(w); err != nil {
			return err
		}
	}
	return nil
}

func pname(t *testing.T, s string) store.PropertyName {
	t.Helper()
	n, err := store.NewPropertyName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Every rule of the service holds on the typed lane (store.TypedTable), on
// both backends, for single writes and transactions: a source that breaks
// one is refused with the code an Entity breaking it gets, before
// anything is written.
func TestTypedLaneEnforcesTheRules(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "TypedRules")
		tt, ok := driver.Typed(b.Store.Table(name))
		if !ok {
			t.Fatalf("%s: the table is not a store.TypedTable", b.Name)
		}
		a, z := pname(t, "A"), pname(t, "Z")
		many := rawSource{}
		for i := range store.MaxCustomProperties + 1 {
			n := pname(t, fmt.Sprintf("P%03d", i))
			many = append(many, func(w store.PropertyWriter) error { return w.Int32(n, 1) })
		}
		big := strings.Repeat("x", store.MaxStringUnits)
		huge := rawSource{}
		for i := range 40 {
			n := pname(t, fmt.Sprintf("S%02d", i))
			huge = append(huge, func(w store.PropertyWriter) error { return w.String(n, big) })
		}
		cases := []struct {
			what string
			pk   string
			src  store.PropertySource
			code string
		}{
			{"invalid UTF-8", "p", rawSource{func(w store.PropertyWriter) error { return w.String(a, "bad \xff") }}, store.CodeInvalidInput},
			{"string too long", "p", rawSource{func(w store.PropertyWriter) error { return w.String(a, big+"x") }}, store.CodePropertyValueTooLarge},
			{"binary too long", "p", rawSource{func(w store.PropertyWriter) error { return w.Binary(a, make([]byte, store.MaxBinaryBytes+1)) }}, store.CodePropertyValueTooLarge},
			{"DateTime out of range", "p", rawSource{func(w store.PropertyWriter) error { return w.Time(a, time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)) }}, store.CodeOutOfRangeInput},
			{"names out of order", "p", rawSource{func(w store.PropertyWriter) error { return w.Int32(z, 1) }, func(w store.PropertyWriter) error { return w.Int32(a, 1) }}, store.CodeInvalidInput},
			{"name twice", "p", rawSource{func(w store.PropertyWriter) error { return w.Int32(a, 1) }, func(w store.PropertyWriter) error { return w.Bool(a, true) }}, store.CodeInvalidInput},
			{"zero PropertyName", "p", rawSource{func(w store.PropertyWriter) error { return w.Int32(store.PropertyName{}, 1) }}, store.CodePropertyNameInvalid},
			{"253 properties", "p", many, store.CodeTooManyProperties},
			{"entity over 1 MiB", "p", huge, store.CodeEntityTooLarge},
			{"bad key", "p/q", rawSource{func(w store.PropertyWriter) error { return w.Int32(a, 1) }}, store.CodeOutOfRangeInput},
		}
		for _, c := range cases {
			act := store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: c.pk, RowKey: "r"}, Source: c.src}
			_, err := tt.Write(ctx, act)
			if store.Code(err) != c.code || store.SourceOf(err) != store.SourceClient {
				t.Errorf("%s: Write: %v (code %q), want %s from the client", c.what, err, store.Code(err), c.code)
			}
			ok := store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: c.pk, RowKey: "ok"}}
			ok.Entity.Properties = map[string]any{"A": int32(1)}
			_, err = tt.Transact(ctx, []store.Action{ok, act})
			want := c.code
			if c.what == "bad key" {
				want = store.CodeInvalidInput // the service's code inside a batch
			}
			if store.Code(err) != want || store.Index(err) != 1 && c.what != "bad key" {
				t.Errorf("%s: Transact: %v (code %q, index %d), want %s at action 1", c.what, err, store.Code(err), store.Index(err), want)
			}
		}
		page, err := tt.Query(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d refusals checked twice (Write, Transact); rows written %d", b.Name, len(cases), len(page.Entities))
		if len(page.Entities) != 0 {
			t.Fatalf("%d rows were written", len(page.Entities))
		}
	})
}

// A transaction of typed actions is held to the service's 4 MiB body
// limit by what its sources write, on both backends, and a refusal of a
// replace or an upsert that replaces leaves the stored row as it was.
func TestTypedLaneTransactionLimits(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "TypedLimits")
		tt := b.Store.Table(name).(store.TypedTable)
		big := strings.Repeat("x", 32_000)
		fat := rawSource{} // 14 strings: about 0.9 MB by the size formula, 0.45 MB of body
		for i := range 14 {
			n := pname(t, fmt.Sprintf("S%02d", i))
			fat = append(fat, func(w store.PropertyWriter) error { return w.String(n, big) })
		}
		var acts []store.Action
		for i := range 10 {
			acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%d", i)}, Source: fat})
		}
		_, err := tt.Transact(ctx, acts)
		if store.Code(err) != store.CodeRequestBodyTooLarge || store.Status(err) != 413 || store.SourceOf(err) != store.SourceClient {
			t.Errorf("10 entities of 0.45 MB of body: %v (code %q), want RequestBodyTooLarge (413) from the client", err, store.Code(err))
		}
		if _, err := tt.Transact(ctx, acts[:8]); err != nil {
			t.Fatalf("8 entities of 0.45 MB of body: %v", err)
		}
		a := pname(t, "A")
		bad := rawSource{func(w store.PropertyWriter) error { return w.String(a, "bad \xff") }}
		for _, kind := range []store.ActionKind{store.ActionUpdateReplace, store.ActionUpsertReplace, store.ActionUpdateMerge, store.ActionUpsertMerge} {
			act := store.Action{Kind: kind, Entity: store.Entity{PartitionKey: "p", RowKey: "r0"}, Source: bad, IfMatch: store.ETagAny}
			if _, err := tt.Write(ctx, act); store.Code(err) != store.CodeInvalidInput {
				t.Errorf("%s with invalid UTF-8: %v, want InvalidInput", kind, err)
			}
			if _, err := tt.Transact(ctx, []store.Action{act}); store.Code(err) != store.CodeInvalidInput || store.Index(err) != 0 {
				t.Errorf("%s with invalid UTF-8 in a transaction: %v, want InvalidInput at action 0", kind, err)
			}
		}
		e, err := tt.Get(ctx, "p", "r0", nil)
		if err != nil || e.Properties["S13"] != big || len(e.Properties) != 14 {
			t.Fatalf("row r0 after the refusals: %d properties, %v; want the 14 strings as written", len(e.Properties), err)
		}
		t.Logf("%s: 10 x 0.45 MB refused (413), 8 x 0.45 MB written, 8 refused replaces and merges left r0 as written", b.Name)
	})
}
