package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
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
		tt, ok := b.Store.Table(name).(store.TypedTable)
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
