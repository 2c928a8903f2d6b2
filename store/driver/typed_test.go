package driver

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// plainTable has the Entity lane only; typedTable adds the typed lane.
type plainTable struct{ store.Table }

type typedTable struct{ store.TypedTable }

// hiding embeds a typed table in a wrapper that declares only Table's
// methods: the mistake Typed's doc warns of.
type hiding struct{ store.Table }

func TestTyped(t *testing.T) {
	var tt typedTable
	if got, ok := Typed(tt); !ok || got != store.TypedTable(tt) {
		t.Errorf("Typed of a typed table = %v, %v", got, ok)
	}
	if _, ok := Typed(plainTable{}); ok {
		t.Error("Typed found a lane on a table without one")
	}
	if _, ok := Typed(hiding{tt}); ok {
		t.Error("Typed found a lane through a wrapper that hides it")
	}
	if _, ok := Typed(nil); ok {
		t.Error("Typed found a lane on a nil table")
	}
}

func TestReadEntityIntoBuilder(t *testing.T) {
	e := store.Entity{
		PartitionKey: "p", RowKey: "r", ETag: `W/"1"`,
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Properties: map[string]any{
			"S": "s", "B": []byte{1}, "T": true, "I": int32(2), "L": int64(3), "D": 4.5,
			"W": time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), "G": store.GUID{7},
		},
	}
	var b EntityBuilder
	if err := ReadEntity(&e, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Entity, e) {
		t.Errorf("built %+v, want %+v", b.Entity, e)
	}
}

// rows is a Table whose Get answers from a map (a missing key is
// ResourceNotFound) and whose other methods are not used by Settle.
type rows struct {
	store.Table
	m map[string]store.Entity
}

func (r rows) Name() string { return "T" }

func (r rows) Get(_ context.Context, pk, rk string, _ *store.GetOptions) (store.Entity, error) {
	if e, ok := r.m[pk+"/"+rk]; ok {
		return e, nil
	}
	return store.Entity{}, store.Errorf(store.CodeResourceNotFound, 404, "no entity")
}
