package wire

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// benchEntity is a typical 10-property entity as the service returns it.
const benchEntity = `{"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A09.1234567Z'\"","PartitionKey":"customer-0042","RowKey":"order-000000123",` +
	`"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-06T07:08:09.1234567Z","Name":"Ada Lovelace","City":"London",` +
	`"Age":36,"Balance":1234.5,"Orders@odata.type":"Edm.Int64","Orders":"9876543210","Active":true,` +
	`"Since@odata.type":"Edm.DateTime","Since":"2019-01-02T03:04:05.0000000Z","Ref@odata.type":"Edm.Guid","Ref":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
	`"Note":"a short note about the order"}`

type benchRow struct {
	PartitionKey string    `json:"PartitionKey"`
	RowKey       string    `json:"RowKey"`
	Timestamp    time.Time `json:"Timestamp"`
	ETag         string    `json:"odata.etag"`
	Name         string    `json:"Name"`
	City         string    `json:"City"`
	Age          int32     `json:"Age"`
	Balance      float64   `json:"Balance"`
	Orders       int64     `json:"Orders,string"`
	Active       bool      `json:"Active"`
	Since        time.Time `json:"Since"`
	Ref          string    `json:"Ref"`
	Note         string    `json:"Note"`
}

// scanRow is what a compiled mapper decoder does: Scan plus accessors.
func scanRow(data []byte, r *benchRow) error {
	return Scan(data, func(p Property) error {
		var err error
		switch string(p.Name) {
		case "PartitionKey":
			r.PartitionKey, err = p.AsString()
		case "RowKey":
			r.RowKey, err = p.AsString()
		case "Timestamp":
			r.Timestamp, err = p.AsTime()
		case "odata.etag":
			r.ETag, err = p.AsString()
		case "Name":
			r.Name, err = p.AsString()
		case "City":
			r.City, err = p.AsString()
		case "Age":
			r.Age, err = p.AsInt32()
		case "Balance":
			r.Balance, err = p.AsDouble()
		case "Orders":
			r.Orders, err = p.AsInt64()
		case "Active":
			r.Active, err = p.AsBool()
		case "Since":
			r.Since, err = p.AsTime()
		case "Note":
			r.Note, err = p.AsString()
		}
		return err
	})
}

func TestScanRowMatchesJSON(t *testing.T) {
	var a, b benchRow
	if err := scanRow([]byte(benchEntity), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(benchEntity), &b); err != nil {
		t.Fatal(err)
	}
	b.Ref = ""
	if a != b {
		t.Errorf("Scan decoder\n%+v\njson.Unmarshal\n%+v", a, b)
	}
}

func BenchmarkDecodeScanStruct(b *testing.B) {
	data := []byte(benchEntity)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var r benchRow
	for b.Loop() {
		if err := scanRow(data, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJSONUnmarshalStruct(b *testing.B) {
	data := []byte(benchEntity)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var r benchRow
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEntity(b *testing.B) {
	data := []byte(benchEntity)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEntity(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJSONUnmarshalMap(b *testing.B) {
	data := []byte(benchEntity)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func benchStoreEntity() store.Entity {
	e, err := DecodeEntity([]byte(benchEntity))
	if err != nil {
		panic(err)
	}
	return e
}

func BenchmarkAppendEntity(b *testing.B) {
	e := benchStoreEntity()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendEntity(buf[:0], &e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendTypedProps(b *testing.B) {
	var r benchRow
	_ = scanRow([]byte(benchEntity), &r)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEntityStart(buf[:0], r.PartitionKey, r.RowKey)
		buf = AppendStringProp(buf, "Name", r.Name)
		buf = AppendStringProp(buf, "City", r.City)
		buf = AppendInt32Prop(buf, "Age", r.Age)
		buf = AppendDoubleProp(buf, "Balance", r.Balance)
		buf = AppendInt64Prop(buf, "Orders", r.Orders)
		buf = AppendBoolProp(buf, "Active", r.Active)
		buf = AppendTimeProp(buf, "Since", r.Since)
		buf = AppendStringProp(buf, "Note", r.Note)
		buf = AppendEntityEnd(buf)
	}
}

func BenchmarkJSONMarshalMap(b *testing.B) {
	e := benchStoreEntity()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(e.Properties); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScanDoesNotAllocate pins the promise of Scan's doc comment: walking
// an entity with a callback that keeps nothing allocates nothing.
func TestScanDoesNotAllocate(t *testing.T) {
	data := []byte(benchEntity)
	n := 0
	fn := func(p Property) error { n++; return nil }
	allocs := testing.AllocsPerRun(100, func() {
		if err := Scan(data, fn); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Scan allocates %.0f times per entity, want 0", allocs)
	}
	if n == 0 {
		t.Error("Scan delivered no property")
	}
}

// wideEntity returns an entity of n properties as the service returns it
// with minimal metadata: a quarter Int64 (annotated), a quarter whole
// Doubles (annotated) and the rest strings and Int32 (not).
func wideEntity(n int) []byte {
	b := []byte(`{"odata.etag":"W/\"datetime'2024-05-06T07%3A08%3A09.1234567Z'\"","PartitionKey":"p","RowKey":"r",` +
		`"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-06T07:08:09.1234567Z"`)
	for i := range n {
		name := fmt.Sprintf("P%03d", i)
		switch i % 4 {
		case 0:
			b = fmt.Appendf(b, `,"%s@odata.type":"Edm.Int64","%s":"%d"`, name, name, i)
		case 1:
			b = fmt.Appendf(b, `,"%s":"value %d"`, name, i)
		case 2:
			b = fmt.Appendf(b, `,"%s@odata.type":"Edm.Double","%s":%d.0`, name, name, i)
		default:
			b = fmt.Appendf(b, `,"%s":%d`, name, i)
		}
	}
	return append(b, '}')
}

// BenchmarkDecodeWide decodes an entity of 250 properties, as wide as the
// service allows, into a store.Entity: what a query page of wide rows
// costs per row.
func BenchmarkDecodeWide(b *testing.B) {
	data := wideEntity(250)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		e, err := DecodeEntity(data)
		if err != nil || len(e.Properties) != 250 {
			b.Fatal(len(e.Properties), err)
		}
	}
}
