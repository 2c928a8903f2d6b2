package mapper

import (
	"fmt"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Encode maps v, a struct or a pointer to one, to an entity. Pass a pointer
// to avoid copying the struct. The entity's Timestamp and ETag are left
// empty: the service sets them, and a write takes the ETag as If-Match.
// []byte values in the entity share memory with v.
func Encode(v any) (store.Entity, error) {
	rv, c, err := structOf(v, false)
	if err != nil {
		return store.Entity{}, err
	}
	return c.encodeEntity(rv)
}

// SourceOf returns the keys of v, a non-nil pointer to a struct, and a
// store.PropertySource that writes its properties as Encode maps them: the
// typed form of an action on a store.TypedTable (memstore, azstore), which
// writes the struct straight into the backend's own form of an entity with
// no map in between. The source reads *v when the backend writes it, so *v
// must not change until the write returns. Its properties' values are
// checked as they are written (store.WriteSource); the keys are checked
// here as Encode checks them.
//
//	pk, rk, src, err := mapper.SourceOf(&order)
//	_, err = typed.Write(ctx, store.Action{Kind: store.ActionInsert,
//		Entity: store.Entity{PartitionKey: pk, RowKey: rk}, Source: src})
func SourceOf(v any) (pk, rk string, src store.PropertySource, err error) {
	if p := reflect.ValueOf(v); p.Kind() != reflect.Pointer || p.IsNil() {
		return "", "", nil, &Error{Msg: fmt.Sprintf("SourceOf takes a non-nil pointer to a struct, not %T(%v)", v, v)}
	}
	rv, c, err := structOf(v, false)
	if err != nil {
		return "", "", nil, err
	}
	if pk, rk, err = c.keysOf(rv); err != nil {
		return "", "", nil, err
	}
	return pk, rk, source{c, rv}, nil
}

// NewReader returns a store.EntityReader that reads one entity into v, a
// non-nil pointer to a struct, as Decode loads an Entity (v is zeroed
// first), and finish, which ends the read and returns its error: a value
// that does not fit its field, a row of another kind (ErrWrongKind), a
// failing SetTableKeys. It is the typed form of a read on a
// store.TypedTable (GetInto, QueryInto's readers), with no Entity in
// between; a caller may wrap the reader to change what it is handed.
//
//	rd, finish, err := mapper.NewReader(&order)
//	if err == nil {
//		if err = typed.GetInto(ctx, pk, rk, nil, rd); err == nil {
//			err = finish()
//		}
//	}
func NewReader(v any) (rd store.EntityReader, finish func() error, err error) {
	rv, c, err := structOf(v, true)
	if err != nil {
		return nil, nil, err
	}
	r := newReader(c, rv)
	return r, r.finish, nil
}

// Decode loads entity e into v, which must be a non-nil pointer to a
// struct. v is reset to its zero value first, so a property e lacks leaves
// the zero value. The keys, ETag and Timestamp go to the fields tagged for
// them (or to SetTableKeys); properties the struct does not know go to its
// extra field, if it has one, and are dropped otherwise.
func Decode(e store.Entity, v any) error {
	rv, c, err := structOf(v, true)
	if err != nil {
		return err
	}
	return c.decodeEntity(&e, rv)
}

// structOf returns the addressable struct value behind v and its codec.
func structOf(v any, mustPtr bool) (reflect.Value, *codec, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return rv, nil, &Error{Type: rv.Type(), Msg: "nil pointer"}
		}
		rv = rv.Elem()
	} else if mustPtr {
		if !rv.IsValid() {
			return rv, nil, &Error{Msg: "cannot decode into nil: want a pointer to a struct"}
		}
		return rv, nil, &Error{Type: rv.Type(), Msg: fmt.Sprintf("cannot decode into a %s value: want a pointer to a struct", rv.Type())}
	} else if rv.IsValid() {
		// Make an addressable copy so methods with pointer receivers work.
		p := reflect.New(rv.Type()).Elem()
		p.Set(rv)
		rv = p
	} else {
		return rv, nil, &Error{Msg: "cannot encode nil: want a struct or a pointer to one"}
	}
	c, err := codecFor(rv.Type())
	return rv, c, err
}

// keysOf returns the entity keys of struct value v.
// A RowKey that does not start with the type's kind prefix is refused.
func (c *codec) keysOf(v reflect.Value) (pk, rk string, err error) {
	if c.keyMethod {
		pk, rk, err = v.Addr().Interface().(KeyMaker).TableKeys()
		if err != nil {
			return pk, rk, &Error{Type: c.typ, Msg: "TableKeys", Err: err}
		}
		return pk, rk, c.checkKey(rk)
	}
	pkv, ok1 := c.pk.get(v)
	rkv, ok2 := c.rk.get(v)
	if !ok1 || !ok2 {
		return "", "", &Error{Type: c.typ, Msg: "a key field is inside a nil embedded pointer"}
	}
	return pkv.String(), rkv.String(), c.checkKey(rkv.String())
}

// etagOf returns the ETag held by v's etag field, or "" when it has none.
func (c *codec) etagOf(v reflect.Value) store.ETag {
	if c.etag == nil {
		return ""
	}
	fv, ok := c.etag.get(v)
	if !ok {
		return ""
	}
	return store.ETag(fv.String())
}

// setMeta writes the ETag (and Timestamp, when known) back into v after a write.
func (c *codec) setMeta(v reflect.Value, etag store.ETag) error {
	if c.etag == nil {
		return nil
	}
	fv, err := c.etag.target(v)
	if err != nil {
		return err
	}
	fv.SetString(string(etag))
	return nil
}

func (c *codec) encodeEntity(v reflect.Value) (store.Entity, error) {
	var e store.Entity
	var err error
	if e.PartitionKey, e.RowKey, err = c.keysOf(v); err != nil {
		return e, err
	}
	var extra map[string]any
	if c.extra != nil {
		if fv, ok := c.extra.get(v); ok {
			extra = fv.Interface().(map[string]any)
		}
	}
	e.Properties = make(map[string]any, len(c.fields)+len(extra))
	for i := range c.fields {
		f := &c.fields[i]
		fv, ok := f.value(v)
		if !ok {
			continue
		}
		x, err := f.encode(fv)
		if err != nil {
			return store.Entity{}, err
		}
		if x != nil {
			e.Properties[f.name] = x
		}
	}
	for k, x := range extra {
		if _, known := c.byName[k]; known || x == nil {
			continue
		}
		if err := c.checkExtra(k, x); err != nil {
			return store.Entity{}, err
		}
		e.Properties[k] = x
	}
	if err := c.stampKind(e.Properties); err != nil {
		return store.Entity{}, err
	}
	return e, nil
}

// checkExtra refuses an extra property the store would refuse, naming it.
func (c *codec) checkExtra(k string, x any) error {
	if err := store.ValidatePropertyName(k); err != nil {
		return c.extra.wrap(err, "extra property %q", k)
	}
	if err := store.ValidateValue(k, x); err != nil {
		return c.extra.wrap(err, "extra property %q", k)
	}
	return nil
}

func (c *codec) decodeEntity(e *store.Entity, v reflect.Value) error {
	if err := c.checkKind(e); err != nil {
		return err
	}
	v.SetZero()
	if err := c.decodeMeta(e, v); err != nil {
		return err
	}
	for i := range c.fields {
		f := &c.fields[i]
		val, ok := e.Properties[f.name]
		if !ok || val == nil {
			continue
		}
		fv, err := f.target(v)
		if err != nil {
			return err
		}
		if err := f.decodeAny(fv, val); err != nil {
			return err
		}
	}
	if c.extra != nil && len(e.Properties) > 0 {
		var extra map[string]any
		for k, val := range e.Properties {
			if _, known := c.byName[k]; known || val == nil {
				continue
			}
			if extra == nil {
				// At most every property T does not map: sized once.
				extra = make(map[string]any, max(len(e.Properties)-len(c.fields), 1))
			}
			if b, ok := val.([]byte); ok {
				val = append([]byte(nil), b...)
			}
			extra[k] = val
		}
		if extra != nil {
			fv, err := c.extra.target(v)
			if err != nil {
				return err
			}
			fv.Set(reflect.ValueOf(extra))
		}
	}
	return nil
}

// decodeMeta sets v's keys, ETag and Timestamp from e.
func (c *codec) decodeMeta(e *store.Entity, v reflect.Value) error {
	if err := c.setKeys(v, e.PartitionKey, e.RowKey); err != nil {
		return err
	}
	if c.etag != nil && e.ETag != "" {
		fv, err := c.etag.target(v)
		if err != nil {
			return err
		}
		fv.SetString(string(e.ETag))
	}
	if c.ts != nil && !e.Timestamp.IsZero() {
		fv, err := c.ts.target(v)
		if err != nil {
			return err
		}
		if err := c.ts.setTimeRaw(fv, e.Timestamp); err != nil {
			return err
		}
	}
	return nil
}

// setKeys writes the keys into the key fields or through SetTableKeys.
func (c *codec) setKeys(v reflect.Value, pk, rk string) error {
	if c.keyMethod {
		if !c.keySetter {
			return nil
		}
		if err := v.Addr().Interface().(KeySetter).SetTableKeys(pk, rk); err != nil {
			return &Error{Type: c.typ, Msg: fmt.Sprintf("SetTableKeys(%s, %s)", quote(pk), quote(rk)), Err: err}
		}
		return nil
	}
	for _, kv := range [...]struct {
		f *field
		s string
	}{{c.pk, pk}, {c.rk, rk}} {
		fv, err := kv.f.target(v)
		if err != nil {
			return err
		}
		fv.SetString(kv.s)
	}
	return nil
}

// setTimeRaw sets a time.Time field (the timestamp role) from t.
func (f *field) setTimeRaw(fv reflect.Value, t time.Time) error {
	*(*time.Time)(fv.Addr().UnsafePointer()) = t.UTC()
	return nil
}

// SetETag stores etag in the etag field of v, a non-nil pointer to a
// mapped struct, as a write through a Repository does; a type without an
// etag field ignores it. Packages that write a value's entity themselves
// (inside a larger transaction, say) use it to hand the new ETag back.
func SetETag(v any, etag store.ETag) error {
	rv, c, err := structOf(v, true)
	if err != nil {
		return err
	}
	return c.setMeta(rv, etag)
}

// ETagOf returns the ETag held in the etag field of v (a struct or a
// pointer to one), or "" when it has none.
func ETagOf(v any) store.ETag {
	rv, c, err := structOf(v, false)
	if err != nil {
		return ""
	}
	return c.etagOf(rv)
}

// KindOf returns the kind T declares (see Kind), or nil when it declares
// none or cannot be mapped.
func KindOf[T any]() *Kind {
	c, err := codecFor(reflect.TypeFor[T]())
	if err != nil || c.kind == nil {
		return nil
	}
	k := *c.kind
	return &k
}

// PropertyNames returns the property names T maps to (not the keys, the
// ETag or the Timestamp), in struct field order, or the error that makes T
// unmappable.
func PropertyNames[T any]() ([]string, error) {
	c, err := codecFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	names := make([]string, len(c.fields))
	for i := range c.fields {
		names[i] = c.fields[i].name
	}
	return names, nil
}
