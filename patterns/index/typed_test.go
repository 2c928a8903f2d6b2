package index_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// entityStore hands out tables without the typed lane: the Entity route.
type entityStore struct{ store.Store }

func (s entityStore) Table(name string) store.Table {
	return struct{ store.Table }{s.Store.Table(name)}
}

// badge has properties that sort before and after RefProperty (none may
// take its name: the mapper refuses names starting with Tk).
type badge struct {
	Site  string `table:",pk"`
	ID    string `table:",rk"`
	Age   int32
	Owner string
	Ref   string
	Zone  string
	Photo []byte
}

func (badge) TableKind() mapper.Kind { return mapper.Kind{Prefix: "b_"} }

// TestTypedInsertStoresWhatEntitiesStore: an insert on the typed lane
// (the struct as the source of the entity and of each copy) stores the
// rows the Entity route stores, full and projected copies alike.
func TestTypedInsertStoresWhatEntitiesStore(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		specs := []index.Spec[badge]{
			index.Unique[badge]("owner", func(v *badge) string { return v.Owner }),
			index.NonUnique[badge]("zone", func(v *badge) string { return v.Zone }).Project("Zone", "Age"),
			index.NonUnique[badge]("ref", func(v *badge) string { return v.Ref }).Project("Ref", "Zone"),
		}
		typedName, entityName := b.NewTable(t, "badgetyped"), b.NewTable(t, "badgeentity")
		typed, err := index.New[badge](b.Store, typedName, specs...)
		if err != nil {
			t.Fatal(err)
		}
		entity, err := index.New[badge](entityStore{b.Store}, entityName, specs...)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := driver.Typed(b.Store.Table(typedName)); !ok {
			t.Fatalf("%s: the typed table lacks the lane", b.Name)
		}
		vals := []badge{
			{Site: "s", ID: "b_1", Age: 30, Owner: "ann", Ref: "x", Zone: "north", Photo: []byte{1, 2}},
			{Site: "s", ID: "b_2", Age: 31, Owner: "bob", Zone: "south"},
			{Site: "s", ID: "b_3", Owner: "cy"},
		}
		for i := range vals {
			v1, v2 := vals[i], vals[i]
			if err := typed.Insert(ctx, &v1); err != nil {
				t.Fatal(err)
			}
			if err := entity.Insert(ctx, &v2); err != nil {
				t.Fatal(err)
			}
		}
		rows := func(name string) []store.Entity {
			var out []store.Entity
			for e, err := range store.All(ctx, b.Store.Table(name), store.Query{}) {
				if err != nil {
					t.Fatal(err)
				}
				if index.IsHeadKey(e.RowKey) {
					delete(e.Properties, "TkHeadWriters") // request ids, random on each route
				}
				out = append(out, store.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: e.Properties})
			}
			return out
		}
		got, want := rows(typedName), rows(entityName)
		if len(got) != 3+3+2+1+3 || !reflect.DeepEqual(got, want) { // entities, copies, heads
			t.Fatalf("typed lane stored %d rows:\n%v\nthe Entity route %d:\n%v", len(got), got, len(want), want)
		}
		for _, owner := range []string{"ann", "bob", "cy"} {
			v1, err1 := typed.Find(ctx, "s", "owner", owner)
			v2, err2 := entity.Find(ctx, "s", "owner", owner)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(v1, v2) || v1.Owner != owner || !strings.HasPrefix(v1.ID, "b_") {
				t.Fatalf("Find %q: typed lane %+v, %v; Entity route %+v, %v", owner, v1, err1, v2, err2)
			}
		}
		if _, err := typed.Find(ctx, "s", "owner", "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Find of a missing value: %v, want ErrNotFound", err)
		}
		// A row at a copy's key without the reference is not a copy.
		for _, name := range []string{typedName, entityName} {
			for _, r := range rows(name) {
				if strings.HasPrefix(r.RowKey, "owner") && r.Properties["Owner"] == "bob" {
					delete(r.Properties, index.RefProperty)
					if _, err := b.Store.Table(name).Upsert(ctx, r, store.Replace); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		_, err1 := typed.Find(ctx, "s", "owner", "bob")
		_, err2 := entity.Find(ctx, "s", "owner", "bob")
		if err1 == nil || err2 == nil || err1.Error() != err2.Error() || !strings.Contains(err1.Error(), "not an index copy") {
			t.Fatalf("Find of a row without a reference: typed lane %v; Entity route %v", err1, err2)
		}
		dup := badge{Site: "s", ID: "b_9", Owner: "ann"}
		if err := typed.Insert(ctx, &dup); !errors.Is(err, partition.ErrDuplicate) {
			t.Fatalf("a taken owner on the typed lane: %v, want partition.ErrDuplicate", err)
		}
		if n := len(rows(typedName)); n != len(want) {
			t.Fatalf("the refused insert left %d rows, want %d", n, len(want))
		}
		t.Logf("%s: %d rows equal on both routes; a duplicate refused with nothing written", b.Name, len(got))
	})
}
