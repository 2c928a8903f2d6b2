package mapper

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

type employee struct {
	Dept     string     `table:",pk"`
	ID       string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	Name     string
	Age      int32
	Salary   int64 `table:"Pay"`
	Rating   float64
	Active   bool
	Hired    time.Time
	Photo    []byte `table:",omitempty"`
	internal string
	Skip     string `table:"-"`
}

func TestEncodeTypesAndNames(t *testing.T) {
	hired := time.Date(2020, 3, 4, 5, 6, 7, 123456789, time.FixedZone("x", 3600))
	e, err := Encode(&employee{Dept: "Sales", ID: "42", ETag: `W/"x"`, Name: "Ann", Age: 30, Salary: 1 << 40,
		Rating: 4.5, Active: true, Hired: hired, internal: "no", Skip: "no"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Entity{PartitionKey: "Sales", RowKey: "42", Properties: map[string]any{
		"Name": "Ann", "Age": int32(30), "Pay": int64(1 << 40), "Rating": 4.5, "Active": true,
		"Hired": time.Date(2020, 3, 4, 4, 6, 7, 123456700, time.UTC),
	}}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("Encode:\n got %#v\nwant %#v", e, want)
	}
}

func TestDecodeSetsMetaAndZeroesMissing(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	e := store.Entity{PartitionKey: "p", RowKey: "r", ETag: `W/"1"`, Timestamp: ts,
		Properties: map[string]any{"S": "x", "I": int32(7), "Unknown": "u"}}
	v := AllTypes{I64: 99, Base: Base{Owner: "stale"}}
	if err := Decode(e, &v); err != nil {
		t.Fatal(err)
	}
	if v.PK != "p" || v.RK != "r" || v.ETag != `W/"1"` || !v.When.Equal(ts) || v.S != "x" || v.I != 7 {
		t.Fatalf("decoded %+v", v)
	}
	if v.I64 != 0 || v.Owner != "" {
		t.Fatalf("missing properties must leave the zero value: I64=%d Owner=%q", v.I64, v.Owner)
	}
	if v.Extra != nil {
		t.Fatalf("embedded pointer allocated without any of its properties: %+v", v.Extra)
	}
}

func TestZeroTimeAndNilAreNotStored(t *testing.T) {
	e, err := Encode(AllTypes{PK: "p", RK: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"T", "ND", "PND", "Bin", "PS", "PT", "PG", "Note", "Score", "JS", "JP", "Created", "PTxt", "PC"} {
		if v, ok := e.Properties[name]; ok {
			t.Errorf("property %s stored as %#v, want absent", name, v)
		}
	}
	// Zero values of the other kinds are stored: a 0 is data.
	for name, want := range map[string]any{"S": "", "I": int64(0), "I32": int32(0), "U8": int32(0), "U32": int64(0),
		"F32": 0.0, "B": false, "G": store.GUID{}, "A16": store.GUID{}, "Txt": "0;0", "Cust": int64(0), "JMap": nil} {
		got, ok := e.Properties[name]
		if want == nil {
			if ok {
				t.Errorf("%s: nil map stored as %#v", name, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v (present %v), want %#v", name, got, ok, want)
		}
	}
	if got := e.Properties["J"]; got != `{"Name":"","Items":null}` {
		t.Errorf("J = %#v", got)
	}
}

func TestEmbeddedPointerRoundTrip(t *testing.T) {
	n := int64(-5)
	in := AllTypes{PK: "p", RK: "r", Extra: &Extra{Note: "hi", Score: &n}}
	e, err := Encode(&in)
	if err != nil {
		t.Fatal(err)
	}
	if e.Properties["Note"] != "hi" || e.Properties["Score"] != int64(-5) {
		t.Fatalf("embedded pointer fields not flattened: %#v", e.Properties)
	}
	var out AllTypes
	if err := Decode(e, &out); err != nil {
		t.Fatal(err)
	}
	if out.Extra == nil || out.Note != "hi" || *out.Score != -5 {
		t.Fatalf("decoded %+v", out.Extra)
	}
}

func TestDecodeLenient(t *testing.T) {
	type wide struct {
		PK  string `table:",pk"`
		RK  string `table:",rk"`
		A   int64
		B   float64
		C   float32
		D   uint64
		E   int
		F   *int64
		G   float64
		Raw string
	}
	e := store.Entity{Properties: map[string]any{"A": int32(-7), "B": int32(1 << 30), "C": int64(1 << 24),
		"D": int32(12), "E": int32(math.MinInt32), "F": int32(3), "G": int64(1 << 53), "Raw": nil}}
	var v wide
	if err := Decode(e, &v); err != nil {
		t.Fatal(err)
	}
	if v.A != -7 || v.B != 1<<30 || v.C != 1<<24 || v.D != 12 || v.E != math.MinInt32 || *v.F != 3 || v.G != 1<<53 {
		t.Fatalf("decoded %+v", v)
	}
}

func TestDecodeStrict(t *testing.T) {
	type narrow struct {
		PK  string `table:",pk"`
		RK  string `table:",rk"`
		I8  int8
		I16 int16
		Sm  int16 `table:"Small"`
		I32 int32
		U16 uint16
		U32 uint32
		F32 float32
		F64 float64
		S   string
		T   time.Time
		G   store.GUID
		B   bool
		Bin []byte
		Txt Point
		J   Nested `table:",json"`
		M   Money
	}
	cases := []struct {
		prop string
		val  any
		want []string // substrings of the message
	}{
		{"I32", int64(1 << 31), []string{"I32", "Edm.Int64", "2147483648", "overflows", "int32"}},
		{"I32", int64(math.MinInt32 - 1), []string{"-2147483649", "int32"}},
		{"I8", int32(128), []string{"Edm.Int32", "128", "int8"}},
		{"I16", int32(-32769), []string{"Edm.Int32", "-32769", "int16"}},
		{"I16", int64(1 << 15), []string{"Edm.Int64", "32768", "int16"}},
		{"U16", int32(-1), []string{"-1", "uint16"}},
		{"U16", int32(65536), []string{"65536", "uint16"}},
		{"U32", int64(1 << 32), []string{"4294967296", "uint32"}},
		{"F32", 1e39, []string{"1e+39", "float32"}},
		{"F32", int32(1<<24 + 1), []string{"16777217", "exactly", "float32"}},
		{"F64", int64(1<<53 + 1), []string{"9007199254740993", "exactly", "float64"}},
		{"I32", 1.5, []string{"Edm.Double", "int32"}},
		{"S", int32(1), []string{"Edm.Int32", "string"}},
		{"T", "2024-01-01", []string{"Edm.String", "time.Time"}},
		{"G", "0000", []string{"Edm.String", "GUID"}},
		{"B", int32(1), []string{"Edm.Int32", "bool"}},
		{"Bin", "AAAA", []string{"Edm.String", "[]uint8"}},
		{"S", []byte("x"), []string{"Edm.Binary", "string"}},
		{"S", store.GUID{}, []string{"Edm.Guid", "string"}},
		{"I8", time.Now(), []string{"Edm.DateTime", "int8"}},
		{"I8", true, []string{"Edm.Boolean", "int8"}},
		{"Txt", "nope", []string{"UnmarshalText", "nope"}},
		{"J", "{bad", []string{"JSON", "{bad"}},
		{"M", "x", []string{"UnmarshalTableProperty", "money"}},
		{"S", uint8(1), []string{"uint8", "not a store property type"}},
	}
	for _, c := range cases {
		var v narrow
		err := Decode(store.Entity{Properties: map[string]any{c.prop: c.val}}, &v)
		var me *Error
		if !errors.As(err, &me) {
			t.Errorf("%s=%#v: got %v, want a *mapper.Error", c.prop, c.val, err)
			continue
		}
		if me.Property != c.prop || me.Field != c.prop || me.Type != reflect.TypeFor[narrow]() {
			t.Errorf("%s=%#v: error names type %v field %q property %q", c.prop, c.val, me.Type, me.Field, me.Property)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s=%#v: error %q does not mention %q", c.prop, c.val, err, w)
			}
		}
	}
	// A renamed field's error names both the Go field and the property.
	var v narrow
	err := Decode(store.Entity{Properties: map[string]any{"Small": int64(40000)}}, &v)
	var me *Error
	if !errors.As(err, &me) || me.Field != "Sm" || me.Property != "Small" ||
		!strings.Contains(err.Error(), `narrow.Sm (property "Small")`) || !strings.Contains(err.Error(), "40000") {
		t.Errorf("renamed field: %v", err)
	}
}

func TestDecodeNeedsPointer(t *testing.T) {
	var v employee
	for _, target := range []any{v, nil, (*employee)(nil), new(int)} {
		err := Decode(store.Entity{}, target)
		var me *Error
		if !errors.As(err, &me) {
			t.Errorf("Decode into %T: got %v, want *mapper.Error", target, err)
		}
	}
}

func TestExtraKeepsUnknownProperties(t *testing.T) {
	type old struct {
		PK    string `table:",pk"`
		RK    string `table:",rk"`
		Name  string
		Other map[string]any `table:",extra"`
	}
	e := store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{
		"Name": "n", "Added": int64(5), "Blob": []byte{1, 2}, "When": time.Unix(0, 0).UTC()}}
	var o old
	if err := Decode(e, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Other) != 3 || o.Other["Added"] != int64(5) {
		t.Fatalf("extra = %#v", o.Other)
	}
	e.Properties["Blob"].([]byte)[0] = 9
	if o.Other["Blob"].([]byte)[0] != 1 {
		t.Fatal("extra []byte aliases the entity")
	}
	o.Name = "m"
	o.Other["Name"] = "shadowed" // a known property wins over extra
	back, err := Encode(&o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Name": "m", "Added": int64(5), "Blob": []byte{1, 2}, "When": time.Unix(0, 0).UTC()}
	if !reflect.DeepEqual(back.Properties, want) {
		t.Fatalf("re-encoded %#v, want %#v", back.Properties, want)
	}
	o.Other = map[string]any{"Bad": uint8(1)}
	if _, err := Encode(&o); err == nil || !strings.Contains(err.Error(), "Bad") || !strings.Contains(err.Error(), "uint8") {
		t.Fatalf("extra with an unsupported type: %v", err)
	}
	o.Other = map[string]any{"bad-name": "x"}
	if _, err := Encode(&o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "bad-name") {
		t.Fatalf("extra with an invalid name: %v", err)
	}
}
