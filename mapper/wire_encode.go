package mapper

import (
	"encoding/base64"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// AppendJSON appends v, a struct or a pointer to one, as the JSON entity
// body the Azure Table service takes: PartitionKey, RowKey, then every
// stored property in name order with its "@odata.type" annotation where
// JSON alone would lose the type. The bytes are identical to those of
// wire.AppendEntity for the entity Encode returns, without building the
// entity. Values are checked as Encode checks them; the entity-level
// limits (keys, property count, total size) are the store's to check.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	rv, c, err := structOf(v, false)
	if err != nil {
		return dst, err
	}
	return c.appendJSON(dst, rv)
}

// wirePrefix returns the bytes store/wire writes before a value of type
// edm for property name: the annotation (when the type needs one) and
// ,"name":. It is derived from wire's own appenders, so the mapper's
// output follows the wire format exactly.
func wirePrefix(name string, edm store.EdmType) []byte {
	var full, val []byte
	switch edm {
	case store.EdmString:
		full, val = wire.AppendStringProp(nil, name, ""), wire.AppendString(nil, "")
	case store.EdmBoolean:
		full, val = wire.AppendBoolProp(nil, name, false), []byte("false")
	case store.EdmInt32:
		full, val = wire.AppendInt32Prop(nil, name, 0), []byte("0")
	case store.EdmInt64:
		full, val = wire.AppendInt64Prop(nil, name, 0), []byte(`"0"`)
	case store.EdmDouble:
		full, val = wire.AppendDoubleProp(nil, name, 0), wire.AppendDouble(nil, 0)
	case store.EdmDateTime:
		t := store.MinTime
		full = wire.AppendTimeProp(nil, name, t)
		val = append(wire.AppendTime([]byte{'"'}, t), '"')
	case store.EdmGuid:
		full = wire.AppendGUIDProp(nil, name, store.GUID{})
		val = append(wire.AppendGUID([]byte{'"'}, store.GUID{}), '"')
	case store.EdmBinary:
		full, val = wire.AppendBinaryProp(nil, name, nil), []byte(`""`)
	default:
		return nil
	}
	return full[:len(full)-len(val)]
}

func (c *codec) appendJSON(dst []byte, v reflect.Value) ([]byte, error) {
	if c.kind != nil && c.kind.Property != "" {
		// The discriminator has no field to write it from in name order.
		e, err := c.encodeEntity(v)
		if err != nil {
			return dst, err
		}
		return wire.AppendEntity(dst, &e)
	}
	pk, rk, err := c.keysOf(v)
	if err != nil {
		return dst, err
	}
	dst = wire.AppendEntityStart(dst, pk, rk)
	var extra map[string]any
	if c.extra != nil {
		if fv, ok := c.extra.get(v); ok {
			extra = fv.Interface().(map[string]any)
		}
	}
	if len(extra) == 0 {
		for _, f := range c.sorted {
			if dst, err = f.appendJSON(dst, v); err != nil {
				return dst, err
			}
		}
		return wire.AppendEntityEnd(dst), nil
	}
	// Merge the extra properties into the name order.
	names := make([]string, 0, len(extra))
	for k, x := range extra {
		if _, known := c.byName[k]; !known && x != nil {
			if err := c.checkExtra(k, x); err != nil {
				return dst, err
			}
			names = append(names, k)
		}
	}
	slices.Sort(names)
	i := 0
	for _, f := range c.sorted {
		for ; i < len(names) && names[i] < f.name; i++ {
			dst, _ = wire.AppendProperty(dst, names[i], extra[names[i]])
		}
		if dst, err = f.appendJSON(dst, v); err != nil {
			return dst, err
		}
	}
	for ; i < len(names); i++ {
		dst, _ = wire.AppendProperty(dst, names[i], extra[names[i]])
	}
	return wire.AppendEntityEnd(dst), nil
}

// appendJSON appends field f of struct v, or nothing when it is not stored.
func (f *field) appendJSON(dst []byte, v reflect.Value) ([]byte, error) {
	fv, ok := f.value(v)
	if !ok {
		return dst, nil
	}
	switch f.kind {
	case kString:
		s := fv.String()
		if err := f.checkString(s); err != nil {
			return dst, err
		}
		return wire.AppendString(append(dst, f.wirePre...), s), nil
	case kBool:
		return strconv.AppendBool(append(dst, f.wirePre...), fv.Bool()), nil
	case kInt:
		n := fv.Int()
		dst = append(dst, f.wirePre...)
		if f.edm == store.EdmInt32 {
			return strconv.AppendInt(dst, n, 10), nil
		}
		return append(strconv.AppendInt(append(dst, '"'), n, 10), '"'), nil
	case kUint:
		u := fv.Uint()
		dst = append(dst, f.wirePre...)
		if f.edm == store.EdmInt32 {
			return strconv.AppendUint(dst, u, 10), nil
		}
		if u > math.MaxInt64 {
			_, err := f.encode(fv) // the overflow error
			return dst, err
		}
		return append(strconv.AppendUint(append(dst, '"'), u, 10), '"'), nil
	case kFloat:
		return wire.AppendDouble(append(dst, f.wirePre...), fv.Float()), nil
	case kTime:
		t := timeAt(fv)
		if t.IsZero() {
			return dst, nil
		}
		t, err := f.checkTime(t)
		if err != nil {
			return dst, err
		}
		dst = append(dst, f.wirePre...)
		return append(wire.AppendTime(append(dst, '"'), t), '"'), nil
	case kBytes:
		b := bytesOf(fv)
		if b == nil {
			return dst, nil
		}
		if err := f.checkBinary(len(b)); err != nil {
			return dst, err
		}
		dst = append(dst, f.wirePre...)
		return append(base64.StdEncoding.AppendEncode(append(dst, '"'), b), '"'), nil
	case kGUID:
		dst = append(dst, f.wirePre...)
		return append(wire.AppendGUID(append(dst, '"'), guidAt(fv)), '"'), nil
	}
	// Text, custom and JSON values go through their store value.
	x, err := f.encode(fv)
	if err != nil || x == nil {
		return dst, err
	}
	return wire.AppendProperty(dst, f.name, x)
}
