package wire_test

import (
	"fmt"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// A caller that knows its fields writes an entity with no reflection.
func ExampleAppendEntityStart() {
	b := wire.AppendEntityStart(nil, "Sales", "0042")
	b = wire.AppendStringProp(b, "Name", "Ada")
	b = wire.AppendInt64Prop(b, "Orders", 7)
	b = wire.AppendDoubleProp(b, "Score", 1)
	b = wire.AppendTimeProp(b, "Since", time.Date(2019, 1, 2, 3, 4, 5, 0, time.UTC))
	b = wire.AppendEntityEnd(b)
	fmt.Println(string(b))
	// Output:
	// {"PartitionKey":"Sales","RowKey":"0042","Name":"Ada","Orders@odata.type":"Edm.Int64","Orders":"7","Score@odata.type":"Edm.Double","Score":1.0,"Since@odata.type":"Edm.DateTime","Since":"2019-01-02T03:04:05.0000000Z"}
}

// DecodeEntity reads a service response into store's Go types.
func ExampleDecodeEntity() {
	e, err := wire.DecodeEntity([]byte(`{"odata.etag":"W/\"1\"","PartitionKey":"Sales","RowKey":"0042",` +
		`"Orders@odata.type":"Edm.Int64","Orders":"7","Age":36,"Score":1.0}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(e.PartitionKey, e.RowKey, e.ETag)
	for _, k := range []string{"Orders", "Age", "Score"} {
		fmt.Printf("%s: %T %v\n", k, e.Properties[k], e.Properties[k])
	}
	// Output:
	// Sales 0042 W/"1"
	// Orders: int64 7
	// Age: int32 36
	// Score: float64 1
}

// Scan drives a typed decoder without building a map.
func ExampleScan() {
	var orders int64
	err := wire.Scan([]byte(`{"PartitionKey":"p","RowKey":"r","Orders@odata.type":"Edm.Int64","Orders":"7"}`),
		func(p wire.Property) error {
			if string(p.Name) == "Orders" && p.Type == store.EdmInt64 {
				var err error
				orders, err = p.AsInt64()
				return err
			}
			return nil
		})
	fmt.Println(orders, err)
	// Output: 7 <nil>
}
