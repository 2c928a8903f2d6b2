package keys_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/keys"
)

func ExampleIDGenerator() {
	// Production code passes nil, nil (time.Now and crypto/rand). Here a
	// fixed clock and an all-zero random source make the output stable.
	clock := func() time.Time { return time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC) }
	g := keys.NewIDGenerator(clock, bytes.NewReader(make([]byte, 10)))
	a, _ := g.New()
	b, _ := g.New() // same millisecond: the random part counts up
	fmt.Println(a)
	fmt.Println(b)
	// Output:
	// 01M81EKCW00000000000000000
	// 01M81EKCW00000000000000001
}

func ExampleNewIDGenerator() {
	g := keys.NewIDGenerator(nil, nil) // time.Now and crypto/rand
	id, err := g.New()
	fmt.Println(len(id), err, keys.ValidKey(id))
	// Output:
	// 26 <nil> <nil>
}

func ExampleIDGenerator_New() {
	g := keys.NewIDGenerator(nil, nil)
	first, _ := g.New()
	second, _ := g.New()
	fmt.Println(first < second)
	// Output:
	// true
}

func ExampleIDTime() {
	t, err := keys.IDTime("01M81EKCW00000000000000001")
	fmt.Println(t, err)
	// Output:
	// 2026-11-22 11:00:00 +0000 UTC <nil>
}

// An id for an event of the past, from the same generator as new ones.
func ExampleIDGenerator_At() {
	g := keys.NewIDGenerator(nil, bytes.NewReader(make([]byte, 20)))
	placed := time.Date(2019, 7, 4, 10, 30, 0, 0, time.UTC)
	id, _ := g.At(placed)
	back, _ := keys.IDTime(id)
	fmt.Println(id, back)
	// Output:
	// 01DEY8H9200000000000000000 2019-07-04 10:30:00 +0000 UTC
}

// The ids of one day, as a range for a query.
func ExampleIDRange() {
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	rng, _ := keys.IDRange("order_", day, day.AddDate(0, 0, 1))
	g := keys.NewIDGenerator(nil, bytes.NewReader(make([]byte, 40)))
	in, _ := g.At(day.Add(5 * time.Hour))
	out, _ := g.At(day.AddDate(0, 0, 1))
	fmt.Println(rng.Contains("order_"+in), rng.Contains("order_"+out))
	// Output:
	// true false
}
