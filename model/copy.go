package model

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/store"
)

// copyPropPrefix starts the properties a copy keeps on its target beside
// the copied ones.
const copyPropPrefix = store.ReservedPrefix + "Dn_"

// copyProps names the properties a copy keeps on its target beside the
// copied ones: the source's version (TkDn_<name>_V) and keys
// (TkDn_<name>_Src).
func copyProps[T any](f *Feature[T]) (ver, src string) {
	return copyPropPrefix + f.name + "_V", copyPropPrefix + f.name + "_Src"
}

// srcString names a source on its target: keys cannot hold "/".
func srcString(r eventual.Ref) string {
	return r.Table + "/" + r.PartitionKey + "/" + r.RowKey
}

// planCopy plans the steps of copy f for one write: a removal from the
// target the entity leaves, a put into the one it maps to.
func (m *Model[T]) planCopy(f *Feature[T], old, now *T, newProps map[string]any) (dels, puts []eventual.Step, err error) {
	var was, is at
	if old != nil {
		was.pk, was.rk = f.target(old)
	}
	if now != nil {
		is.pk, is.rk = f.target(now)
	}
	if now != nil && is != (at{}) {
		if err := store.ValidateKeys(is.pk, is.rk); err != nil {
			return nil, nil, fmt.Errorf("model: copy %s: target: %w", f.name, err)
		}
		c := store.Entity{PartitionKey: is.pk, RowKey: is.rk, Properties: map[string]any{}}
		for _, p := range f.props {
			v, ok := newProps[p]
			if !ok {
				return nil, nil, refuse("copy %s: the entity has no property %s", f.name, p)
			}
			c.Properties[p] = v
		}
		puts = append(puts, m.newStep(f, actCopyPut, c, ""))
	}
	if old != nil && was != is && was != (at{}) && store.ValidateKeys(was.pk, was.rk) == nil {
		dels = append(dels, m.newStep(f, actCopyDel, store.Entity{PartitionKey: was.pk, RowKey: was.rk}, ""))
	}
	return dels, puts, nil
}

// mapsTo reports whether entity src exists and maps copy f to target a.
func (m *Model[T]) mapsTo(ctx context.Context, f *Feature[T], src eventual.Ref, a at) (bool, error) {
	row, found, err := src.Read(ctx, m.st)
	if err != nil || !found || reserved(&row) {
		return false, err
	}
	v, err := decodeProps[T](src.PartitionKey, idOf(src.RowKey), own(row.Properties), "")
	if err != nil {
		return false, err
	}
	pk, rk := f.target(v)
	return at{pk, rk} == a, nil
}

// copyPut merges the copied properties into the target, unless the
// target holds this source's copy at the same or a newer version, or
// another source's copy whose source still maps to it.
func (m *Model[T]) copyPut(ctx context.Context, f *Feature[T], want store.Entity, src eventual.Ref, v int64) error {
	verP, srcP := copyProps(f)
	tbl := m.st.Table(f.table)
	a := at{want.PartitionKey, want.RowKey}
	me := srcString(src)
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
		if store.EntityNotFound(err) {
			return nil // nothing holds the copy
		}
		if err != nil {
			return err
		}
		s, _ := cur.Properties[srcP].(string)
		if cv, _ := cur.Properties[verP].(int64); s == me && cv >= v {
			return nil
		}
		if s != me {
			// No copy of this entity here: create none if the entity
			// moved on (its later operation carries its state).
			if moved, err := eventual.MovedPast(ctx, m.st, src, v); err != nil || moved {
				return err
			}
		}
		if s != "" && s != me {
			other, err := parseRef(s)
			if err != nil {
				return err
			}
			holds, err := m.mapsTo(ctx, f, other, a)
			if err != nil {
				return err
			}
			if in, err := m.movingTo(ctx, other, src); err != nil {
				return err
			} else if in {
				holds = false // the source in flight to this one
			}
			if holds {
				return fmt.Errorf("%w: copy %s, row (%q, %q) of %s: %s holds it, %s wants it at version %d",
					ErrOtherSource, f.name, a.pk, a.rk, f.table, s, me, v)
			}
		}
		// The target as read with the copy over it, replaced over the
		// ETag read: a merge of it, and one an encrypting table takes (a
		// merge of an encrypted property it refuses).
		merge := store.Entity{PartitionKey: a.pk, RowKey: a.rk, Properties: maps.Clone(cur.Properties)}
		maps.Copy(merge.Properties, want.Properties)
		merge.Properties[verP] = v
		merge.Properties[srcP] = me
		_, err = tbl.Update(ctx, merge, store.Replace, cur.ETag)
		if err == nil && s != me {
			// The entity may have moved on between the check and the
			// merge, its removal finding no copy: remove it then.
			if moved, err := eventual.MovedPast(ctx, m.st, src, v); err != nil || !moved {
				return err
			}
			return m.copyDel(ctx, f, a, src, v)
		}
		if err == nil {
			return nil
		}
		if !claims.Retryable(err) {
			return err
		}
	}
	return errContended
}

// copyDel removes this source's copied properties from the target, if
// the copy there is not newer, leaving the version so an older put that
// runs late does not bring them back.
func (m *Model[T]) copyDel(ctx context.Context, f *Feature[T], a at, src eventual.Ref, v int64) error {
	verP, srcP := copyProps(f)
	tbl := m.st.Table(f.table)
	me := srcString(src)
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		s, _ := cur.Properties[srcP].(string)
		cv, _ := cur.Properties[verP].(int64)
		if s != me || cv > v {
			return nil
		}
		if ok, err := m.mapsTo(ctx, f, src, a); err != nil || ok {
			return err // it maps here again: a later operation refreshes it
		}
		next := store.Entity{PartitionKey: a.pk, RowKey: a.rk, Properties: maps.Clone(cur.Properties)}
		for _, p := range f.props {
			delete(next.Properties, p)
		}
		next.Properties[verP] = v
		_, err = tbl.Update(ctx, next, store.Replace, cur.ETag)
		if err == nil || store.EntityNotFound(err) {
			return nil
		}
		if !claims.Retryable(err) {
			return err
		}
	}
	return errContended
}

// parseRef reads a source written by srcString.
func parseRef(s string) (eventual.Ref, error) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 {
		return eventual.Ref{}, errors.New("model: unreadable copy source " + s)
	}
	return eventual.Ref{Table: parts[0], PartitionKey: parts[1], RowKey: parts[2]}, nil
}

// SourceOf returns the entity whose copy name (a CopyTo of this model) the
// row (pk, rk) of the copy's table holds: a department row's manager. It
// reads the row, then the entity it names, and returns the entity (with
// its ETag) only when it still maps to that row, so a copy left behind by
// an entity that moved on, or by one deleted, is never taken for the
// current source. A row that holds no copy of the model, or whose entity
// no longer maps to it, is an error matching store.ErrNotFound. Two point
// reads.
func (m *Model[T]) SourceOf(ctx context.Context, name, pk, rk string) (*T, error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	f := m.byName[name]
	if f == nil || f.kind != featCopy {
		return nil, refuse("no copy named %q is declared (a CopyTo of this model)", name)
	}
	if err := store.ValidateKeys(pk, rk); err != nil {
		return nil, fmt.Errorf("model: copy %s: %w", name, err)
	}
	row, err := m.st.Table(f.table).Get(ctx, pk, rk, nil)
	if err != nil {
		return nil, err
	}
	_, srcP := copyProps(f)
	s, _ := row.Properties[srcP].(string)
	if s == "" {
		return nil, notFound("row (%q, %q) of %s holds no copy %s", pk, rk, f.table, name)
	}
	src, err := parseRef(s)
	if err != nil {
		return nil, fmt.Errorf("%w: row (%q, %q) of %s: %s %q: %w", ErrBypassed, pk, rk, f.table, srcP, s, err)
	}
	if src.Table != m.table {
		return nil, notFound("row (%q, %q) of %s holds the copy %s of an entity of %s, not of %s", pk, rk, f.table, name, src.Table, m.table)
	}
	id := idOf(src.RowKey)
	if id == "" {
		return nil, notFound("row (%q, %q) of %s: its copy %s names %s, not an entity", pk, rk, f.table, name, s)
	}
	v, err := m.Get(ctx, src.PartitionKey, id)
	if store.EntityNotFound(err) {
		return nil, notFound("row (%q, %q) of %s: the entity (%q, %q) its copy %s names is gone", pk, rk, f.table, src.PartitionKey, id, name)
	}
	if err != nil {
		return nil, err
	}
	if tpk, trk := f.target(v); tpk != pk || trk != rk {
		return nil, notFound("row (%q, %q) of %s: entity (%q, %q) no longer maps its copy %s to it", pk, rk, f.table, src.PartitionKey, id, name)
	}
	return v, nil
}
