package mapper

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit/store"
)

type keyed struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

// Each refused struct type gets a *mapper.Error at first use that names
// the field and says what is wrong.
func TestTagErrors(t *testing.T) {
	type badOpt struct {
		keyed
		A string `table:"A,omitemtpy"`
	}
	type twoRoles struct {
		keyed
		A string `table:",pk,rk"`
	}
	type badName struct {
		keyed
		A string `table:"1st"`
	}
	type reserved struct {
		keyed
		A string `table:"Timestamp"`
	}
	type intPK struct {
		PK int    `table:",pk"`
		RK string `table:",rk"`
	}
	type noRK struct {
		PK string `table:",pk"`
	}
	type noKeys struct{ A string }
	type badETag struct {
		keyed
		E int `table:",etag"`
	}
	type badTS struct {
		keyed
		T string `table:",timestamp"`
	}
	type badExtra struct {
		keyed
		X map[string]string `table:",extra"`
	}
	type structField struct {
		keyed
		N Nested
	}
	type sliceField struct {
		keyed
		L []int
	}
	type ptrPtr struct {
		keyed
		P **int
	}
	type iface struct {
		keyed
		V any
	}
	type complexF struct {
		keyed
		C complex128
	}
	type chanJSON struct {
		keyed
		C chan int `table:",json"`
	}
	type chanField struct {
		keyed
		C chan int
	}
	type funcField struct {
		keyed
		F func() error
	}
	type mapField struct {
		keyed
		M map[string]int
	}
	type arrayField struct {
		keyed
		A [4]byte
	}
	type unsafeField struct {
		keyed
		U unsafe.Pointer
	}
	type funcJSON struct {
		keyed
		F func() `table:",json"`
	}
	type pkJSON struct {
		PK string `table:",pk,json"`
		RK string `table:",rk"`
	}
	type halfText struct {
		keyed
		H onlyMarshal
	}
	type halfCustom struct {
		keyed
		H onlyProp
	}
	cases := []struct {
		v     any
		field string
		want  string
	}{
		{badOpt{}, "A", `unknown tag option "omitemtpy"`},
		{twoRoles{}, "A", `"pk" and "rk" conflict`},
		{badName{}, "A", `invalid property name "1st"`},
		{reserved{}, "A", `"Timestamp"`},
		{intPK{}, "PK", "string kind, not int"},
		{noRK{}, "", "no RowKey"},
		{noKeys{}, "", "no PartitionKey"},
		{badETag{}, "E", "etag field"},
		{badTS{}, "T", "timestamp field must be time.Time"},
		{badExtra{}, "X", "map[string]any"},
		{structField{}, "N", "add the tag option json"},
		{sliceField{}, "L", "add the tag option json"},
		{ptrPtr{}, "P", "one level of pointer"},
		{iface{}, "V", "concrete type"},
		{complexF{}, "C", "unsupported type complex128"},
		{chanJSON{}, "C", "cannot be stored as JSON"},
		{chanField{}, "C", "unsupported type chan int"},
		{funcField{}, "F", "unsupported type func() error"},
		{mapField{}, "M", "map[string]int: add the tag option json"},
		{arrayField{}, "A", "[4]uint8: add the tag option json"},
		{unsafeField{}, "U", "unsupported type unsafe.Pointer"},
		{funcJSON{}, "F", "func() cannot be stored as JSON"},
		{recursive{}, "Next", "unsupported type mapper.recursive: add the tag option json"},
		{pkJSON{}, "PK", "json cannot go with"},
		{halfText{}, "H", "not implement encoding.TextUnmarshaler"},
		{halfCustom{}, "H", "not implement UnmarshalTableProperty"},
		{&keyedMethodTagged{}, "PK", "computes its keys with TableKeys"},
		{42, "", "want a struct"},
	}
	for _, c := range cases {
		_, err := Encode(c.v)
		var me *Error
		if !errors.As(err, &me) {
			t.Errorf("%T: got %v, want *mapper.Error", c.v, err)
			continue
		}
		if me.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: error %q (field %q), want field %q and %q", c.v, err, me.Field, c.field, c.want)
		}
		// The error is cached: the second use reports the same.
		if _, err2 := Encode(c.v); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%T: second use gave %v", c.v, err2)
		}
	}
}

// recursive refers to itself through a pointer field: refused like any
// struct field without the json option, never followed forever.
type recursive struct {
	keyed
	Next *recursive
}

type onlyMarshal struct{}

func (onlyMarshal) MarshalText() ([]byte, error) { return nil, nil }

type onlyProp struct{}

func (onlyProp) MarshalTableProperty() (any, error) { return nil, nil }

type keyedMethodTagged struct {
	PK string `table:",pk"`
}

func (k *keyedMethodTagged) TableKeys() (string, string, error) { return k.PK, "", nil }

// Embedded struct conflicts follow encoding/json: the shallower field
// wins, and a single tagged field wins at equal depth.
func TestEmbeddedDominance(t *testing.T) {
	type A struct {
		Name  string
		Tagd  string `table:"Tagd"`
		Inner string
	}
	type B struct {
		Tagd string
	}
	type outer struct {
		keyed
		A
		B
		Name string
	}
	c, err := codecFor(reflect.TypeFor[outer]())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range c.fields {
		got = append(got, f.name+"="+f.goPath)
	}
	want := []string{"Tagd=A.Tagd", "Inner=A.Inner", "Name=Name"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
}

// Where encoding/json would drop a conflicting name silently (and the
// mapper would lose its data), the mapper refuses the type.
func TestEmbeddedConflictIsAnError(t *testing.T) {
	type A struct{ Both string }
	type B struct{ Both string }
	type untagged struct {
		keyed
		A
		B
	}
	type TA struct {
		X string `table:"Both"`
	}
	type TB struct {
		Y string `table:"Both"`
	}
	type tagged struct {
		keyed
		TA
		TB
	}
	type twoPK struct {
		P1 string `table:",pk"`
		P2 string `table:",pk"`
		RK string `table:",rk"`
	}
	for _, c := range []struct {
		v          any
		field, msg string
	}{
		{untagged{}, "B.Both", `property "Both" is claimed by both A.Both and B.Both`},
		{tagged{}, "TB.Y", `property "Both" is claimed by both TA.X and TB.Y`},
		{twoPK{}, "P2", "the pk role is claimed by both P1 and P2"},
	} {
		_, err := Encode(c.v)
		var me *Error
		if !errors.As(err, &me) || me.Field != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%T: %v", c.v, err)
		}
	}
}

func TestSystemNamesInferRoles(t *testing.T) {
	type plain struct {
		PartitionKey string
		RowKey       string
		Timestamp    time.Time
		ETag         string
		Value        int32
	}
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	var p plain
	if err := Decode(store.Entity{PartitionKey: "a", RowKey: "b", Timestamp: ts, ETag: "W/\"e\"",
		Properties: map[string]any{"Value": int32(3)}}, &p); err != nil {
		t.Fatal(err)
	}
	if p != (plain{"a", "b", ts, `W/"e"`, 3}) {
		t.Fatalf("decoded %+v", p)
	}
	e, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Properties) != 1 || e.PartitionKey != "a" || e.RowKey != "b" {
		t.Fatalf("encoded %+v", e)
	}
}

func TestCodecCachedOnceConcurrently(t *testing.T) {
	type fresh struct {
		keyed
		A int
	}
	typ := reflect.TypeFor[fresh]()
	var wg sync.WaitGroup
	got := make([]*codec, 8)
	for i := range got {
		wg.Go(func() {
			c, err := codecFor(typ)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	for _, c := range got[1:] {
		if c != got[0] {
			t.Fatal("codecFor returned different codecs for one type")
		}
	}
}

type inner struct{ Secret, Shown string }

// Exported fields of an unexported embedded struct are mapped, as
// encoding/json does.
func TestUnexportedEmbedded(t *testing.T) {
	type outer struct {
		keyed
		inner
		*hidden
	}
	v := outer{keyed: keyed{"p", "r"}, inner: inner{"s", "x"}}
	e, err := Encode(&v)
	if err != nil {
		t.Fatal(err)
	}
	if e.Properties["Secret"] != "s" || e.Properties["Shown"] != "x" || e.PartitionKey != "p" {
		t.Fatalf("encoded %+v", e)
	}
	var back outer
	if err := Decode(e, &back); err != nil || back.inner != v.inner {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	// A nil unexported embedded pointer cannot be allocated: an error, not a panic.
	e.Properties["H"] = "h"
	err = Decode(e, &back)
	var me *Error
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "unexported") {
		t.Fatalf("decode into a nil unexported embedded pointer: %v", err)
	}
}

type hidden struct{ H string }

// An explicit role tag wins over a field whose name infers the same role.
func TestTaggedRoleWinsOverInferred(t *testing.T) {
	type v struct {
		PartitionKey string
		RowKey       string
		ETag         string
		Version      store.ETag `table:",etag"`
	}
	var got v
	if err := Decode(store.Entity{ETag: `W/"7"`}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != `W/"7"` || got.ETag != "" {
		t.Fatalf("decoded %+v", got)
	}
}

// CycleA and CycleB embed each other by pointer.
type CycleA struct {
	keyed
	*CycleB
}

// CycleB embeds CycleA, closing the cycle.
type CycleB struct {
	X int32
	*CycleA
}

// node is a linked list, stored as JSON by withList.
type node struct{ Next *node }

type withList struct {
	keyed
	Head *node `table:",json"`
}

// Recursive types neither hang nor panic: an embedded pointer cycle is
// followed once, and a cyclic value stored as JSON is an error naming the
// field.
func TestRecursiveTypes(t *testing.T) {
	in := CycleA{keyed: keyed{"p", "r"}, CycleB: &CycleB{X: 7}}
	e, err := Encode(&in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Properties, map[string]any{"X": int32(7)}) {
		t.Fatalf("encoded %#v", e.Properties)
	}
	var out CycleA
	if err := Decode(e, &out); err != nil || out.CycleB == nil || out.X != 7 || out.CycleA != nil {
		t.Fatalf("decoded %+v, %v", out, err)
	}
	n := &node{}
	n.Next = n
	_, err = Encode(&withList{Head: n})
	var me *Error
	if !errors.As(err, &me) || me.Field != "Head" || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cyclic JSON value: %v", err)
	}
}
