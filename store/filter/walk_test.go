package filter

import (
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/store"
)

func TestEachComparison(t *testing.T) {
	f, err := Parse("A eq 1 and not (B lt X'FF' or (C ge 2L and not (D ne 'x'))) or PartitionKey gt 'p'")
	if err != nil {
		t.Fatal(err)
	}
	var got []Comparison
	f.EachComparison(func(c Comparison) { got = append(got, c) })
	want := []Comparison{
		{"A", Eq, store.EdmInt32, false},
		{"B", Lt, store.EdmBinary, true},
		{"C", Ge, store.EdmInt64, true},
		{"D", Ne, store.EdmString, true},
		{"PartitionKey", Gt, store.EdmString, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EachComparison:\n got %+v\nwant %+v", got, want)
	}
	var none *Filter
	none.EachComparison(func(Comparison) { t.Error("a nil filter has no comparison") })
	empty, _ := Parse("")
	empty.EachComparison(func(Comparison) { t.Error("the empty filter has no comparison") })
}
