package mapper

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/store"
)

// target returns the settable field f of the addressable struct value v,
// allocating nil embedded pointers on the way.
func (f *field) target(v reflect.Value) (reflect.Value, error) {
	if len(f.index) == 1 {
		return v.Field(f.index[0]), nil
	}
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return v, f.errorf("cannot set the nil embedded pointer to unexported type %s", v.Type().Elem())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// deref returns the value to set for pointer fields, allocating it.
func (f *field) deref(fv reflect.Value) reflect.Value {
	if f.ptr {
		p := reflect.New(f.elem)
		fv.Set(p)
		return p.Elem()
	}
	return fv
}

// mismatch is the error for a stored type the field cannot take.
func (f *field) mismatch(edm store.EdmType) error {
	return f.errorf("cannot decode a stored %s value into Go type %s%s", edm, f.typ, f.largeHint())
}

// decodeAny sets field value fv (as declared, settable) from a store value.
// A nil value leaves the zero value.
func (f *field) decodeAny(fv reflect.Value, val any) error {
	if f.kind == kCustom {
		if val == nil {
			return nil
		}
		return f.unmarshalCustom(fv, val)
	}
	switch x := val.(type) {
	case nil:
		return nil
	case string:
		return f.setString(fv, x)
	case bool:
		if f.kind != kBool {
			return f.mismatch(store.EdmBoolean)
		}
		f.deref(fv).SetBool(x)
		return nil
	case int32:
		return f.setInt(fv, int64(x), store.EdmInt32)
	case int64:
		return f.setInt(fv, x, store.EdmInt64)
	case float64:
		return f.setFloat(fv, x)
	case time.Time:
		return f.setTime(fv, x)
	case []byte:
		return f.setBytes(fv, x)
	case store.GUID:
		return f.setGUID(fv, x)
	}
	return f.errorf("cannot decode a value of Go type %T (not a store property type)", val)
}

func (f *field) unmarshalCustom(fv reflect.Value, val any) error {
	t := f.deref(fv)
	if err := t.Addr().Interface().(PropertyUnmarshaler).UnmarshalTableProperty(val); err != nil {
		return f.wrap(err, "UnmarshalTableProperty")
	}
	return nil
}

func (f *field) setString(fv reflect.Value, s string) error {
	switch f.kind {
	case kString:
		f.deref(fv).SetString(s)
	case kText:
		if err := f.deref(fv).Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return f.wrap(err, "UnmarshalText of %s", quote(s))
		}
	case kJSON:
		if err := json.Unmarshal([]byte(s), fv.Addr().Interface()); err != nil {
			return f.wrap(err, "decoding JSON %s", quote(s))
		}
	case kCustom:
		return f.unmarshalCustom(fv, s)
	default:
		return f.mismatch(store.EdmString)
	}
	return nil
}

// setInt stores an Int32 or Int64 value, refusing any that does not fit
// the field exactly.
func (f *field) setInt(fv reflect.Value, n int64, edm store.EdmType) error {
	switch f.kind {
	case kInt:
		t := f.deref(fv)
		if t.OverflowInt(n) {
			return f.errorf("stored %s value %d overflows Go type %s", edm, n, f.elem)
		}
		t.SetInt(n)
	case kUint:
		t := f.deref(fv)
		if n < 0 || t.OverflowUint(uint64(n)) {
			return f.errorf("stored %s value %d does not fit Go type %s", edm, n, f.elem)
		}
		t.SetUint(uint64(n))
	case kFloat:
		x := float64(n)
		// Exact only when it converts back to the same integer (and, for
		// float32, survives the narrowing).
		if f.elem.Kind() == reflect.Float32 {
			x = float64(float32(x))
		}
		if x >= math.MaxInt64 || int64(x) != n {
			return f.errorf("stored %s value %d cannot be represented exactly by Go type %s", edm, n, f.elem)
		}
		f.deref(fv).SetFloat(x)
	case kCustom:
		if edm == store.EdmInt32 {
			return f.unmarshalCustom(fv, int32(n))
		}
		return f.unmarshalCustom(fv, n)
	default:
		return f.mismatch(edm)
	}
	return nil
}

func (f *field) setFloat(fv reflect.Value, x float64) error {
	switch f.kind {
	case kFloat:
		t := f.deref(fv)
		if !math.IsInf(x, 0) && t.OverflowFloat(x) {
			return f.errorf("stored Edm.Double value %g overflows Go type %s", x, f.elem)
		}
		t.SetFloat(x)
	case kCustom:
		return f.unmarshalCustom(fv, x)
	default:
		return f.mismatch(store.EdmDouble)
	}
	return nil
}

func (f *field) setTime(fv reflect.Value, t time.Time) error {
	switch f.kind {
	case kTime:
		*(*time.Time)(f.deref(fv).Addr().UnsafePointer()) = t.UTC()
	case kCustom:
		return f.unmarshalCustom(fv, t)
	default:
		return f.mismatch(store.EdmDateTime)
	}
	return nil
}

// setBytes copies b into the field, so the struct never aliases the entity.
func (f *field) setBytes(fv reflect.Value, b []byte) error {
	switch f.kind {
	case kBytes:
		f.deref(fv).SetBytes(append(make([]byte, 0, len(b)), b...))
	case kCustom:
		return f.unmarshalCustom(fv, b)
	default:
		return f.mismatch(store.EdmBinary)
	}
	return nil
}

func (f *field) setGUID(fv reflect.Value, g store.GUID) error {
	switch f.kind {
	case kGUID:
		*(*store.GUID)(f.deref(fv).Addr().UnsafePointer()) = g
	case kCustom:
		return f.unmarshalCustom(fv, g)
	default:
		return f.mismatch(store.EdmGuid)
	}
	return nil
}

// quote quotes s for an error message, cutting long values.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:max], len(s))
}
