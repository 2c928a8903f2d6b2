package mapper

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit/store"
)

// get returns field f of the addressable struct value v, and false when an
// embedded pointer on the way is nil (the field then is not stored).
func (f *field) get(v reflect.Value) (reflect.Value, bool) {
	if len(f.index) == 1 {
		return v.Field(f.index[0]), true
	}
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// timeAt reads a time.Time from an addressable value without boxing it.
func timeAt(v reflect.Value) time.Time { return *(*time.Time)(v.Addr().UnsafePointer()) }

// guidAt reads a [16]byte-kind array from an addressable value.
func guidAt(v reflect.Value) store.GUID { return *(*store.GUID)(v.Addr().UnsafePointer()) }

// bytesOf returns the bytes of a []byte-kind value.
func bytesOf(v reflect.Value) []byte {
	if v.IsNil() {
		return nil
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), v.Len())
}

// value returns the non-pointer value of field f in struct v, and false
// when it is not stored: a nil pointer (or nil embedded pointer), or the
// zero value with omitempty.
func (f *field) value(v reflect.Value) (reflect.Value, bool) {
	fv, ok := f.get(v)
	if !ok {
		return fv, false
	}
	if f.ptr {
		if fv.IsNil() {
			return fv, false
		}
		fv = fv.Elem()
	}
	if f.omitEmpty {
		if fv.IsZero() {
			return fv, false
		}
		if f.kind == kJSON && (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.Len() == 0 {
			return fv, false
		}
	}
	return fv, true
}

// encode returns the store value of field value fv (not a pointer,
// addressable), or nil when nothing is stored.
func (f *field) encode(fv reflect.Value) (any, error) {
	switch f.kind {
	case kString:
		s := fv.String()
		if err := f.checkString(s); err != nil {
			return nil, err
		}
		return s, nil
	case kBool:
		return fv.Bool(), nil
	case kInt:
		if f.edm == store.EdmInt32 {
			return int32(fv.Int()), nil
		}
		return fv.Int(), nil
	case kUint:
		u := fv.Uint()
		if f.edm == store.EdmInt32 {
			return int32(u), nil
		}
		if u > math.MaxInt64 {
			return nil, f.wrap(refuseCode(store.CodeOutOfRangeInput, 400,
				"value %d overflows Edm.Int64 (the largest storable value is %d)", u, int64(math.MaxInt64)), "value out of range")
		}
		return int64(u), nil
	case kFloat:
		return fv.Float(), nil
	case kTime:
		t := timeAt(fv)
		if t.IsZero() {
			return nil, nil
		}
		t, err := f.checkTime(t)
		if err != nil {
			return nil, err
		}
		return t, nil
	case kBytes:
		b := bytesOf(fv)
		if b == nil {
			return nil, nil
		}
		if err := f.checkBinary(len(b)); err != nil {
			return nil, err
		}
		return b, nil
	case kGUID:
		return guidAt(fv), nil
	case kText:
		s, err := f.marshalText(fv)
		if err != nil {
			return nil, err
		}
		return s, nil
	case kCustom:
		return f.marshalCustom(fv)
	case kJSON:
		s, ok, err := f.marshalJSON(fv)
		if err != nil || !ok {
			return nil, err
		}
		return s, nil
	}
	return nil, f.errorf("internal error: unknown kind %d", f.kind)
}

// checkString refuses a string the service would refuse as too long.
// UTF-8 never takes fewer bytes than UTF-16 units, so short strings skip
// the count.
func (f *field) checkString(s string) error {
	if len(s) <= store.MaxStringUnits {
		return nil
	}
	if n := store.UTF16Len(s); n > store.MaxStringUnits {
		return f.wrap(refuseCode(store.CodePropertyValueTooLarge, 400,
			"string of %d UTF-16 code units exceeds the limit of %d", n, store.MaxStringUnits), "value too large")
	}
	return nil
}

// checkBinary refuses a binary value over the service's limit.
func (f *field) checkBinary(n int) error {
	if n <= store.MaxBinaryBytes {
		return nil
	}
	return f.wrap(refuseCode(store.CodePropertyValueTooLarge, 400,
		"binary value of %d bytes exceeds the limit of %d", n, store.MaxBinaryBytes), "value too large")
}

// checkTime normalizes t to UTC at 100 ns and refuses it outside the
// service's range.
func (f *field) checkTime(t time.Time) (time.Time, error) {
	u := store.NormalizeTime(t)
	if u.Before(store.MinTime) || u.After(store.MaxTime) {
		return u, f.wrap(refuseCode(store.CodeOutOfRangeInput, 400,
			"DateTime %s is outside the range %s to %s", u.Format(time.RFC3339Nano),
			store.MinTime.Format(time.RFC3339), store.MaxTime.Format(time.RFC3339Nano)), "value out of range")
	}
	return u, nil
}

func (f *field) marshalText(fv reflect.Value) (string, error) {
	b, err := fv.Addr().Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return "", f.wrap(err, "MarshalText")
	}
	s := string(b)
	return s, f.checkString(s)
}

func (f *field) marshalCustom(fv reflect.Value) (any, error) {
	x, err := fv.Addr().Interface().(PropertyMarshaler).MarshalTableProperty()
	if err != nil {
		return nil, f.wrap(err, "MarshalTableProperty")
	}
	if x == nil {
		return nil, nil
	}
	if _, err := store.TypeOf(x); err != nil {
		return nil, f.wrap(err, "MarshalTableProperty returned %T", x)
	}
	switch y := x.(type) {
	case string:
		err = f.checkString(y)
	case time.Time:
		x, err = f.checkTime(y)
	case []byte:
		err = f.checkBinary(len(y))
	}
	return x, err
}

// marshalJSON encodes a json-tagged field; ok is false for JSON null.
func (f *field) marshalJSON(fv reflect.Value) (string, bool, error) {
	b, err := json.Marshal(fv.Addr().Interface())
	if err != nil {
		return "", false, f.wrap(err, "encoding as JSON")
	}
	if string(b) == "null" {
		return "", false, nil
	}
	s := string(b)
	if len(s) > store.MaxStringUnits {
		if n := store.UTF16Len(s); n > store.MaxStringUnits {
			return "", false, f.wrap(refuseCode(store.CodePropertyValueTooLarge, 400,
				"JSON of %d UTF-16 code units exceeds the string limit of %d", n, store.MaxStringUnits),
				"value too large to store as JSON (split it, or keep it in a blob)")
		}
	}
	return s, true, nil
}
