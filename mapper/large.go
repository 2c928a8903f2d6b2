package mapper

import (
	"encoding"
	"encoding/json"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// EncodeLarge maps the properties of v, a struct or a pointer to one, as
// Encode does, with two differences: the keys, ETag and Timestamp are left
// out (the caller places the properties itself), and a string or binary
// value may be longer than the service stores in one property (32,767
// UTF-16 code units, 64 KiB). It is for code that splits such values
// across properties and rows before writing them, as patterns/wide does,
// and must check every piece it stores. Every other check of Encode
// stays: names, types, time ranges, integer overflow, and the kind's
// discriminator is written. []byte values share memory with v.
func EncodeLarge(v any) (map[string]any, error) {
	rv, c, err := structOf(v, false)
	if err != nil {
		return nil, err
	}
	var extra map[string]any
	if c.extra != nil {
		if fv, ok := c.extra.get(rv); ok {
			extra = fv.Interface().(map[string]any)
		}
	}
	props := make(map[string]any, len(c.fields)+len(extra))
	for i := range c.fields {
		f := &c.fields[i]
		fv, ok := f.value(rv)
		if !ok {
			continue
		}
		x, err := f.encodeLarge(fv)
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
		if err := store.ValidatePropertyName(k); err != nil {
			return nil, c.extra.wrap(err, "extra property %q", k)
		}
		if err := validateLarge(k, x); err != nil {
			return nil, c.extra.wrap(err, "extra property %q", k)
		}
		props[k] = x
	}
	if err := c.stampKind(props); err != nil {
		return nil, err
	}
	return props, nil
}

// encodeLarge is encode without the per-property size limits of strings
// and binary values.
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

// validateLarge is store.ValidateValue without the size limits of strings
// and binary values.
func validateLarge(name string, x any) error {
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
