package mapper

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// KeyPair holds the keys; exported, so that a nil *KeyPair can be allocated.
type KeyPair struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

// keysBehindPointer has its key fields in an embedded pointer.
type keysBehindPointer struct {
	*KeyPair
	A string
}

// kperson is a person declaring its kind for a property registry.
type kperson person

func (kperson) TableKind() Kind { return Kind{Property: "Kind", Value: "person"} }

// Nil values are refused with an error, never a panic, by every entry
// point that takes a value.
func TestNilValuesRefused(t *testing.T) {
	ctx := context.Background()
	r, st := newRepo[person](t)
	reg, err := NewPropertyRegistry("Kind")
	if err != nil {
		t.Fatal(err)
	}
	if err := Register[kperson](reg, "person"); err != nil {
		t.Fatal(err)
	}
	var nilPerson *person
	cases := map[string]error{
		"Encode(nil)":                 errOf(Encode(nil)),
		"Encode(nil *T)":              errOf(Encode(nilPerson)),
		"AppendJSON(nil)":             errOf(AppendJSON(nil, nil)),
		"Repository.Insert":           r.Insert(ctx, nil),
		"Repository.Update":           r.Update(ctx, nil, store.Merge),
		"Repository.UpdateUncond":     r.UpdateUnconditional(ctx, nil, store.Merge),
		"Repository.Upsert":           r.Upsert(ctx, nil, store.Merge),
		"Repository.Delete":           r.Delete(ctx, nil),
		"Partition.Insert":            r.Partition("d").Insert(ctx, nil),
		"Batch.Insert":                r.Batch().Insert(nil),
		"Batch.Delete":                r.Batch().Delete(nil),
		"Registry.Encode(nil)":        errOf(reg.Encode(nil)),
		"Registry.Insert(nil *T)":     reg.Insert(ctx, st.Table("People"), nilPerson),
		"MixedBatch.Insert(nil)":      reg.Batch(st.Table("People")).Insert(nil),
		"MixedBatch.Upsert(nil *T)":   reg.Batch(st.Table("People")).Upsert(nilPerson, store.Merge),
		"MixedBatch.Insert(non-ptr)":  reg.Batch(st.Table("People")).Insert(person{}),
		"Decode into nil *T":          Decode(store.Entity{}, nilPerson),
		"keys in a nil embedded *T":   errOf(Encode(keysBehindPointer{A: "a"})),
		"Partition of a nil embedded": NewRepository[keysBehindPointer](st, "People").Partition("p").Insert(ctx, &keysBehindPointer{}),
	}
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "mapper: ") || strings.Contains(msg, ": :") ||
			(!strings.Contains(msg, "nil") && !strings.Contains(msg, "pointer")) {
			t.Errorf("%s: %q does not say what is wrong", name, msg)
		}
	}
	// A nil embedded pointer holding the keys is allocated on decode.
	var v keysBehindPointer
	if err := Decode(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": "a"}}, &v); err != nil ||
		v.KeyPair == nil || v.PK != "p" || v.RK != "r" || v.A != "a" {
		t.Fatalf("decoded %+v, %v", v, err)
	}
}

func errOf[T any](_ T, err error) error { return err }
