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
		others = append(others, named{c.kindName, c.marker})
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
			if err := w.String(f.pname, c.marker); err != nil {
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
// store.EntityReader. It never stops the backend: a value that does not
// decode is kept as the entity's error and the members after it are not
// decoded, but still watched for the kind's discriminator, so that finish
// reports a row of another kind before any decoding error, as
// decodeEntity does, without a store.Entity being built.
type reader struct {
	c      *codec
	v      reflect.Value
	pk, rk string
	extra  map[string]any
	// err is the first member that did not decode; skip stops decoding
	// (after an error, or for a RowKey outside the kind's prefix).
	err  error
	skip bool
	// The discriminator's stored value, for a type with one: a string in
	// disc (discSet), any other type boxed in discOther.
	disc      string
	discSet   bool
	discOther any
}

func newReader(c *codec, v reflect.Value) *reader {
	r := &reader{c: c, v: v}
	r.reset()
	return r
}

// reset readies the reader for the next entity: the value zeroed, the
// state cleared.
func (r *reader) reset() {
	r.v.SetZero()
	*r = reader{c: r.c, v: r.v}
}

// finish checks the kind and sets what needs every member first: keys
// through SetTableKeys, the extra map. It returns the entity's error.
func (r *reader) finish() error {
	if r.c.kind != nil {
		if err := r.c.checkRow(r.pk, r.rk, r.disc, r.discSet, r.discOther); err != nil {
			return err
		}
	}
	if r.err != nil {
		return r.err
	}
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

// fail keeps the entity's first error and stops decoding.
func (r *reader) fail(err error) {
	if err != nil && r.err == nil {
		r.err, r.skip = err, true
	}
}

// isDisc reports whether name is the kind's discriminator.
func (r *reader) isDisc(name string) bool {
	d := r.c.kindName.String()
	return d != "" && name == d
}

func (r *reader) SetPartitionKey(pk string) error {
	r.pk = pk
	if !r.c.keyMethod && !r.skip {
		r.fail(r.c.pk.setKey(r.v, pk))
	}
	return nil
}

func (r *reader) SetRowKey(rk string) error {
	r.rk = rk
	if k := r.c.kind; k != nil && k.Prefix != "" && !strings.HasPrefix(rk, k.Prefix) {
		r.skip = true // another kind's row: finish says so
	}
	if !r.c.keyMethod && !r.skip {
		r.fail(r.c.rk.setKey(r.v, rk))
	}
	return nil
}

func (r *reader) SetTimestamp(t time.Time) error {
	if r.c.ts == nil || r.skip {
		return nil
	}
	fv, err := r.c.ts.target(r.v)
	if err == nil {
		err = r.c.ts.setTimeRaw(fv, t)
	}
	r.fail(err)
	return nil
}

func (r *reader) SetETag(etag store.ETag) error {
	if r.c.etag == nil || r.skip {
		return nil
	}
	r.fail(r.c.etag.setKey(r.v, string(etag)))
	return nil
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
func (r *reader) other(name string, val any) {
	if r.c.extra == nil {
		return
	}
	if r.extra == nil {
		r.extra = make(map[string]any)
	}
	r.extra[strings.Clone(name)] = val
}

func (r *reader) SetString(name, s string) error {
	if r.isDisc(name) {
		r.disc, r.discSet, r.discOther = s, true, nil
	}
	if r.skip {
		return nil
	}
	f, fv, err := r.field(name)
	if err == nil && f == nil {
		r.other(name, s)
		return nil
	}
	if err == nil {
		err = f.setString(fv, s)
	}
	r.fail(err)
	return nil
}

func (r *reader) SetBinary(name string, b []byte) error {
	if r.isDisc(name) {
		r.discOther, r.discSet = b, false
	}
	if r.skip {
		return nil
	}
	f, fv, err := r.field(name)
	if err == nil && f == nil {
		if len(b) == 0 {
			b = nil // as decodeEntity copies it
		}
		r.other(name, b)
		return nil
	}
	if err == nil {
		if f.kind == kBytes {
			if b == nil {
				b = []byte{} // as setBytes copies it
			}
			f.deref(fv).SetBytes(b) // the reader owns b
		} else {
			err = f.setBytes(fv, b)
		}
	}
	r.fail(err)
	return nil
}

func (r *reader) SetBool(name string, b bool) error {
	return setMember(r, name, b, func(f *field, fv reflect.Value) error { return f.decodeAny(fv, b) })
}

func (r *reader) SetInt32(name string, n int32) error {
	return setMember(r, name, n, func(f *field, fv reflect.Value) error { return f.setInt(fv, int64(n), store.EdmInt32) })
}

func (r *reader) SetInt64(name string, n int64) error {
	return setMember(r, name, n, func(f *field, fv reflect.Value) error { return f.setInt(fv, n, store.EdmInt64) })
}

func (r *reader) SetDouble(name string, x float64) error {
	return setMember(r, name, x, func(f *field, fv reflect.Value) error { return f.setFloat(fv, x) })
}

func (r *reader) SetTime(name string, t time.Time) error {
	return setMember(r, name, t, func(f *field, fv reflect.Value) error { return f.setTime(fv, t) })
}

func (r *reader) SetGUID(name string, g store.GUID) error {
	return setMember(r, name, g, func(f *field, fv reflect.Value) error { return f.setGUID(fv, g) })
}

// setMember is what every Set method of a non-string value does: note a
// discriminator of the wrong type, skip a refused row, keep a property T
// does not map in the extra field (or drop it), and set the field's value
// with set; a decoding error is kept for the end of the row.
func setMember[V any](r *reader, name string, x V, set func(*field, reflect.Value) error) error {
	if r.isDisc(name) {
		r.discOther, r.discSet = x, false
	}
	if r.skip {
		return nil
	}
	f, fv, err := r.field(name)
	if err == nil && f == nil {
		r.other(name, x)
		return nil
	}
	if err == nil {
		err = set(f, fv)
	}
	r.fail(err)
	return nil
}
