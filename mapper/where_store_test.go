package mapper

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
)

// For every comparable field, Where(field).Eq(the stored value) finds the
// entity in memstore: the literal's EDM type is the type the field is
// stored with (an Int64 for uint32, a Double for float32, a Guid for
// [16]byte, ...), which the service requires for a match.
func TestWhereEqFindsStoredValue(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[AllTypes](t)
	g := newGen(21)
	var rows []AllTypes
	for i := range 20 {
		v := g.allTypes()
		v.PK, v.RK = "p", fmt.Sprintf("%03d", i)
		if err := r.Insert(ctx, &v); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, v)
	}
	names := []string{"S", "B", "I", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "U",
		"F32", "F64", "T", "Bin", "G", "A16", "NS", "NL", "NB", "NU", "ND", "NBo", "NF", "NC", "UP", "Txt", "Cust", "Owner", "RK"}
	for _, v := range rows {
		rv := reflect.ValueOf(v)
		for _, name := range names {
			fv := rv.FieldByName(name)
			x := fv.Interface()
			if isUnstored(fv) {
				continue
			}
			c := Where[AllTypes](name).Eq(x)
			if err := c.Err(); err != nil {
				t.Fatalf("%s = %#v: %v", name, x, err)
			}
			found := false
			for got, err := range r.Partition("p").Query(ctx, c) {
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got.RK == v.RK {
					found = true
				}
			}
			if !found {
				t.Errorf("row %s: %s eq %#v (%s) did not find it", v.RK, name, x, c)
			}
		}
	}
}

// isUnstored reports the values no Eq can find: those not stored (the zero
// time, a nil slice) and NaN and infinities, which a $filter cannot write.
func isUnstored(fv reflect.Value) bool {
	switch x := fv.Interface().(type) {
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	case float32:
		return math.IsNaN(float64(x)) || math.IsInf(float64(x), 0)
	case Ratio:
		return math.IsNaN(float64(x)) || math.IsInf(float64(x), 0)
	}
	if fv.Type() == timeType || fv.Type() == reflect.TypeFor[Date]() {
		return fv.IsZero()
	}
	if fv.Kind() == reflect.Slice {
		return fv.IsNil()
	}
	return false
}
