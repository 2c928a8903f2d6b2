package index

import (
	"fmt"
	"slices"
	"time"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// The typed lane: over a store.TypedTable (memstore, azstore) an insert
// hands the backend the struct itself as the source of the entity's
// properties and of each copy's (mapper.SourceOf), so the entity and its
// copies are written straight into the backend's form (the changeset body
// on Azure, packed records in memstore) with no map built for any of them.
// The rows equal those of the Entity route (copies): every property, or
// the projection, and RefProperty in its place by name.

// refName is RefProperty as a checked property name.
var refName = mustName(RefProperty)

func mustName(s string) store.PropertyName {
	n, err := store.NewPropertyName(s)
	if err != nil {
		panic(err)
	}
	return n
}

// typedInserts returns the insert of v and of its copies as typed
// actions, with the copies' keys.
func (x *Table[T]) typedInserts(v *T) ([]store.Action, []copyKey[T], error) {
	pk, rk, src, err := mapper.SourceOf(v)
	if err != nil {
		return nil, nil, err
	}
	cks, err := x.copyKeys(v, pk, rk)
	if err != nil {
		return nil, nil, err
	}
	acts := make([]store.Action, 1, 1+len(cks))
	acts[0] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, Source: src}
	for _, k := range cks {
		acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: k.rk},
			Source: copySource{src: src, project: k.spec.project, ref: rk}})
	}
	return acts, cks, nil
}

// copySource writes an index copy: the entity's properties (those of the
// projection, when there is one) with RefProperty, the entity's RowKey,
// in name order, replacing a property of that name.
type copySource struct {
	src     store.PropertySource
	project []string
	ref     string
}

// WriteProperties implements store.PropertySource.
func (c copySource) WriteProperties(w store.PropertyWriter) error {
	f := &copyWriter{w: w, c: &c}
	if err := c.src.WriteProperties(f); err != nil {
		return err
	}
	if !f.refDone {
		return w.String(refName, c.ref)
	}
	return nil
}

// copyWriter passes the entity's properties on to a copy's writer.
type copyWriter struct {
	w       store.PropertyWriter
	c       *copySource
	refDone bool
}

// pass reports whether property n goes into the copy, writing RefProperty
// first when n sorts after it.
func (f *copyWriter) pass(n store.PropertyName) (bool, error) {
	name := n.String()
	if !f.refDone && name >= RefProperty {
		f.refDone = true
		if err := f.w.String(refName, f.c.ref); err != nil {
			return false, err
		}
		if name == RefProperty {
			return false, nil // the reference takes the name's place
		}
	}
	return f.c.project == nil || slices.Contains(f.c.project, name), nil
}

// forward passes v on with write when property n goes into the copy.
func forward[V any](f *copyWriter, n store.PropertyName, v V, write func(store.PropertyName, V) error) error {
	if ok, err := f.pass(n); !ok {
		return err
	}
	return write(n, v)
}

func (f *copyWriter) String(n store.PropertyName, v string) error {
	return forward(f, n, v, f.w.String)
}
func (f *copyWriter) Binary(n store.PropertyName, v []byte) error {
	return forward(f, n, v, f.w.Binary)
}
func (f *copyWriter) Bool(n store.PropertyName, v bool) error   { return forward(f, n, v, f.w.Bool) }
func (f *copyWriter) Int32(n store.PropertyName, v int32) error { return forward(f, n, v, f.w.Int32) }
func (f *copyWriter) Int64(n store.PropertyName, v int64) error { return forward(f, n, v, f.w.Int64) }
func (f *copyWriter) Double(n store.PropertyName, v float64) error {
	return forward(f, n, v, f.w.Double)
}
func (f *copyWriter) Time(n store.PropertyName, v time.Time) error {
	return forward(f, n, v, f.w.Time)
}
func (f *copyWriter) GUID(n store.PropertyName, v store.GUID) error {
	return forward(f, n, v, f.w.GUID)
}

// found is what Find reads a full copy into on the typed lane: the value
// and the reader that fills it, one allocation for the two.
type found[T any] struct {
	v T
	r copyReader
}

// readCopy readies f to read a full copy into f.v on the typed lane (the
// repository's Reader), through f.r: the copy's RowKey and ETag dropped
// and RefProperty taken as the entity's RowKey, as decodeCopy does with an
// Entity. It returns the read's finish.
func (x *Table[T]) readCopy(f *found[T]) (func() error, error) {
	rd, finish, err := x.repo.Reader(&f.v)
	if err != nil {
		return nil, err
	}
	f.r.EntityReader = rd
	return finish, nil
}

// end finishes the read of copy (pk, rk), refusing a row without a
// reference.
func (c *copyReader) end(pk, rk string, finish func() error) error {
	if !c.ref {
		return fmt.Errorf("index: row (%q, %q) is not an index copy: it has no %s", pk, rk, RefProperty)
	}
	return finish()
}

// copyReader hands a copy to a T's reader as the entity it copies.
type copyReader struct {
	store.EntityReader
	ref bool // RefProperty was read
}

// SetRowKey drops the copy's RowKey: RefProperty holds the entity's.
func (c *copyReader) SetRowKey(string) error { return nil }

// SetETag drops the copy's ETag, which is not the entity's.
func (c *copyReader) SetETag(store.ETag) error { return nil }

// SetString takes RefProperty as the entity's RowKey.
func (c *copyReader) SetString(name, v string) error {
	if name == RefProperty && v != "" {
		c.ref = true
		return c.EntityReader.SetRowKey(v)
	}
	return c.EntityReader.SetString(name, v)
}
