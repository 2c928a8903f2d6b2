package xindex

import (
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// copyAt is where one index copy of an entity lives.
type copyAt struct {
	table, pk, rk string
	value         string
}

// at returns where the copy of the entity with keys (pk, rk) and index
// value v lives, refusing a value or partition that cannot make a key
// (naming the value and the limit).
func (s *Spec[T]) at(pk, rk, v string) (copyAt, error) {
	cpk := s.partition(pk)
	var crk string
	var err error
	if s.unique {
		crk, err = keys.Join(s.name, v)
	} else {
		crk, err = keys.Join(s.name, v, pk, rk)
	}
	if err != nil {
		return copyAt{}, refuseFor(err, "index %s: value %q cannot make the copy's RowKey (the limit is %d UTF-16 units)", s.name, naming.Cut(v), store.MaxKeyUnits)
	}
	if err := store.ValidateKeys(cpk, crk); err != nil {
		return copyAt{}, fmt.Errorf("xindex: index %s: value %q (copy partition %q, %d UTF-16 units; RowKey %d; the limit is %d): %w",
			s.name, naming.Cut(v), naming.Cut(cpk), keys.UTF16Len(cpk), keys.UTF16Len(crk), store.MaxKeyUnits, err)
	}
	return copyAt{table: s.table, pk: cpk, rk: crk, value: v}, nil
}

// copyOf builds the copy row of entity e (T value v) for the index: the
// projected properties and the owner's keys. The worker adds the version.
func (s *Spec[T]) copyOf(at copyAt, e *store.Entity) store.Entity {
	c := store.Entity{PartitionKey: at.pk, RowKey: at.rk, Properties: map[string]any{
		SourcePartitionProperty: e.PartitionKey, SourceRowProperty: e.RowKey}}
	if s.project == nil {
		for k, pv := range e.Properties {
			if k != eventual.VersionProperty {
				c.Properties[k] = pv
			}
		}
	} else {
		for _, p := range s.project {
			if pv, ok := e.Properties[p]; ok {
				c.Properties[p] = pv
			}
		}
	}
	return c
}

// ownerOf reads the owner a copy or claim row names.
func ownerOf(e *store.Entity) Ref {
	pk, _ := e.Properties[SourcePartitionProperty].(string)
	rk, _ := e.Properties[SourceRowProperty].(string)
	return Ref{PartitionKey: pk, RowKey: rk}
}

// isTk reports a property of the package's or the engine's own.
func isTk(name string) bool {
	switch name {
	case SourcePartitionProperty, SourceRowProperty, ClaimProperty, ClaimedProperty, eventual.VersionProperty:
		return true
	}
	return false
}

// valueOf reads the index value out of a copy's RowKey.
func valueOf(rk string) string {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) < 2 {
		return rk
	}
	return parts[1]
}

// Hit is an entity found through an index copy: what the copy holds,
// which entity it belongs to, and the entity's version it was made from.
type Hit[T any] struct {
	// Value is decoded from the copy: the entity's keys and the copied
	// properties (only the projected ones when the index projects). It
	// carries no ETag: read the entity (FindFresh, Check) to update it.
	Value T
	// Index and IndexValue are the index and the value the copy is under.
	Index, IndexValue string
	// Source is the entity's keys.
	Source Ref
	// Version is the entity's version the copy was made from
	// (eventual.VersionProperty): compare it with the entity's to tell a
	// copy that is behind.
	Version int64
}

// decodeHit turns a copy row into a Hit.
func (x *Table[T]) decodeHit(s *Spec[T], c store.Entity) (Hit[T], error) {
	h := Hit[T]{Index: s.name, IndexValue: valueOf(c.RowKey), Source: ownerOf(&c), Version: eventual.VersionOf(&c)}
	if h.Source.RowKey == "" {
		return h, fmt.Errorf("xindex: row (%q, %q) of %s is not an index copy: it has no %s", c.PartitionKey, c.RowKey, s.table, SourceRowProperty)
	}
	e := store.Entity{PartitionKey: h.Source.PartitionKey, RowKey: h.Source.RowKey, Timestamp: c.Timestamp, Properties: make(map[string]any, len(c.Properties))}
	for k, pv := range c.Properties {
		if !isTk(k) {
			e.Properties[k] = pv
		}
	}
	if !strings.HasPrefix(e.RowKey, x.prefix) {
		return h, fmt.Errorf("xindex: copy (%q, %q) of %s names entity %s, which is not of this table's kind (prefix %q)", c.PartitionKey, c.RowKey, s.table, h.Source, x.prefix)
	}
	err := mapper.Decode(e, &h.Value)
	return h, err
}
