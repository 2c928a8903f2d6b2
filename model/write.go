package model

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// writeKind is what the caller asked for.
type writeKind int

const (
	wInsert writeKind = iota + 1
	wUpdate
	wUpsert
	wDelete
)

// encode maps v to its keys and properties, refusing properties the model
// keeps for itself.
func (m *Model[T]) encode(v *T) (pk, id string, props map[string]any, err error) {
	if v == nil {
		return "", "", nil, refuse("nil %T", v)
	}
	e, err := mapper.Encode(v)
	if err != nil {
		return "", "", nil, fmt.Errorf("model: %w", err)
	}
	for k := range e.Properties {
		if strings.HasPrefix(k, store.ReservedPrefix) {
			return "", "", nil, refuse("property %s of %T: names starting with Tk are the model's own", k, v)
		}
	}
	if err := store.ValidateKeys(e.PartitionKey, e.RowKey); err != nil {
		return "", "", nil, fmt.Errorf("model: entity (%q, %q): %w", e.PartitionKey, e.RowKey, err)
	}
	return e.PartitionKey, e.RowKey, e.Properties, nil
}

// decodeProps maps an entity's keys and properties to a T.
func decodeProps[T any](pk, id string, props map[string]any, etag store.ETag) (*T, error) {
	var v T
	if err := mapper.Decode(store.Entity{PartitionKey: pk, RowKey: id, ETag: etag, Properties: props}, &v); err != nil {
		return nil, fmt.Errorf("model: decode (%q, %q): %w", pk, id, err)
	}
	return &v, nil
}

// own strips the model's properties from a stored row's.
func own(props map[string]any) map[string]any {
	out := make(map[string]any, len(props))
	for k, v := range props {
		if !strings.HasPrefix(k, store.ReservedPrefix) {
			out[k] = v
		}
	}
	return out
}

// Insert adds *v: the entity, its copies in its partition and its log row
// in one transaction with the intent to write its copies elsewhere, after
// claiming its globally unique values. It stores the new ETag in v (when
// v has an etag field). An existing entity, or a unique value another
// entity holds, is a *partition.DuplicateError (partition.ErrDuplicate).
func (m *Model[T]) Insert(ctx context.Context, v *T) error {
	return m.put(ctx, wInsert, v, store.Replace)
}

// Update merges or replaces the stored entity with *v. When v's etag
// field holds an ETag the write applies only over that ETag (a
// *partition.ChangedError otherwise); a missing entity is a
// *partition.ChangedError with Missing set. Copies whose value changed are
// moved: the old removed, the new written, in the same plan.
func (m *Model[T]) Update(ctx context.Context, v *T, mode store.UpdateMode) error {
	return m.put(ctx, wUpdate, v, mode)
}

// Upsert inserts *v, or merges or replaces the stored entity with it.
func (m *Model[T]) Upsert(ctx context.Context, v *T, mode store.UpdateMode) error {
	return m.put(ctx, wUpsert, v, mode)
}

// Delete removes entity (pk, id), every copy of it and (through the
// engine) its copies elsewhere; the log keeps its history and records the
// delete. ifMatch is the ETag the entity must still have, or "" for any.
func (m *Model[T]) Delete(ctx context.Context, pk, id string, ifMatch store.ETag) error {
	if ctx == nil {
		return refuse("the context is nil")
	}
	if err := store.ValidateKeys(pk, id); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	_, err := m.write(ctx, wDelete, pk, id, nil, nil, store.Replace, ifMatch)
	return err
}

func (m *Model[T]) put(ctx context.Context, k writeKind, v *T, mode store.UpdateMode) error {
	if ctx == nil {
		return refuse("the context is nil")
	}
	pk, id, props, err := m.encode(v)
	if err != nil {
		return err
	}
	blobs, err := m.blobValues(v)
	if err != nil {
		return err
	}
	var ifMatch store.ETag
	if k == wUpdate {
		ifMatch = mapper.ETagOf(v)
	}
	etag, err := m.write(ctx, k, pk, id, props, blobs, mode, ifMatch)
	if err != nil {
		return err
	}
	if etag != "" {
		_ = mapper.SetETag(v, etag)
	}
	return nil
}

// txWrite is what one attempt of a write planned: enough to release its
// claims and name a taken value.
type txWrite struct {
	labels map[string][2]string // row label -> index, value
	claims []heldClaim
	prev   string // the entity in flight an arrival comes from
	read   bool   // an insert reads the entity before planning
	// the write's new blobs, put before it; the removal of the blobs the
	// entity stops naming (steps of its operation)
	blobs     *blobWrite
	blobSteps []eventual.Step
	// side are the claims of the write's non-unique global values, sent
	// beside its transaction (nil: every claim is made before it, as
	// Repair and a move's arrival make them); wanted the places the
	// current attempt claims.
	side   sideClaims
	wanted map[at]bool
}

// write plans and commits one write of entity (pk, id): props is the new
// state as the caller gave it (nil for a delete), blobs its blob values
// (written first, under fresh names). It returns the entity's new ETag
// ("" when unknown or deleted).
func (m *Model[T]) write(ctx context.Context, k writeKind, pk, id string, props map[string]any, blobs *blobWrite, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	ek, err := entityKey(id)
	if err != nil {
		return "", refuse("id %q: %v", id, err)
	}
	token, err := newToken()
	if err != nil {
		return "", err
	}
	if err := m.putBlobs(ctx, pk, id, blobs); err != nil {
		return "", err
	}
	// The claims of non-unique global values go beside the transaction
	// (claimBeside): the write waits for them, even when it panics.
	w := txWrite{side: sideClaims{}}
	defer func() {
		for _, s := range w.side {
			<-s.done
		}
	}()
	attempt := func(tx *eventual.Tx) error {
		w.labels, w.blobs, w.wanted = map[string][2]string{}, blobs, map[at]bool{}
		return m.plan(ctx, tx, &w, token, k, pk, id, ek, props, mode, ifMatch)
	}
	res, err := m.eng.Write(ctx, m.table, pk, attempt)
	if k == wInsert && entityTaken(err) {
		// The blind insert met a row at the entity's key: plan again
		// from what is there (a duplicate, an entity moving, a stale
		// reservation an insert may take).
		m.settleSide(ctx, &w, err)
		m.release(ctx, w.claims)
		w = txWrite{read: true, side: sideClaims{}}
		res, err = m.eng.Write(ctx, m.table, pk, attempt)
	}
	m.settleSide(ctx, &w, err)
	if err != nil {
		if !errors.Is(err, store.ErrUnknownOutcome) {
			m.release(ctx, w.claims)
			m.dropBlobs(ctx, blobs) // not committed: no row names them
		}
		return "", m.named(ctx, pk, err, w.labels)
	}
	if k == wDelete || len(res.ETags) == 0 {
		return "", nil
	}
	return res.ETags[0], nil
}

// plan adds every row of one write to tx: the entity first, then the
// copies in its partition, the log row, the intent for the copies
// elsewhere (claiming new globally unique values before).
func (m *Model[T]) plan(ctx context.Context, tx *eventual.Tx, w *txWrite, token string, k writeKind, pk, id, ek string,
	props map[string]any, mode store.UpdateMode, ifMatch store.ETag) error {
	// An insert does not read the entity first: its transaction inserts
	// the row, which the service refuses if it exists (and write then
	// reads it, to tell a duplicate from an entity moving or a stale
	// reservation).
	var cur store.Entity
	var err error
	found := false
	if k != wInsert || w.read {
		cur, err = m.st.Table(m.table).Get(ctx, pk, ek, nil)
		found = err == nil
		if err != nil && !store.EntityNotFound(err) {
			return err
		}
	}
	row := partition.Row{Label: "entity", Index: 0, RowKey: ek}
	var over store.ETag // a stale reservation the entity is written over
	if found && moving(&cur) {
		if _, r := cur.Properties[MovingFromProperty]; r {
			st, err := m.stale(ctx, &cur, eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: ek})
			if err != nil {
				return err
			}
			if st {
				found, over = false, cur.ETag
			}
		}
		if found {
			return fmt.Errorf("%w: (%q, %q) of %s: %w", ErrMoving, pk, id, m.table,
				clientErr(store.CodeEntityAlreadyExists, 409, "model: entity %q is moving", id))
		}
	}
	switch {
	case k == wInsert && found:
		row.Kind = store.ActionInsert
		return &partition.DuplicateError{Table: m.table, Partition: pk, Row: row,
			Err: clientErr(store.CodeEntityAlreadyExists, 409, "model: entity %q exists", id)}
	case (k == wUpdate || k == wDelete) && !found:
		row.Kind = store.ActionUpdateReplace
		return &partition.ChangedError{Table: m.table, Partition: pk, Row: row, Missing: true,
			Err: clientErr(store.CodeResourceNotFound, 404, "model: entity %q does not exist", id)}
	case (k == wUpdate || k == wDelete) && ifMatch != "" && ifMatch != store.ETagAny && ifMatch != cur.ETag:
		row.Kind = store.ActionUpdateReplace
		return &partition.ChangedError{Table: m.table, Partition: pk, Row: row,
			Err: clientErr(store.CodeUpdateConditionNotSatisfied, 412, "model: entity %q changed since it was read", id)}
	}
	if found {
		// A row written without the model: its copies may hold values
		// it no longer shows, so nothing is planned over it (Repair).
		if err := m.intact(&cur); err != nil {
			return err
		}
	}
	var old, now *T
	var oldProps, newProps map[string]any
	if found {
		oldProps = own(cur.Properties)
		if old, err = decodeProps[T](pk, id, oldProps, ""); err != nil {
			return err
		}
	}
	if k != wDelete {
		newProps = props
		if found && mode == store.Merge {
			newProps = maps.Clone(oldProps)
			maps.Copy(newProps, props)
		}
		if now, err = decodeProps[T](pk, id, newProps, ""); err != nil {
			return err
		}
	}
	// The entity: replaced over the ETag read (under the fence), so a
	// row changed without the model since is reported, never overwritten.
	ent := store.Entity{PartitionKey: pk, RowKey: ek, Properties: maps.Clone(newProps)}
	if ent.Properties != nil {
		m.stampSum(ent.Properties)
	}
	if err := m.planBlobs(w, k, found, &cur, mode, ent.Properties); err != nil {
		return err
	}
	switch {
	case k == wDelete:
		err = tx.Delete("entity", ek, cur.ETag)
	case found:
		err = tx.Update("entity", ent, store.Replace, cur.ETag)
	case over != "":
		err = tx.Update("entity", ent, store.Replace, over)
	default:
		err = tx.Insert("entity", ent)
	}
	if err != nil {
		return err
	}
	// Copies in the partition.
	for _, f := range m.specs {
		if f.global {
			continue
		}
		var was, is string
		if old != nil {
			if val := f.value(old); val != "" {
				if was, err = localKey(f, val, id); err != nil {
					was = "" // a stored value made a valid key when written
				}
			}
		}
		if now != nil {
			if val := f.value(now); val != "" {
				if is, err = localKey(f, val, id); err != nil {
					return refuse("index %s: value %q: %v", f.name, val, err)
				}
				label := "index " + f.name
				w.labels[label] = [2]string{f.name, val}
				c := store.Entity{RowKey: is, Properties: carried(f, newProps)}
				c.Properties[IDProperty] = id
				m.stampCopy(c.Properties)
				if is == was {
					err = tx.Update(label, c, store.Replace, store.ETagAny)
				} else {
					err = tx.Insert(label, c)
				}
				if err != nil {
					return err
				}
			}
		}
		if was != "" && was != is {
			if err := tx.Delete("old index "+f.name, was, store.ETagAny); err != nil {
				return err
			}
		}
	}
	if m.log {
		lk, err := logKey(id, tx.Version())
		if err != nil {
			return err
		}
		op := "update"
		switch {
		case k == wDelete:
			op = "delete"
		case !found:
			op = "insert"
		}
		lp := map[string]any{OpProperty: op, IDProperty: id}
		if newProps != nil {
			maps.Copy(lp, newProps)
		}
		if err := tx.Insert("log", store.Entity{RowKey: lk, Properties: lp}); err != nil {
			return err
		}
	}
	if err := m.planLists(ctx, tx, pk, id, old, now); err != nil {
		return err
	}
	return m.planGlobal(ctx, tx, w, token, pk, id, ek, old, now, newProps)
}

// planGlobal claims the entity's new global values and adds the intent
// for its copies in the index table: a removal of every copy whose value
// went away, then a put of every copy of the new state.
func (m *Model[T]) planGlobal(ctx context.Context, tx *eventual.Tx, w *txWrite, token, pk, id, ek string, old, now *T, newProps map[string]any) error {
	var dels, puts []eventual.Step
	src := eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: ek}
	for _, f := range m.specs {
		if f.kind == featCopy {
			d, p, err := m.planCopy(f, old, now, newProps)
			if err != nil {
				return err
			}
			dels, puts = append(dels, d...), append(puts, p...)
			continue
		}
		if !f.global {
			continue
		}
		var was, is at
		if old != nil {
			if val := f.value(old); val != "" {
				was, _ = m.globalAt(f, val, pk, id)
			}
		}
		if now != nil {
			if val := f.value(now); val != "" {
				a, err := m.globalAt(f, val, pk, id)
				if err != nil {
					return refuse("index %s: value %q: %v", f.name, val, err)
				}
				is = a
				c := store.Entity{PartitionKey: is.pk, RowKey: is.rk, Properties: carried(f, newProps)}
				m.stampOwner(c.Properties, src)
				if err := store.ValidateEntity(&c); err != nil {
					return fmt.Errorf("model: index %s: value %q: the copy cannot be stored: %w", f.name, val, err)
				}
				puts = append(puts, m.newStep(f, actPut, c, token))
				switch {
				case was == is:
				case w.side != nil && !f.unique && w.prev == "":
					m.claimBeside(ctx, w, f, is, val, src, token)
				default:
					// A unique value, whose claim decides whether the
					// write may commit, or a claim of Repair or of a
					// move's arrival: made before the transaction.
					h, err := m.claim(ctx, f, is, val, src, token, w.prev, w.side != nil)
					if err != nil {
						return err
					}
					w.claims = append(w.claims, h)
				}
			}
		}
		if was.rk != "" && was != is {
			c := store.Entity{PartitionKey: was.pk, RowKey: was.rk}
			dels = append(dels, m.newStep(f, actDel, c, ""))
		}
	}
	steps := append(append(dels, puts...), w.blobSteps...)
	if len(steps) == 0 {
		return nil
	}
	return tx.Then(ctx, ek, steps...)
}

func (m *Model[T]) stampOwner(p map[string]any, src eventual.Ref) {
	p[SourceTableProperty] = src.Table
	p[SourcePartitionProperty] = src.PartitionKey
	p[SourceRowProperty] = src.RowKey
}

// named fills a duplicate of a unique index in the partition with the
// index, the value and the holder.
func (m *Model[T]) named(ctx context.Context, pk string, err error, labels map[string][2]string) error {
	var de *partition.DuplicateError
	if !errors.As(err, &de) || de.IndexName != "" {
		return err
	}
	iv, ok := labels[de.Label]
	if !ok {
		return err
	}
	de.IndexName, de.Value = iv[0], iv[1]
	if row, gerr := m.st.Table(m.table).Get(ctx, pk, de.RowKey, nil); gerr == nil {
		if hid, _ := row.Properties[IDProperty].(string); hid != "" {
			hk, _ := entityKey(hid)
			de.Holder = partition.Ref{PartitionKey: pk, RowKey: hk}
		}
	}
	return err
}

func clientErr(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, format, args...)
	e.Source = store.SourceClient
	return e
}

// idOf returns the id of an entity RowKey, "" for another kind of row.
func idOf(rk string) string {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 2 || parts[0] != "e" {
		return ""
	}
	return parts[1]
}

// entityTaken reports whether err is a commit refused because a row
// exists at the entity's own key.
func entityTaken(err error) bool {
	var d *partition.DuplicateError
	return errors.As(err, &d) && d.Row.Label == "entity"
}
