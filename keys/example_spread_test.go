package keys_test

import (
	"fmt"

	"github.com/tablekit/tablekit/keys"
)

func ExampleSpread() {
	// Spread the current hour's log partition over 16 partitions: the
	// bucket comes from the source, so one source stays in one partition.
	b, _ := keys.Spread("a", 16)
	fmt.Println(b + "_2026112211")
	// Output:
	// 12_2026112211
}

func ExampleSpreadBuckets() {
	// A reader of hour 2026112211 visits every spread partition.
	bs, _ := keys.SpreadBuckets(12)
	for _, b := range bs[:3] {
		fmt.Println(b + "_2026112211")
	}
	fmt.Println(len(bs))
	// Output:
	// 00_2026112211
	// 01_2026112211
	// 02_2026112211
	// 12
}
