package mapper

import (
	"errors"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// DecodeJSON loads one entity object in the Azure Table service's JSON
// format (a point read, or one element of a query response's "value";
// minimal or full metadata) into v, a non-nil pointer to a struct, with
// the rules of Decode. It reads the bytes directly into the fields,
// without building a store.Entity; only strings, []byte and the extra
// map allocate.
func DecodeJSON(data []byte, v any) error {
	rv, c, err := structOf(v, true)
	if err != nil {
		return err
	}
	return c.decodeJSON(data, rv)
}

func (c *codec) decodeJSON(data []byte, v reflect.Value) error {
	if c.kind != nil {
		// The kind is checked on the whole entity before any field is set.
		e, err := wire.DecodeEntity(data)
		if err != nil {
			return err
		}
		return c.decodeEntity(&e, v)
	}
	v.SetZero()
	var pk, rk string
	var extra map[string]any
	err := wire.Scan(data, func(p wire.Property) error {
		switch string(p.Name) {
		case "PartitionKey":
			s, err := p.AsString()
			if err != nil {
				return err
			}
			if c.keyMethod {
				pk = s
				return nil
			}
			return c.pk.setKey(v, s)
		case "RowKey":
			s, err := p.AsString()
			if err != nil {
				return err
			}
			if c.keyMethod {
				rk = s
				return nil
			}
			return c.rk.setKey(v, s)
		case "Timestamp":
			if c.ts == nil {
				return nil
			}
			t, err := p.AsTime()
			if err != nil {
				return err
			}
			fv, err := c.ts.target(v)
			if err != nil {
				return err
			}
			return c.ts.setTimeRaw(fv, t)
		case "odata.etag":
			if c.etag == nil {
				return nil
			}
			s, err := p.AsString()
			if err != nil {
				return err
			}
			return c.etag.setKey(v, s)
		}
		f := c.byName[string(p.Name)]
		if f == nil {
			if c.extra == nil {
				return nil
			}
			val, err := p.Value()
			if err != nil {
				return err
			}
			if extra == nil {
				extra = make(map[string]any)
			}
			extra[string(p.Name)] = val
			return nil
		}
		fv, err := f.target(v)
		if err != nil {
			return err
		}
		return f.decodeWire(fv, p)
	})
	if err != nil {
		var me *Error
		if errors.As(err, &me) {
			return err
		}
		return &Error{Type: c.typ, Msg: "decoding JSON", Err: err}
	}
	if c.keyMethod {
		if err := c.setKeys(v, pk, rk); err != nil {
			return err
		}
	}
	if extra != nil {
		fv, err := c.extra.target(v)
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(extra))
	}
	return nil
}

// setKey sets a string-kind system field (a key or the ETag).
func (f *field) setKey(v reflect.Value, s string) error {
	fv, err := f.target(v)
	if err != nil {
		return err
	}
	fv.SetString(s)
	return nil
}

// decodeWire sets field value fv from one wire property, converting the
// JSON token straight to the field's type.
func (f *field) decodeWire(fv reflect.Value, p wire.Property) error {
	var err error
	switch p.Type {
	case store.EdmString:
		var s string
		if s, err = p.AsString(); err == nil {
			return f.setString(fv, s)
		}
	case store.EdmBoolean:
		var b bool
		if b, err = p.AsBool(); err == nil {
			return f.decodeAny(fv, b)
		}
	case store.EdmInt32:
		var n int32
		if n, err = p.AsInt32(); err == nil {
			return f.setInt(fv, int64(n), store.EdmInt32)
		}
	case store.EdmInt64:
		var n int64
		if n, err = p.AsInt64(); err == nil {
			return f.setInt(fv, n, store.EdmInt64)
		}
	case store.EdmDouble:
		var x float64
		if x, err = p.AsDouble(); err == nil {
			return f.setFloat(fv, x)
		}
	case store.EdmDateTime:
		var t time.Time
		if t, err = p.AsTime(); err == nil {
			return f.setTime(fv, t)
		}
	case store.EdmGuid:
		var g store.GUID
		if g, err = p.AsGUID(); err == nil {
			return f.setGUID(fv, g)
		}
	case store.EdmBinary:
		var b []byte
		if b, err = p.AsBinary(); err == nil {
			if f.kind == kBytes {
				f.deref(fv).SetBytes(b) // AsBinary returns a new slice
				return nil
			}
			return f.setBytes(fv, b)
		}
	default:
		return f.errorf("unsupported stored type %s", p.Type)
	}
	return f.wrap(err, "decoding JSON")
}

// DecodeJSONValues decodes every entity of a query response body, the
// service's {"value":[{...},...]}, into a []T, with the rules of
// DecodeJSON.
func DecodeJSONValues[T any](data []byte) ([]T, error) {
	c, err := codecFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	var out []T
	err = wire.EachEntity(data, func(obj []byte) error {
		out = append(out, *new(T))
		return c.decodeJSON(obj, reflect.ValueOf(&out[len(out)-1]).Elem())
	})
	if err != nil {
		var me *Error
		if !errors.As(err, &me) {
			err = &Error{Type: c.typ, Msg: "decoding a JSON query response", Err: err}
		}
		return nil, err
	}
	return out, nil
}
