package mapper

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// The typed path: over a store.TypedTable (memstore, azstore) a struct is
// written straight into the backend's own form of an entity through
// store.PropertyWriter, and read straight from it through
// store.EntityReader, with no map[string]any in between. Over any other
// Table the Repository builds store.Entity values as before.

// source is a struct value as a store.PropertySource.
type source struct {
	c *codec
	v reflect.Value
}

// WriteProperties implements store.PropertySource: the fields in name
// order, merged with the extra properties and the kind's discriminator.
func (s source) WriteProperties(w store.PropertyWriter) error {
	return s.c.writeProperties(s.v, w)
}

func (c *codec) writeProperties(v reflect.Value, w store.PropertyWriter) error {
	var extra map[string]any
	if c.extra != nil {
		if fv, ok := c.extra.get(v); ok {
			extra = fv.Interface().(map[string]any)
		}
	}
	discriminator := c.kind != nil && c.kind.Property != ""
	if len(extra) == 0 && !discriminator {
		for _, f := range c.sorted {
			if err := f.write(v, w); err != nil {
				return err
			}
		}
		return nil
	}
	// Merge the extra properties and the discriminator into name order.
	type named struct {
		n store.PropertyName
		v any
	}
	var others []named
	for k, x := range extra {
		if _, known := c.byName[k]; known || x == nil || (discriminator && k == c.kind.Property) {
			continue
		}
		if err := c.checkExtra(k, x); err != nil {
			return err
		}
		n, err := store.NewPropertyName(k)
		if err != nil {
			return c.extra.wrap(err, "extra property %q", k)
		}
		others = append(others, named{n, x})
	}
	if discriminator && c.byName[c.kind.Property] == nil {
		others = append(others, named{c.kindName, c.kind.Marker()})
	}
	slices.SortFunc(others, func(a, b named) int { return strings.Compare(a.n.String(), b.n.String()) })
	i := 0
	for _, f := range c.sorted {
		for ; i < len(others) && others[i].n.String() < f.name; i++ {
			if err := store.WriteValue(w, others[i].n, others[i].v); err != nil {
				return err
			}
		}
		if discriminator && f.name == c.kind.Property {
			// The kind's value wins over the field's, as in Encode.
			if err := w.String(f.pname, c.kind.Marker()); err != nil {
				return err
			}
			continue
		}
		if err := f.write(v, w); err != nil {
			return err
		}
	}
	for ; i < len(others); i++ {
		if err := store.WriteValue(w, others[i].n, others[i].v); err != nil {
			return err
		}
	}
	return nil
}

// write writes field f of struct v, or nothing when it is not stored.
func (f *field) write(v reflect.Value, w store.PropertyWriter) error {
	fv, ok := f.value(v)
	if !ok {
		return nil
	}
	switch f.kind {
	case kString:
		s := fv.String()
		if err := f.checkString(s); err != nil {
			return err
		}
		return w.String(f.pname, s)
	case kBool:
		return w.Bool(f.pname, fv.Bool())
	case kInt:
		if f.edm == store.EdmInt32 {
			return w.Int32(f.pname, int32(fv.Int()))
		}
		return w.Int64(f.pname, fv.Int())
	case kUint:
		u := fv.Uint()
		if f.edm == store.EdmInt32 {
			return w.Int32(f.pname, int32(u))
		}
		if u > math.MaxInt64 {
			_, err := f.encode(fv) // the overflow error
			return err
		}
		return w.Int64(f.pname, int64(u))
	case kFloat:
		return w.Double(f.pname, fv.Float())
	case kTime:
		t := timeAt(fv)
		if t.IsZero() {
			return nil
		}
		t, err := f.checkTime(t)
		if err != nil {
			return err
		}
		return w.Time(f.pname, t)
	case kBytes:
		b := bytesOf(fv)
		if b == nil {
			return nil
		}
		if err := f.checkBinary(len(b)); err != nil {
			return err
		}
		return w.Binary(f.pname, b)
	case kGUID:
		return w.GUID(f.pname, guidAt(fv))
	}
	// Text, custom and JSON values go through their store value.
	x, err := f.encode(fv)
	if err != nil || x == nil {
		return err
	}
	return store.WriteValue(w, f.pname, x)
}

// reader decodes the members a backend reads into a struct value: a
// store.EntityReader.
type reader struct {
	c      *codec
	v      reflect.Value
	pk, rk string
	extra  map[string]any
}

func newReader(c *codec, v reflect.Value) *reader {
	v.SetZero()
	return &reader{c: c, v: v}
}

// finish sets what needs every member first: keys through SetTableKeys,
// the extra map.
func (r *reader) finish() error {
	if r.c.keyMethod {
		if err := r.c.setKeys(r.v, r.pk, r.rk); err != nil {
			return err
		}
	}
	if r.extra != nil {
		fv, err := r.c.extra.target(r.v)
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(r.extra))
	}
	return nil
}

func (r *reader) SetPartitionKey(pk string) error {
	if r.c.keyMethod {
		r.pk = pk
		return nil
	}
	return r.c.pk.setKey(r.v, pk)
}

func (r *reader) SetRowKey(rk string) error {
	if r.c.keyMethod {
		r.rk = rk
		return nil
	}
	return r.c.rk.setKey(r.v, rk)
}

func (r *reader) SetTimestamp(t time.Time) error {
	if r.c.ts == nil {
		return nil
	}
	fv, err := r.c.ts.target(r.v)
	if err != nil {
		return err
	}
	return r.c.ts.setTimeRaw(fv, t)
}

func (r *reader) SetETag(etag store.ETag) error {
	if r.c.etag == nil {
		return nil
	}
	return r.c.etag.setKey(r.v, string(etag))
}

// field returns the target of property name, or a nil field for a name T
// does not map.
func (r *reader) field(name string) (*field, reflect.Value, error) {
	f := r.c.byName[name]
	if f == nil {
		return nil, reflect.Value{}, nil
	}
	fv, err := f.target(r.v)
	return f, fv, err
}

// other keeps a property T does not map in its extra field, if it has one.
func (r *reader) other(name string, val any) error {
	if r.c.extra == nil {
		return nil
	}
	if r.extra == nil {
		r.extra = make(map[string]any)
	}
	r.extra[strings.Clone(name)] = val
	return nil
}

func (r *reader) SetString(name, s string) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, s)
	}
	return f.setString(fv, s)
}

func (r *reader) SetBinary(name string, b []byte) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, b)
	}
	if f.kind == kBytes {
		f.deref(fv).SetBytes(b) // the reader owns b
		return nil
	}
	return f.setBytes(fv, b)
}

func (r *reader) SetBool(name string, b bool) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, b)
	}
	return f.decodeAny(fv, b)
}

func (r *reader) SetInt32(name string, n int32) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, n)
	}
	return f.setInt(fv, int64(n), store.EdmInt32)
}

func (r *reader) SetInt64(name string, n int64) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, n)
	}
	return f.setInt(fv, n, store.EdmInt64)
}

func (r *reader) SetDouble(name string, x float64) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, x)
	}
	return f.setFloat(fv, x)
}

func (r *reader) SetTime(name string, t time.Time) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, t)
	}
	return f.setTime(fv, t)
}

func (r *reader) SetGUID(name string, g store.GUID) error {
	f, fv, err := r.field(name)
	if err != nil {
		return err
	}
	if f == nil {
		return r.other(name, g)
	}
	return f.setGUID(fv, g)
}
