package filter_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

func ExampleParse() {
	f, err := filter.Parse("PartitionKey eq 'Sales' and Age ge 30")
	if err != nil {
		fmt.Println(err)
		return
	}
	alice := &store.Entity{PartitionKey: "Sales", RowKey: "1", Properties: map[string]any{"Age": int32(34)}}
	bob := &store.Entity{PartitionKey: "Sales", RowKey: "2", Properties: map[string]any{"Age": int64(34)}}
	carol := &store.Entity{PartitionKey: "Sales", RowKey: "3"}
	fmt.Println(f.Match(alice)) // Int32 34 >= 30
	fmt.Println(f.Match(bob))   // an Int64 property never matches an Int32 literal
	fmt.Println(f.Match(carol)) // no Age: no comparison on it matches

	_, err = filter.Parse("startswith(PartitionKey, 'Sa')")
	fmt.Println(errors.Is(err, store.ErrInvalidInput), store.Code(err))
	// Output:
	// true
	// false
	// false
	// true InvalidInput
}

func ExampleProp() {
	c := filter.And(
		filter.Prop("Name").Eq("O'Brien"),
		filter.Prop("Age").Gt(int32(30)),
		filter.Timestamp.Ge(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
	)
	fmt.Println(c)

	bad := filter.Prop("Age").Gt(30) // a Go int: which EDM type?
	fmt.Println(bad.Err())
	// Output:
	// Name eq 'O''Brien' and Age gt 30 and Timestamp ge datetime'2024-01-01T00:00:00.0000000Z'
	// InvalidInput (400): property Age: Go int is not a property type: use int32(v) for Edm.Int32 or int64(v) for Edm.Int64
}

func ExamplePK() {
	fmt.Println(filter.PK.Eq("Sales").And(filter.RK.Ge("a")))
	fmt.Println(filter.PK.HasPrefix("emp_"))
	// Output:
	// PartitionKey eq 'Sales' and RowKey ge 'a'
	// PartitionKey ge 'emp_' and PartitionKey lt 'emp`'
}

func ExampleFilter_Plan() {
	for _, s := range []string{
		"PartitionKey eq 'a' and RowKey eq '1'",
		"(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey eq '2')",
		"PartitionKey eq 'a' and RowKey ge '1' and RowKey lt '5'",
		"PartitionKey eq 'a' and Age gt 30",
		"PartitionKey ge 'a' and PartitionKey lt 'c'",
		"Age gt 30",
	} {
		f, err := filter.Parse(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		p := f.Plan()
		fmt.Printf("%s: %d range(s)\n", p.Kind, len(p.Ranges))
	}
	// Output:
	// point query: 1 range(s)
	// partition range: 2 range(s)
	// row range: 1 range(s)
	// partition scan: 1 range(s)
	// partition range: 1 range(s)
	// table scan: 1 range(s)
}

// An engine walks each range from its start until a key is past its end,
// and still calls Match on every entity it visits.
func ExampleKeyRange_Start() {
	f, _ := filter.Parse("PartitionKey eq 'a' and RowKey gt '1' and RowKey le '3'")
	keys := [][2]string{{"a", "0"}, {"a", "1"}, {"a", "2"}, {"a", "3"}, {"a", "4"}, {"b", "0"}}
	for _, r := range f.Plan().Ranges {
		pk, rk, _ := r.Start()
		fmt.Printf("seek to (%q, %q)\n", pk, rk)
		for _, k := range keys {
			if store.CompareOrdinal(k[0], pk) < 0 || (k[0] == pk && store.CompareOrdinal(k[1], rk) < 0) {
				continue // before the start: a real engine seeks past these
			}
			if r.Past(k[0], k[1]) {
				break
			}
			fmt.Println("visit", k)
		}
	}
	// Output:
	// seek to ("a", "1\x00")
	// visit [a 2]
	// visit [a 3]
}
