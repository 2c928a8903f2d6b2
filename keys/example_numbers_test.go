package keys_test

import (
	"fmt"
	"math"

	"github.com/tablekit/tablekit/keys"
)

func ExamplePadUint() {
	id, _ := keys.PadUint(223, 6)
	fmt.Println("empid_" + id)
	_, err := keys.PadUint(1000000, 6)
	fmt.Println(err)
	// Output:
	// empid_000223
	// keys: value out of range: 1000000 needs 7 digits, the padding width is 6
}

func ExampleParseUint() {
	n, err := keys.ParseUint("000223", 6)
	fmt.Println(n, err)
	// Output:
	// 223 <nil>
}

func ExampleEncodeInt64() {
	for _, n := range []int64{-42, -1, 0, 42} {
		fmt.Println(keys.EncodeInt64(n))
	}
	// Output:
	// -9223372036854775766
	// -9223372036854775807
	// 00000000000000000000
	// 00000000000000000042
}

func ExampleDecodeInt64() {
	n, err := keys.DecodeInt64("-9223372036854775766")
	fmt.Println(n, err)
	// Output:
	// -42 <nil>
}

func ExampleEncodeFloat64() {
	for _, f := range []float64{math.Inf(-1), -1.5, math.Copysign(0, -1), 0, 1.5, math.Inf(1)} {
		fmt.Println(keys.EncodeFloat64(f))
	}
	// Output:
	// 000FFFFFFFFFFFFF
	// 4007FFFFFFFFFFFF
	// 7FFFFFFFFFFFFFFF
	// 8000000000000000
	// BFF8000000000000
	// FFF0000000000000
}

func ExampleDecodeFloat64() {
	f, err := keys.DecodeFloat64("BFF8000000000000")
	fmt.Println(f, err)
	// Output:
	// 1.5 <nil>
}
