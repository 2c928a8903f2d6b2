package keys_test

import (
	"fmt"
	"time"

	"github.com/tablekit/tablekit/keys"
)

func ExampleTicks() {
	n, _ := keys.Ticks(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(n == keys.UnixEpochTicks, n)
	// Output:
	// true 621355968000000000
}

func ExampleFromTicks() {
	t, _ := keys.FromTicks(639309420000000000)
	fmt.Println(t)
	// Output:
	// 2026-11-22 11:00:00 +0000 UTC
}

func ExampleInvertedTicks() {
	// The guide's RowKey for "most recent first":
	// string.Format("{0:D19}", DateTime.MaxValue.Ticks - DateTime.UtcNow.Ticks)
	rk, _ := keys.InvertedTicks(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	later, _ := keys.InvertedTicks(time.Date(2026, 11, 22, 11, 0, 1, 0, time.UTC))
	fmt.Println(rk)
	fmt.Println(later < rk) // newer sorts first
	// Output:
	// 2516069555999999999
	// true
}

func ExampleParseInvertedTicks() {
	t, err := keys.ParseInvertedTicks("2516069555999999999")
	fmt.Println(t, err)
	// Output:
	// 2026-11-22 11:00:00 +0000 UTC <nil>
}

func ExampleTicksKey() {
	k, _ := keys.TicksKey(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	fmt.Println(k)
	// Output:
	// 0639309420000000000
}

func ExampleParseTicksKey() {
	t, err := keys.ParseTicksKey("0639309420000000000")
	fmt.Println(t, err)
	// Output:
	// 2026-11-22 11:00:00 +0000 UTC <nil>
}
