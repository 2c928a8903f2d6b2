package mapper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// benchEmployee is the 10-field struct: strings, int32, int64,
// float64, bool, time.Time and []byte. The json tags let encoding/json
// read the same wire bytes (Int64 travels as a string).
type benchEmployee struct {
	Dept   string    `table:",pk" json:"PartitionKey"`
	ID     string    `table:",rk" json:"RowKey"`
	Name   string    `json:"Name"`
	Email  string    `json:"Email"`
	Age    int32     `json:"Age"`
	Salary int64     `json:"Salary,string"`
	Rating float64   `json:"Rating"`
	Active bool      `json:"Active"`
	Hired  time.Time `json:"Hired"`
	Photo  []byte    `json:"Photo"`
}

func benchValue() benchEmployee {
	return benchEmployee{
		Dept: "Sales", ID: "000123", Name: "Don Hall", Email: "don.hall@contoso.com",
		Age: 34, Salary: 9_876_543_210, Rating: 4.25, Active: true,
		Hired: time.Date(2019, 7, 1, 9, 30, 0, 123456700, time.UTC),
		Photo: []byte("0123456789abcdef0123456789abcdef"),
	}
}

// benchEntity is the same values as a store.Entity built by hand: the
// baseline for the allocations of Encode.
func benchEntity(v *benchEmployee) store.Entity {
	return store.Entity{PartitionKey: v.Dept, RowKey: v.ID, Properties: map[string]any{
		"Name": v.Name, "Email": v.Email, "Age": v.Age, "Salary": v.Salary,
		"Rating": v.Rating, "Active": v.Active, "Hired": v.Hired, "Photo": v.Photo,
	}}
}

func BenchmarkEncodeWire(b *testing.B) {
	v := benchValue()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendJSON(buf[:0], &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeAztablesEDMEntity(b *testing.B) {
	v := benchValue()
	b.ReportAllocs()
	for b.Loop() {
		e := aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: v.Dept, RowKey: v.ID},
			Properties: map[string]any{
				"Name": v.Name, "Email": v.Email, "Age": v.Age, "Salary": aztables.EDMInt64(v.Salary),
				"Rating": v.Rating, "Active": v.Active, "Hired": aztables.EDMDateTime(v.Hired),
				"Photo": aztables.EDMBinary(v.Photo),
			},
		}
		if _, err := json.Marshal(e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeJSONStruct(b *testing.B) {
	v := benchValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchWire(b testing.TB) []byte {
	v := benchValue()
	data, err := AppendJSON(nil, &v)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkDecodeWire(b *testing.B) {
	data := benchWire(b)
	var v benchEmployee
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeJSON(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJSONStruct(b *testing.B) {
	data := benchWire(b)
	var v benchEmployee
	b.ReportAllocs()
	for b.Loop() {
		v = benchEmployee{}
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEntity(b *testing.B) {
	v := benchValue()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(&v); err != nil {
			b.Fatal(err)
		}
	}
}

// entitySink keeps the hand-built entity on the heap, as a returned one is.
var entitySink store.Entity

func BenchmarkEntityByHand(b *testing.B) {
	v := benchValue()
	b.ReportAllocs()
	for b.Loop() {
		entitySink = benchEntity(&v)
	}
}

func BenchmarkDecodeEntity(b *testing.B) {
	v := benchValue()
	e := benchEntity(&v)
	var out benchEmployee
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(e, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodecPaths measures, interleaved (internal/interleave), the
// encoding and decoding the Repository's Insert and Get do over azstore,
// against encoding/json on the same struct and aztables' EDMEntity:
//
//   - the Insert path: wire.AppendSource, which checks every rule of the
//     service (store.WriteSource) while it writes the annotated JSON body;
//   - the Get path: wire.ReadEntity of the service's answer straight into
//     the struct.
//
// Run it with
//
//	go test -run '^$' -bench CodecPaths -benchtime 1x ./mapper/
func BenchmarkCodecPaths(b *testing.B) {
	v := benchValue()
	c, err := codecFor(reflect.TypeFor[benchEmployee]())
	if err != nil {
		b.Fatal(err)
	}
	rv := reflect.ValueOf(&v).Elem()
	src := source{c, rv}
	buf := make([]byte, 0, 1024)
	enc, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: 30 * time.Millisecond},
		interleave.Case{Name: "json.Marshal(struct)", Op: func(int) error {
			_, err := json.Marshal(&v)
			return err
		}},
		interleave.Case{Name: "Insert-path(wire.AppendSource)", Op: func(int) error {
			var err error
			buf, err = wire.AppendSource(buf[:0], v.Dept, v.ID, src, false)
			return err
		}},
		interleave.Case{Name: "json.Marshal(EDMEntity)", Op: func(int) error {
			_, err := json.Marshal(edmOf(&v))
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s encode\n%s\n", b.Name(), enc.Table())
	data := benchWire(b)
	// EDMEntity ignores an Edm.Double annotation (the value comes back
	// nil): it gets the bytes without it, as the service sends a Double
	// with a fraction.
	edmData := bytes.Replace(data, []byte(`"Rating@odata.type":"Edm.Double",`), nil, 1)
	var out benchEmployee
	outv := reflect.ValueOf(&out).Elem()
	dec, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: 30 * time.Millisecond},
		interleave.Case{Name: "json.Unmarshal(struct)", Op: func(int) error {
			out = benchEmployee{}
			return json.Unmarshal(data, &out)
		}},
		interleave.Case{Name: "Get-path(wire.ReadEntity)", Op: func(int) error {
			rd := newReader(c, outv)
			if err := wire.ReadEntity(data, rd); err != nil {
				return err
			}
			return rd.finish()
		}},
		interleave.Case{Name: "json.Unmarshal(EDMEntity)", Op: func(int) error {
			var e aztables.EDMEntity
			if err := json.Unmarshal(edmData, &e); err != nil {
				return err
			}
			return fromEDM(&e, &out)
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s decode\n%s\n", b.Name(), dec.Table())
	enc.Metrics(b.ReportMetric)
	dec.Metrics(b.ReportMetric)
}
