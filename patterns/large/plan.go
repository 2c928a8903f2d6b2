package large

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// blobValue is one large value bound for a blob.
type blobValue struct {
	prop string
	typ  store.EdmType
	body []byte // the blob's content: the value, compressed or not
	ref  Ref
}

// plan is one logical write: the entity as written (references in place
// of the values that go to blobs) and the blobs.
type plan struct {
	entity store.Entity
	blobs  []*blobValue
}

// minMove is the smallest value moved to a blob to bring the entity
// within its budget: a reference and a request cost more than a value of
// 1 KiB or less saves.
const minMove = 1024

// plan maps v and decides which large values go to blobs. It checks
// everything that can be checked before a request: the mapping, the
// keys (and their room in the blobs' names) and the entity as it will be
// written, so a value that cannot be stored is refused with nothing
// written.
func (s *Store[T]) plan(v *T) (*plan, error) {
	if v == nil {
		var zero T
		return nil, refuse("nil *%T", zero)
	}
	e, err := mapper.EncodeLarge(v)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateKeys(e.PartitionKey, e.RowKey); err != nil {
		return nil, fmt.Errorf("large: %s: %w", entityName(s.tableName, e.PartitionKey, e.RowKey), err)
	}
	p := &plan{entity: e}
	type inline struct {
		lf   *mapper.LargeField
		data []byte
		size int
	}
	var stay []inline
	for i := range s.large {
		lf := &s.large[i]
		x, ok := e.Properties[lf.Property]
		if !ok {
			continue
		}
		data, size, over := measure(x)
		if over || size > s.o.Threshold {
			if err := s.toBlob(p, lf, data); err != nil {
				return nil, err
			}
			continue
		}
		stay = append(stay, inline{lf, data, size})
	}
	// Biggest first, until the entity is within its budget.
	slices.SortStableFunc(stay, func(a, b inline) int { return cmp.Compare(b.size, a.size) })
	for len(stay) > 0 && stay[0].size > minMove && store.EntitySize(&p.entity) > s.o.EntityBudget {
		if err := s.toBlob(p, stay[0].lf, stay[0].data); err != nil {
			return nil, err
		}
		stay = stay[1:]
	}
	if err := store.ValidateEntity(&p.entity); err != nil {
		return nil, fmt.Errorf("large: %s cannot be stored, even with its large values in blobs: %w",
			entityName(s.tableName, e.PartitionKey, e.RowKey), err)
	}
	return p, nil
}

// measure returns a large value's bytes, its size as the service counts
// it, and whether it passes the service's property limit.
func measure(x any) (data []byte, size int, over bool) {
	switch y := x.(type) {
	case string:
		n := store.UTF16Len(y)
		return []byte(y), 2 * n, n > store.MaxStringUnits
	case []byte:
		return y, len(y), len(y) > store.MaxBinaryBytes
	}
	return nil, 0, false
}

// toBlob moves large value data of lf out of the entity: a fresh blob
// name, the blob's content, and the reference in the entity.
func (s *Store[T]) toBlob(p *plan, lf *mapper.LargeField, data []byte) error {
	body, enc := encode(data, s.o.Compress)
	b := &blobValue{prop: lf.Property, typ: lf.Type, body: body,
		ref: Ref{Encoding: enc, Size: int64(len(data)), CRC32C: checksum(data)}}
	if err := s.name(p, b); err != nil {
		return err
	}
	p.blobs = append(p.blobs, b)
	return nil
}

// name gives b a fresh name and puts its reference in the entity.
func (s *Store[T]) name(p *plan, b *blobValue) error {
	id, err := s.ids.New()
	if err != nil {
		return fmt.Errorf("large: a blob name: %w", err)
	}
	pk, rk := p.entity.PartitionKey, p.entity.RowKey
	if err := checkName(s.tableName, pk, rk, b.prop, id); err != nil {
		return err
	}
	b.ref.Blob = blobName(s.tableName, pk, rk, b.prop, id)
	p.entity.Properties[b.prop] = stored(b.ref, b.typ)
	return nil
}

// renew gives every blob of p a fresh name (the content stays).
func (s *Store[T]) renew(p *plan) error {
	for _, b := range p.blobs {
		if err := s.name(p, b); err != nil {
			return err
		}
	}
	return nil
}

// references reports whether entity e holds the reference to blob name
// in one of T's large properties.
func (s *Store[T]) references(e *store.Entity, name string) bool {
	for _, r := range s.refsOf(e) {
		if r.Blob == name {
			return true
		}
	}
	return false
}

// refsOf returns the blob references entity e holds.
func (s *Store[T]) refsOf(e *store.Entity) []Ref {
	if e == nil {
		return nil
	}
	var out []Ref
	for i := range s.large {
		lf := &s.large[i]
		if r, ok, _ := refOf(e.Properties[lf.Property], lf.Type); ok {
			out = append(out, r)
		}
	}
	return out
}
