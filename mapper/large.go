package mapper

import (
	"encoding"
	"encoding/json"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// LargeField describes a field tagged large: a property whose value may
// pass the service's property limits (32,767 UTF-16 units for a string,
// 64 KiB for binary) or make the entity pass 1 MiB. The mapper stores
// such a field like any other; package patterns/large keeps the values
// too big for the entity in blobs, with a reference in the entity.
type LargeField struct {
	// Property is the property name.
	Property string
	// Field is the Go field path, such as "Body" or "Doc.Text".
	Field string
	// Type is how a value is stored in the entity: store.EdmString for
	// strings, TextMarshaler and json fields, store.EdmBinary for []byte.
	Type store.EdmType
}

// LargeFields returns the fields of T tagged large, in struct field order
// (none when T has none), or the error that makes T unmappable.
func LargeFields[T any]() ([]LargeField, error) {
	c, err := codecFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	out := make([]LargeField, 0, len(c.large))
	for _, i := range c.large {
		f := &c.fields[i]
		out = append(out, LargeField{Property: f.name, Field: f.goPath, Type: f.edm})
	}
	return out, nil
}

// EncodeLarge maps v like Encode, except that the values of fields tagged
// large are not held to the property limits: a string field's property
// may be longer than 32,767 UTF-16 units, a []byte field's longer than
// 64 KiB. The entity it returns may therefore break the service's rules;
// it is for packages (patterns/large) that move such values out of the
// entity before writing it. Every other field is checked as Encode checks
// it. For a type without large fields it is Encode.
func EncodeLarge(v any) (store.Entity, error) {
	rv, c, err := structOf(v, false)
	if err != nil {
		return store.Entity{}, err
	}
	if len(c.large) == 0 {
		return c.encodeEntity(rv)
	}
	var e store.Entity
	if e.PartitionKey, e.RowKey, err = c.keysOf(rv); err != nil {
		return e, err
	}
	e.Properties, err = c.encodeUnbounded(rv, false)
	return e, err
}

// EncodeUnbounded maps the properties of v, a struct or a pointer to one,
// as Encode does, with two differences: the keys, ETag and Timestamp are
// left out (the caller places the properties itself), and no string or
// binary value is held to the property limits (32,767 UTF-16 code units,
// 64 KiB), whatever its tag. It is for code that splits such values
// across properties and rows before writing them, as patterns/wide does,
// and must check every piece it stores. Every other check of Encode
// stays: names, types, time ranges, integer overflow, and the kind's
// discriminator is written. []byte values share memory with v.
func EncodeUnbounded(v any) (map[string]any, error) {
	rv, c, err := structOf(v, false)
	if err != nil {
		return nil, err
	}
	return c.encodeUnbounded(rv, true)
}

// encodeUnbounded encodes the properties of v, exempting from the size
// limits the fields tagged large, or every field when all is set.
func (c *codec) encodeUnbounded(v reflect.Value, all bool) (map[string]any, error) {
	var extra map[string]any
	if c.extra != nil {
		if fv, ok := c.extra.get(v); ok {
			extra = fv.Interface().(map[string]any)
		}
	}
	props := make(map[string]any, len(c.fields)+len(extra))
	next := 0 // the next entry of c.large
	for i := range c.fields {
		f := &c.fields[i]
		large := all
		if next < len(c.large) && c.large[next] == i {
			large = true
			next++
		}
		fv, ok := f.value(v)
		if !ok {
			continue
		}
		var x any
		var err error
		if large {
			x, err = f.encodeLarge(fv)
		} else {
			x, err = f.encode(fv)
		}
		if err != nil {
			return nil, err
		}
		if x != nil {
			props[f.name] = x
		}
	}
	for k, x := range extra {
		if _, known := c.byName[k]; known || x == nil {
			continue
		}
		var err error
		if all {
			if err = store.ValidatePropertyName(k); err == nil {
				err = validateUnbounded(k, x)
			}
			if err != nil {
				err = c.extra.wrap(err, "extra property %q", k)
			}
		} else {
			err = c.checkExtra(k, x)
		}
		if err != nil {
			return nil, err
		}
		props[k] = x
	}
	if err := c.stampKind(props); err != nil {
		return nil, err
	}
	return props, nil
}

// validateUnbounded is store.ValidateValue without the size limits of
// strings and binary values.
func validateUnbounded(name string, x any) error {
	switch y := x.(type) {
	case string:
		if len(y) > store.MaxStringUnits {
			if !utf8.ValidString(y) {
				return refusal("property %q: string value is not valid UTF-8", name)
			}
			return nil
		}
	case []byte:
		return nil
	}
	return store.ValidateValue(name, x)
}

// compileLarge finds the fields tagged large and checks that each can
// hold a large value: a property stored as a string or as binary.
func (c *codec) compileLarge() error {
	for _, f := range []*field{c.pk, c.rk, c.etag, c.ts, c.extra} {
		if f != nil && taggedLarge(f) {
			return f.errorf("tag option large goes on a property, not on the %s field", f.role)
		}
	}
	for i := range c.fields {
		f := &c.fields[i]
		if !taggedLarge(f) {
			continue
		}
		switch f.kind {
		case kString, kBytes, kText, kJSON:
		default:
			return f.errorf("tag option large needs a field stored as a string or as binary (a string, []byte, TextMarshaler or json field), not %s", f.typ)
		}
		if c.kind != nil && c.kind.Property == f.name {
			return f.errorf("the discriminator property %q of the type's kind cannot be large", f.name)
		}
		c.large = append(c.large, i)
	}
	return nil
}

// taggedLarge reports whether f's struct tag has the option large. The
// tag was parsed (and its errors reported) when the type was compiled.
func taggedLarge(f *field) bool {
	tag, ok := f.owner.FieldByIndex(f.index).Tag.Lookup("table")
	if !ok {
		return false
	}
	o, err := parseTag(tag)
	return err == nil && o.large
}

// encodeLarge returns the store value of fv without checking its size: a
// string, or []byte sharing fv's memory; a PropertyMarshaler's value is
// checked for its type and time range only.
func (f *field) encodeLarge(fv reflect.Value) (any, error) {
	switch f.kind {
	case kString:
		return fv.String(), nil
	case kBytes:
		if b := bytesOf(fv); b != nil {
			return b, nil
		}
		return nil, nil
	case kText:
		b, err := fv.Addr().Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return nil, f.wrap(err, "MarshalText")
		}
		return string(b), nil
	case kJSON:
		b, err := json.Marshal(fv.Addr().Interface())
		if err != nil {
			return nil, f.wrap(err, "encoding as JSON")
		}
		if string(b) == "null" {
			return nil, nil
		}
		return string(b), nil
	case kCustom:
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
		if t, ok := x.(time.Time); ok {
			return f.checkTime(t)
		}
		return x, nil
	}
	return f.encode(fv)
}

// largeHint explains a type mismatch on a field tagged large: there the
// property most likely holds the reference to a blob that patterns/large
// wrote, stored as the other type so that no reader takes it for the
// value.
func (f *field) largeHint() string {
	c, err := codecFor(f.owner)
	if err != nil {
		return ""
	}
	for _, i := range c.large {
		if c.fields[i].goPath == f.goPath {
			return " (the field is tagged large: the property holds a reference to a blob, which only patterns/large reads)"
		}
	}
	return ""
}
