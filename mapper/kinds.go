package mapper

import (
	"encoding"
	"fmt"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/store"
)

// PropertyMarshaler is implemented by types that encode themselves as one
// property. MarshalTableProperty returns a value of one of store's
// property types (string, []byte, bool, int32, int64, float64, time.Time,
// store.GUID), or nil to store nothing.
type PropertyMarshaler interface {
	MarshalTableProperty() (any, error)
}

// PropertyUnmarshaler is implemented by pointers to types that decode
// themselves from one stored property value (one of store's property types).
type PropertyUnmarshaler interface {
	UnmarshalTableProperty(v any) error
}

// kind is how a field's value maps to a property.
type kind uint8

const (
	kString kind = iota + 1
	kBool
	kInt   // signed integers
	kUint  // unsigned integers
	kFloat // float32, float64
	kTime
	kBytes
	kGUID // store.GUID and every [16]byte
	kText // encoding.TextMarshaler / TextUnmarshaler
	kCustom
	kJSON
)

var (
	timeType            = reflect.TypeFor[time.Time]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	propMarshalerType   = reflect.TypeFor[PropertyMarshaler]()
	propUnmarshalerType = reflect.TypeFor[PropertyUnmarshaler]()
	extraType           = reflect.TypeFor[map[string]any]()
)

// isTime reports whether t is time.Time or a type defined from it
// (type Date time.Time), which has time.Time's layout but not its methods.
func isTime(t reflect.Type) bool {
	return t == timeType || (t.Kind() == reflect.Struct && t.ConvertibleTo(timeType))
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// classify decides the kind and stored EDM type of a value of type t (not
// a pointer). asJSON is the json tag option.
func classify(t reflect.Type, asJSON bool) (kind, store.EdmType, error) {
	if asJSON {
		switch t.Kind() {
		case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
			return 0, "", fmt.Errorf("type %s cannot be stored as JSON", t)
		}
		return kJSON, store.EdmString, nil
	}
	if implements(t, propMarshalerType) {
		if !reflect.PointerTo(t).Implements(propUnmarshalerType) {
			return 0, "", fmt.Errorf("type %s implements MarshalTableProperty but *%s does not implement UnmarshalTableProperty", t, t)
		}
		return kCustom, "", nil
	}
	if isTime(t) {
		return kTime, store.EdmDateTime, nil
	}
	if t.Kind() == reflect.Array && t.Len() == 16 && t.Elem().Kind() == reflect.Uint8 {
		return kGUID, store.EdmGuid, nil
	}
	if implements(t, textMarshalerType) {
		if !reflect.PointerTo(t).Implements(textUnmarshalerType) {
			return 0, "", fmt.Errorf("type %s implements encoding.TextMarshaler but *%s does not implement encoding.TextUnmarshaler", t, t)
		}
		return kText, store.EdmString, nil
	}
	switch t.Kind() {
	case reflect.String:
		return kString, store.EdmString, nil
	case reflect.Bool:
		return kBool, store.EdmBoolean, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return kInt, store.EdmInt32, nil
	case reflect.Int, reflect.Int64:
		return kInt, store.EdmInt64, nil
	case reflect.Uint8, reflect.Uint16:
		return kUint, store.EdmInt32, nil
	case reflect.Uint32, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return kUint, store.EdmInt64, nil
	case reflect.Float32, reflect.Float64:
		return kFloat, store.EdmDouble, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return kBytes, store.EdmBinary, nil
		}
	}
	hint := ""
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Map, reflect.Array:
		hint = ": add the tag option json to store it as a JSON string"
	case reflect.Interface:
		hint = ": use a concrete type, or the tag option json"
	case reflect.Pointer:
		hint = ": only one level of pointer is supported"
	}
	return 0, "", fmt.Errorf("unsupported type %s%s", t, hint)
}
