package mapper_test

import (
	"fmt"
	"net/netip"

	"github.com/tablekit/tablekit/mapper"
)

// Cents is a money amount that stores itself as an Edm.Int64 count of
// cents (mapper.PropertyMarshaler), never as a float.
type Cents struct{ Units, Hundredths int64 }

// MarshalTableProperty returns the stored value: an int64.
func (c Cents) MarshalTableProperty() (any, error) { return c.Units*100 + c.Hundredths, nil }

// UnmarshalTableProperty reads it back; an Int32 arrives as an int32.
func (c *Cents) UnmarshalTableProperty(v any) error {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	default:
		return fmt.Errorf("cents: want an integer property, got %T", v)
	}
	c.Units, c.Hundredths = n/100, n%100
	return nil
}

// Invoice uses a self-encoding type and an encoding.TextMarshaler
// (netip.Addr), stored as Edm.Int64 and Edm.String.
type Invoice struct {
	Customer string `table:",pk"`
	Number   string `table:",rk"`
	Total    Cents
	ClientIP netip.Addr
}

func ExamplePropertyMarshaler() {
	in := Invoice{Customer: "contoso", Number: "2026-0001", Total: Cents{1234, 56},
		ClientIP: netip.MustParseAddr("192.0.2.7")}
	e, err := mapper.Encode(&in)
	fmt.Printf("%T %v, %T %v, %v\n", e.Properties["Total"], e.Properties["Total"],
		e.Properties["ClientIP"], e.Properties["ClientIP"], err)

	var out Invoice
	err = mapper.Decode(e, &out)
	fmt.Println(out.Total, out.ClientIP, err)
	// Output:
	// int64 123456, string 192.0.2.7, <nil>
	// {1234 56} 192.0.2.7 <nil>
}
