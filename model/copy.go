package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// copyStep is a step of copy f into row c of table.
func (m *Model[T]) copyStep(act, table string, f *Feature[T], c store.Entity) eventual.Step {
	data, _ := json.Marshal(stepData{Index: f.name, Action: act})
	return eventual.Custom(m.step, table, c, data)
}

// planCopy plans the steps of copy f for one write: a removal from every
// target the entity leaves, a put into every one it maps to (its
// properties under their names on the targets). A target refused
// (targetsOf) or a property the target's table would store in plain text
// refuses the write.
func (m *Model[T]) planCopy(f *Feature[T], old, now *T, newProps map[string]any) (dels, puts []eventual.Step, err error) {
	var was, is []eventual.Ref
	if old != nil {
		was, _ = m.targetsOf(f, old)
	}
	if now != nil {
		if is, err = m.targetsOf(f, now); err != nil {
			return nil, nil, err
		}
		if len(is) > 0 {
			copied := map[string]any{}
			for i, p := range f.props {
				v, ok := newProps[p]
				if !ok {
					return nil, nil, refuse("copy %s: the entity has no property %s", f.name, p)
				}
				copied[f.outs[i]] = v
			}
			checked := map[string]bool{}
			for _, t := range is {
				if !checked[t.Table] {
					if err := m.checkEncrypted(f, t.Table); err != nil {
						return nil, nil, err
					}
					checked[t.Table] = true
				}
				c := store.Entity{PartitionKey: t.PartitionKey, RowKey: t.RowKey, Properties: maps.Clone(copied)}
				puts = append(puts, m.copyStep(actCopyPut, t.Table, f, c))
			}
		}
	}
	for _, t := range was {
		if !slices.Contains(is, t) {
			dels = append(dels, m.copyStep(actCopyDel, t.Table, f, store.Entity{PartitionKey: t.PartitionKey, RowKey: t.RowKey}))
		}
	}
	return dels, puts, nil
}

// mapsTo reports whether entity src exists and maps copy f to target a.
func (m *Model[T]) mapsTo(ctx context.Context, f *Feature[T], src eventual.Ref, a eventual.Ref) (bool, error) {
	row, found, err := src.Read(ctx, m.st)
	if err != nil || !found || reserved(&row) {
		return false, err
	}
	v, err := decodeProps[T](src.PartitionKey, idOf(src.RowKey), own(row.Properties), "")
	if err != nil {
		return false, err
	}
	ts, _ := m.targetsOf(f, v)
	return slices.Contains(ts, a), nil
}

// copyPut merges the copied properties into the target, unless the
// target holds this source's copy at the same or a newer version, or
// another source's copy whose source still maps to it.
func (m *Model[T]) copyPut(ctx context.Context, f *Feature[T], table string, want store.Entity, src eventual.Ref, v int64) error {
	verP, srcP := copyProps(f)
	tbl := m.st.Table(table)
	a := eventual.Ref{Table: table, PartitionKey: want.PartitionKey, RowKey: want.RowKey}
	me := srcString(src)
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.PartitionKey, a.RowKey, nil)
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
		// No copy of this entity here (none, another's, or only the
		// mark a removal of its copy left, at an older version): its
		// later operation's removal may have run already and found
		// nothing, so create none if the entity moved on (that
		// operation carries its state).
		fresh := !holdsCopy(f, &cur, src)
		if fresh {
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
					ErrOtherSource, f.name, a.PartitionKey, a.RowKey, a.Table, s, me, v)
			}
		}
		// The target as read with the copy over it, replaced over the
		// ETag read: a merge of it, and one an encrypting table takes (a
		// merge of an encrypted property it refuses).
		merge := store.Entity{PartitionKey: a.PartitionKey, RowKey: a.RowKey, Properties: maps.Clone(cur.Properties)}
		maps.Copy(merge.Properties, want.Properties)
		merge.Properties[verP] = v
		merge.Properties[srcP] = me
		_, err = tbl.Update(ctx, merge, store.Replace, cur.ETag)
		if err == nil && fresh {
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
func (m *Model[T]) copyDel(ctx context.Context, f *Feature[T], a eventual.Ref, src eventual.Ref, v int64) error {
	verP, srcP := copyProps(f)
	tbl := m.st.Table(a.Table)
	me := srcString(src)
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.PartitionKey, a.RowKey, nil)
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
		next := store.Entity{PartitionKey: a.PartitionKey, RowKey: a.RowKey, Properties: maps.Clone(cur.Properties)}
		for _, p := range f.outs {
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

// SourceOf returns the entity whose copy name (a CopyTo of this model,
// or a CopyToEach of one table) the row (pk, rk) of the copy's table
// holds: a department row's manager. It reads the row, then the entity it
// names, and returns the entity (with its ETag) only when it still maps
// to that row, so a copy left behind by an entity that moved on, or by
// one deleted, is never taken for the current source. A row that holds
// no copy of the model, or whose entity no longer maps to it, is an error
// matching store.ErrNotFound. Two point reads. CopyAt reads a copy of any
// table, and what it holds.
func (m *Model[T]) SourceOf(ctx context.Context, name, pk, rk string) (*T, error) {
	f := m.byName[name]
	if f == nil || f.kind != featCopy {
		return nil, refuse("no copy named %q is declared (a CopyTo of this model)", name)
	}
	if len(f.tables) != 1 {
		return nil, refuse("copy %s has %d tables (%s): name the row's table with CopyAt", name, len(f.tables), strings.Join(f.tables, ", "))
	}
	c, err := m.CopyAt(ctx, name, store.RowRef{Table: f.tables[0], PartitionKey: pk, RowKey: rk})
	if err != nil {
		return nil, err
	}
	if c.Entity == nil {
		return nil, notFound("row (%q, %q) of %s: entity (%q, %q) is gone or no longer maps its copy %s to it", pk, rk, f.tables[0], c.PartitionKey, c.ID, name)
	}
	return c.Entity, nil
}
