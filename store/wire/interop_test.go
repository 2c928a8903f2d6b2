package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
)

// TestInteropWithAztables proves the codec and the official SDK agree on
// the wire form of every type the SDK's EDMEntity models: what wire writes,
// aztables reads as the same values, and what aztables writes, wire reads
// as the same values. (EDMEntity drops Edm.Double annotations, so Double is
// covered by the Azurite round trip in store/azstore instead.)
func TestInteropWithAztables(t *testing.T) {
	when := time.Date(2024, 2, 29, 23, 59, 58, 123456700, time.UTC)
	g, _ := store.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	e := store.Entity{PartitionKey: "pk", RowKey: "rk", Properties: map[string]any{
		"S": "text \u2028 😀", "T": true, "I32": int32(-7), "I64": int64(-9007199254740993),
		"DT": when, "G": g, "B": []byte{0, 1, 254, 255},
	}}
	buf, err := AppendEntity(nil, &e)
	if err != nil {
		t.Fatal(err)
	}
	var az aztables.EDMEntity
	if err := json.Unmarshal(buf, &az); err != nil {
		t.Fatalf("aztables cannot read %s: %v", buf, err)
	}
	want := map[string]any{
		"S": "text \u2028 😀", "T": true, "I32": int32(-7), "I64": aztables.EDMInt64(-9007199254740993),
		"DT": aztables.EDMDateTime(when), "G": aztables.EDMGUID(g.String()), "B": aztables.EDMBinary{0, 1, 254, 255},
	}
	if az.PartitionKey != "pk" || az.RowKey != "rk" || !reflect.DeepEqual(az.Properties, want) {
		t.Errorf("aztables read %#v\nwant %#v", az.Properties, want)
	}

	out, err := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "pk", RowKey: "rk"}, Properties: want})
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeEntity(out)
	if err != nil {
		t.Fatalf("wire cannot read aztables' %s: %v", out, err)
	}
	if back.PartitionKey != "pk" || back.RowKey != "rk" || !reflect.DeepEqual(back.Properties, e.Properties) {
		t.Errorf("wire read aztables' output as %#v\nwant %#v", back.Properties, e.Properties)
	}
}
