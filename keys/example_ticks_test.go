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

// A newest-first time range over inverted-tick RowKeys in one call: the
// keys of the orders placed on one day, whatever follows the 19 digits.
func ExampleInvertedTicksRange() {
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	rng, err := keys.InvertedTicksRange("order_", day, day.AddDate(0, 0, 1))
	if err != nil {
		panic(err)
	}
	noon, _ := keys.InvertedTicks(day.Add(12 * time.Hour))
	nextDay, _ := keys.InvertedTicks(day.AddDate(0, 0, 1))
	fmt.Println(rng)
	fmt.Println(rng.Contains("order_"+noon+"-42"), rng.Contains("order_"+nextDay))
	// Output:
	// ge "order_2516929632000000000" and lt "order_2516930496000000000"
	// true false
}

// Oldest-first keys (TicksKey) of one hour.
func ExampleTicksRange() {
	hour := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	rng, _ := keys.TicksRange("log_", hour, hour.Add(time.Hour))
	in, _ := keys.TicksKey(hour.Add(30 * time.Minute))
	out, _ := keys.TicksKey(hour.Add(time.Hour))
	fmt.Println(rng.Contains("log_"+in), rng.Contains("log_"+out))
	// Output:
	// true false
}
