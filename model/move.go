package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Properties of a move.
const (
	// MovedToProperty marks the source row of an entity in flight: it
	// holds the entity's last state and names where it goes
	// (table/pk/rk), until the entity arrived there.
	MovedToProperty = "TkMovedTo"
	// MovingFromProperty marks the reservation a move makes at the
	// destination before the entity leaves: no other write takes the key.
	MovingFromProperty = "TkMovingFrom"
	// PrevProperty is kept on a claim a destination took over from the
	// entity in flight: lookups follow it until the entity arrived.
	PrevProperty = "TkPrev"
	// LogVersionProperty holds the original version of a log row moved
	// with its entity.
	LogVersionProperty = "TkLogV"
)

// MaxMovedLog bounds the log rows Move carries (they leave and arrive in
// one transaction each, at most 100 rows).
const MaxMovedLog = 80

// ErrMoving matches the error of a write to an entity that is moving (in
// flight, or reserved at its destination): retry once it arrived.
var ErrMoving = errors.New("model: the entity is moving")

// ErrMoveTarget matches the error of a move step whose destination holds
// another entity of the same id: a conflict of the data, not retried into
// success.
var ErrMoveTarget = errors.New("model: the move's destination holds another entity")

const (
	actMove    = "move"  // the arrival at the destination
	actMoveLog = "mlog"  // a log row the arrival carries
	actMoved   = "moved" // the removal of the source's marker
	actReceipt = "rcpt"  // the removal of the arrival's receipt
)

var errArrived = errors.New("model: arrived already")

// registry finds a destination model by engine and table in the worker.
var registry sync.Map // regKey -> any (*Model[T])

type regKey struct {
	eng   *eventual.Engine
	table string
}

// Move moves entity (pk, id) to partition dstPK of dst's table (dst may
// be m itself, for another partition): an archive, a transfer. It
// reserves the destination's key, then in one transaction of the source
// partition replaces the entity with a marker that holds its last state
// and names the destination, removes its partition copies and its log
// rows, and records the intent; the engine's worker then writes the
// entity, its partition copies and its log (a "move" entry, then the
// history) at the destination in one transaction of dst's partition,
// with dst's features, removes the marker, and removes the source's
// global copies and CopyTo copies that dst did not take over.
//
// dst must be defined on m's engine (every process working the queue
// defines it) over a type with the same fields. Until the entity arrived,
// Get and the global lookups of m read its last state at the source;
// after, only dst's do. Writes of a moving entity fail with ErrMoving.
// A destination key that holds a row is a *partition.DuplicateError; a
// missing entity, or one whose ETag is not ifMatch (when not ""), a
// *partition.ChangedError.
func (m *Model[T]) Move(ctx context.Context, pk, id string, dst *Model[T], dstPK string, ifMatch store.ETag) error {
	if ctx == nil {
		return refuse("the context is nil")
	}
	if dst == nil || dst.eng != m.eng {
		return refuse("move: the destination must be a model defined on the same engine")
	}
	ek, err := entityKey(id)
	if err != nil {
		return refuse("id %q: %v", id, err)
	}
	if err := store.ValidateKeys(pk, ek); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if err := store.ValidateKeys(dstPK, ek); err != nil {
		return fmt.Errorf("model: move: %w", err)
	}
	if dst.table == m.table && dstPK == pk {
		return refuse("move: (%q, %q) is already in %s", pk, id, m.table)
	}
	src := eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: ek}
	to := eventual.Ref{Table: dst.table, PartitionKey: dstPK, RowKey: ek}
	// A missing or moving entity is reported before anything is reserved
	// (the transaction checks again).
	cur, found, err := src.Read(ctx, m.st)
	if err != nil {
		return err
	}
	if !found || moving(&cur) {
		return m.planMove(ctx, nil, src, to, "", ifMatch)
	}
	if err := m.blobsFit(dst, &cur); err != nil {
		return err
	}
	resv, err := dst.reserve(ctx, to, src)
	if err != nil {
		return err
	}
	_, err = m.eng.Write(ctx, m.table, pk, func(tx *eventual.Tx) error {
		return m.planMove(ctx, tx, src, to, resv, ifMatch)
	})
	if err != nil {
		if !errors.Is(err, store.ErrUnknownOutcome) {
			_ = dst.st.Table(dst.table).Delete(context.WithoutCancel(ctx), dstPK, ek, resv)
		}
		return err
	}
	return nil
}

// reserve inserts the reservation at the destination, in a transaction
// of its partition (so it is ordered with its writes).
func (m *Model[T]) reserve(ctx context.Context, to, src eventual.Ref) (store.ETag, error) {
	res, err := m.eng.Write(ctx, m.table, to.PartitionKey, func(tx *eventual.Tx) error {
		return tx.Insert("reservation", store.Entity{RowKey: to.RowKey, Properties: map[string]any{
			MovingFromProperty: srcString(src), ClaimedProperty: m.o.Now().UTC()}})
	})
	if err != nil {
		return "", err
	}
	return res.ETags[0], nil
}

// planMove plans the source's transaction of a move.
func (m *Model[T]) planMove(ctx context.Context, tx *eventual.Tx, src, to eventual.Ref, resv store.ETag, ifMatch store.ETag) error {
	pk, ek, id := src.PartitionKey, src.RowKey, idOf(src.RowKey)
	cur, err := m.st.Table(m.table).Get(ctx, pk, ek, nil)
	row := partition.Row{Label: "entity", Index: 0, Kind: store.ActionUpdateReplace, RowKey: ek}
	switch {
	case store.EntityNotFound(err):
		return &partition.ChangedError{Table: m.table, Partition: pk, Row: row, Missing: true,
			Err: clientErr(store.CodeResourceNotFound, 404, "model: entity %q does not exist", id)}
	case err != nil:
		return err
	case moving(&cur):
		return fmt.Errorf("%w: (%q, %q) of %s", ErrMoving, pk, id, m.table)
	case ifMatch != "" && ifMatch != store.ETagAny && ifMatch != cur.ETag:
		return &partition.ChangedError{Table: m.table, Partition: pk, Row: row,
			Err: clientErr(store.CodeUpdateConditionNotSatisfied, 412, "model: entity %q changed since it was read", id)}
	}
	// The reservation must still be this move's (a writer at the
	// destination takes over only a reservation older than ClaimLease).
	r, err := m.st.Table(to.Table).Get(ctx, to.PartitionKey, to.RowKey, nil)
	if err != nil || r.ETag != resv {
		return fmt.Errorf("%w: the reservation at %s was taken over", ErrMoving, to)
	}
	props := own(cur.Properties)
	old, err := decodeProps[T](pk, id, props, "")
	if err != nil {
		return err
	}
	if err := m.destFree(ctx, src, to, old); err != nil {
		return err
	}
	var logs []store.Entity
	if m.log {
		rng, err := keys.PrefixOf("l", id)
		if err != nil {
			return refuse("id %q: %v", id, err)
		}
		c := filter.PK.Eq(pk).And(filter.RK.InRange(rng))
		for lr, err := range store.All(ctx, m.st.Table(m.table), store.Query{Filter: c.String()}) {
			if err != nil {
				return err
			}
			logs = append(logs, lr)
		}
		if len(logs) > MaxMovedLog {
			return refuse("move: entity %q has %d log rows, Move carries at most %d", id, len(logs), MaxMovedLog)
		}
	}
	// The marker and the arrival name the entity's blobs, marked first
	// as moved (SweepBlobs leaves them alone).
	if d, _ := registry.Load(regKey{m.eng, to.Table}); d != nil {
		if dst, ok := d.(*Model[T]); ok {
			if err := m.blobsFit(dst, &cur); err != nil {
				return err
			}
		}
	}
	if err := m.markMoved(ctx, &cur); err != nil {
		return err
	}
	refs := blobRefs(&cur)
	marker := store.Entity{PartitionKey: pk, RowKey: ek, Properties: withRefs(props, refs)}
	marker.Properties[MovedToProperty] = srcString(to)
	if err := tx.Update("entity", marker, store.Replace, cur.ETag); err != nil {
		return err
	}
	for _, f := range m.specs {
		if f.global {
			continue
		}
		if val := f.value(old); val != "" {
			if k, err := localKey(f, val, id); err == nil {
				if err := tx.Delete("index "+f.name, k, store.ETagAny); err != nil {
					return err
				}
			}
		}
	}
	if err := m.planLists(ctx, tx, pk, id, old, nil); err != nil {
		return err
	}
	steps := []eventual.Step{m.moveStep(actMove, to.Table, store.Entity{PartitionKey: to.PartitionKey, RowKey: ek, Properties: withRefs(props, refs)})}
	for i, lr := range logs {
		if err := tx.Delete(fmt.Sprintf("log %d", i), lr.RowKey, store.ETagAny); err != nil {
			return err
		}
		p := own(lr.Properties)
		p[OpProperty], p[IDProperty] = lr.Properties[OpProperty], id
		p[LogVersionProperty] = logVersion(&lr)
		steps = append(steps, m.moveStep(actMoveLog, to.Table, store.Entity{PartitionKey: to.PartitionKey, RowKey: lr.RowKey, Properties: p}))
	}
	rk, err := receiptKey(id, src, tx.Version())
	if err != nil {
		return err
	}
	steps = append(steps, m.moveStep(actMoved, m.table, store.Entity{PartitionKey: pk, RowKey: ek}),
		m.moveStep(actReceipt, to.Table, store.Entity{PartitionKey: to.PartitionKey, RowKey: rk}))
	// The source's copies elsewhere: each removal leaves alone a row the
	// destination took over.
	for _, f := range m.specs {
		if !f.global {
			continue
		}
		if f.kind == featCopy {
			d, _, err := m.planCopy(f, old, nil, nil)
			if err != nil {
				return err
			}
			steps = append(steps, d...)
			continue
		}
		if val := f.value(old); val != "" {
			if a, err := m.globalAt(f, val, pk, id); err == nil {
				steps = append(steps, m.newStep(f, actDel, store.Entity{PartitionKey: a.pk, RowKey: a.rk}, ""))
			}
		}
	}
	return tx.Then(ctx, ek, steps...)
}

// destFree checks that no other entity holds a value of v in a unique
// index of the destination (of its partition, or global: the
// destination's index table may not be the one the source's rows are
// in, so no row of the entity holds the value there), and that v's lists
// there can take it (the arrival would be refused). A value taken (or a
// list filled) between this check and the arrival leaves the move
// failing in the engine's poison queue, the entity in flight.
func (m *Model[T]) destFree(ctx context.Context, src, to eventual.Ref, v *T) error {
	d, _ := registry.Load(regKey{m.eng, to.Table})
	dst, _ := d.(*Model[T])
	if dst == nil {
		return refuse("move to %s: no model of %T is defined over table %s on this engine", to, *v, to.Table)
	}
	if err := dst.listsFit(ctx, to.PartitionKey, idOf(to.RowKey), v); err != nil {
		return err
	}
	if err := dst.globalFree(ctx, src, to, v); err != nil {
		return err
	}
	for _, f := range dst.specs {
		if f.global || !f.unique || f.value(v) == "" {
			continue
		}
		val := f.value(v)
		k, err := localKey(f, val, "")
		if err != nil {
			return refuse("index %s: value %q: %v", f.name, val, err)
		}
		row, err := m.st.Table(to.Table).Get(ctx, to.PartitionKey, k, nil)
		if store.EntityNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		hid, _ := row.Properties[IDProperty].(string)
		hk, _ := entityKey(hid)
		return &partition.DuplicateError{Table: to.Table, Partition: to.PartitionKey,
			Row:       partition.Row{Label: "index " + f.name, Index: -1, Kind: store.ActionInsert, RowKey: k},
			IndexName: f.name, Value: val, Holder: partition.Ref{PartitionKey: to.PartitionKey, RowKey: hk},
			Err: clientErr(store.CodeEntityAlreadyExists, 409, "model: %s %q is held in %s", f.name, val, to.PartitionKey)}
	}
	return nil
}

// globalFree checks that no entity other than src (the entity moving to
// to) holds a value of v in a global unique index of m, the destination.
func (m *Model[T]) globalFree(ctx context.Context, src, to eventual.Ref, v *T) error {
	for _, f := range m.specs {
		if f.kind != featIndex || !f.global || !f.unique || f.value(v) == "" {
			continue
		}
		val := f.value(v)
		a, err := m.globalAt(f, val, to.PartitionKey, idOf(to.RowKey))
		if err != nil {
			return refuse("index %s: value %q: %v", f.name, val, err)
		}
		row, err := m.st.Table(f.table).Get(ctx, a.pk, a.rk, nil)
		if store.EntityNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		o := owner(&row)
		if o == src || o == to {
			continue // the entity's own row: the arrival takes it over
		}
		if _, _, holds, err := m.current(ctx, f, o, a); err != nil || !holds {
			return err
		}
		return &partition.DuplicateError{Table: f.table, Partition: a.pk,
			Row:       partition.Row{Label: "claim of index " + f.name, Index: -1, Kind: store.ActionInsert, RowKey: a.rk},
			IndexName: f.name, Value: val, Holder: partition.Ref{PartitionKey: o.PartitionKey, RowKey: o.RowKey},
			Err: clientErr(store.CodeEntityAlreadyExists, 409, "model: %s %q is held by %s", f.name, val, o)}
	}
	return nil
}

func (m *Model[T]) moveStep(act, table string, e store.Entity) eventual.Step {
	data, _ := json.Marshal(stepData{Action: act})
	return eventual.Custom(m.step, table, e, data)
}

// logVersion is the version a log row records.
func logVersion(e *store.Entity) int64 {
	if v, ok := e.Properties[LogVersionProperty].(int64); ok {
		return v
	}
	return eventual.VersionOf(e)
}

// moving reports whether a row at an entity's key is a marker of an
// entity in flight or a reservation.
func moving(e *store.Entity) bool {
	_, a := e.Properties[MovedToProperty]
	_, b := e.Properties[MovingFromProperty]
	return a || b
}

// reserved reports whether a row at an entity's key is a move's
// reservation: no entity.
func reserved(e *store.Entity) bool {
	_, ok := e.Properties[MovingFromProperty]
	return ok
}

// movedTo returns where the marker row e sends its entity.
func movedTo(e *store.Entity) (eventual.Ref, bool) {
	s, _ := e.Properties[MovedToProperty].(string)
	if s == "" {
		return eventual.Ref{}, false
	}
	r, err := parseRef(s)
	return r, err == nil
}

// movingTo reports whether entity o is in flight to dst.
func (m *Model[T]) movingTo(ctx context.Context, o, dst eventual.Ref) (bool, error) {
	if o.Table == "" || o == dst {
		return false, nil
	}
	row, found, err := o.Read(ctx, m.st)
	if err != nil || !found {
		return false, err
	}
	t, ok := movedTo(&row)
	return ok && t == dst, nil
}

// stale reports whether reservation r no longer guards a move: older
// than the lease, and its source not in flight to it.
func (m *Model[T]) stale(ctx context.Context, r *store.Entity, here eventual.Ref) (bool, error) {
	if m.o.Now().Sub(claimedAt(r)) < m.o.ClaimLease {
		return false, nil
	}
	s, _ := r.Properties[MovingFromProperty].(string)
	src, err := parseRef(s)
	if err != nil {
		return true, nil
	}
	in, err := m.movingTo(ctx, src, here)
	return !in, err
}

// runMove carries out the steps of a move.
func (m *Model[T]) runMove(ctx context.Context, op eventual.Operation, s eventual.Step, act string) error {
	src, v := *op.Source, op.Version
	if act == actReceipt {
		// The marker is gone: the arrival will not run again.
		err := m.st.Table(s.Table).Delete(ctx, s.Entity.PartitionKey, s.Entity.RowKey, store.ETagAny)
		if err == nil || store.EntityNotFound(err) {
			return nil
		}
		return err
	}
	mk, found, err := src.Read(ctx, m.st)
	if err != nil {
		return err
	}
	if !found || eventual.VersionOf(&mk) != v {
		return nil // done, or a later write of the key
	}
	to, ok := movedTo(&mk)
	if !ok {
		return nil
	}
	switch act {
	case actMoveLog:
		return nil // carried by the arrival
	case actMoved:
		err := m.st.Table(m.table).Delete(ctx, src.PartitionKey, src.RowKey, mk.ETag)
		if err == nil || store.EntityNotFound(err) || errors.Is(err, store.ErrPreconditionFailed) {
			return nil
		}
		return err
	}
	d, ok := registry.Load(regKey{m.eng, to.Table})
	dst, _ := d.(*Model[T])
	if !ok || dst == nil {
		return refuse("move to %s: no model of %T is defined over table %s on this engine", to, *new(T), to.Table)
	}
	var logs []store.Entity
	for _, st := range op.Steps {
		var sd stepData
		if st.Kind == m.step && json.Unmarshal(st.Data, &sd) == nil && sd.Action == actMoveLog {
			logs = append(logs, st.Entity)
		}
	}
	return dst.arrive(ctx, to, s.Entity.Properties, src, v, logs)
}

// arrive writes an entity that moved here, with its partition copies, its
// log, and the intent for its copies elsewhere, in one transaction.
func (m *Model[T]) arrive(ctx context.Context, to eventual.Ref, props map[string]any, src eventual.Ref, v int64, logs []store.Entity) error {
	props, refs := splitRefs(props) // the entity row alone names its blobs
	from := srcString(src) + "@" + strconv.FormatInt(v, 10)
	token, err := newToken()
	if err != nil {
		return err
	}
	var w txWrite
	pk, ek, id := to.PartitionKey, to.RowKey, idOf(to.RowKey)
	rk, err := receiptKey(id, src, v)
	if err != nil {
		return err
	}
	_, err = m.eng.Write(ctx, m.table, pk, func(tx *eventual.Tx) error {
		w = txWrite{labels: map[string][2]string{}, prev: srcString(src)}
		// The receipt, written with the entity and removed after the
		// marker, tells a run of the step again that it arrived (even if
		// the entity was written or deleted since).
		if _, err := m.st.Table(m.table).Get(ctx, pk, rk, nil); err == nil {
			return errArrived
		} else if !store.EntityNotFound(err) {
			return err
		}
		if err := tx.Insert("receipt", store.Entity{RowKey: rk, Properties: map[string]any{MovingFromProperty: from}}); err != nil {
			return err
		}
		cur, err := m.st.Table(m.table).Get(ctx, pk, ek, nil)
		ent := store.Entity{PartitionKey: pk, RowKey: ek, Properties: withRefs(props, refs)}
		m.stampSum(ent.Properties)
		switch {
		case store.EntityNotFound(err):
			err = tx.Insert("entity", ent)
		case err != nil:
		case isReservationOf(&cur, from):
			err = tx.Update("entity", ent, store.Replace, cur.ETag)
		default:
			return fmt.Errorf("%w: (%q, %q) of %s", ErrMoveTarget, pk, id, m.table)
		}
		if err != nil {
			return err
		}
		now, err := decodeProps[T](pk, id, props, "")
		if err != nil {
			return err
		}
		for _, f := range m.specs {
			if f.global {
				continue
			}
			if val := f.value(now); val != "" {
				k, err := localKey(f, val, id)
				if err != nil {
					return refuse("index %s: value %q: %v", f.name, val, err)
				}
				label := "index " + f.name
				w.labels[label] = [2]string{f.name, val}
				c := store.Entity{RowKey: k, Properties: carried(f, props)}
				c.Properties[IDProperty] = id
				m.stampCopy(c.Properties)
				if err := tx.Insert(label, c); err != nil {
					return err
				}
			}
		}
		if m.log {
			lk, err := logKey(id, tx.Version())
			if err != nil {
				return err
			}
			lp := maps.Clone(props)
			lp[OpProperty], lp[IDProperty] = "move", id
			if err := tx.Insert("log", store.Entity{RowKey: lk, Properties: lp}); err != nil {
				return err
			}
			inv := lk[len(lk)-19:]
			for i, l := range logs {
				seq, _ := keys.PadUint(uint64(i), 4)
				rk, err := keys.Join("l", id, inv, seq)
				if err != nil {
					return err
				}
				if err := tx.Insert(fmt.Sprintf("log %d", i), store.Entity{RowKey: rk, Properties: maps.Clone(l.Properties)}); err != nil {
					return err
				}
			}
		}
		if err := m.planLists(ctx, tx, pk, id, nil, now); err != nil {
			return err
		}
		return m.planGlobal(ctx, tx, &w, token, pk, id, ek, nil, now, props)
	})
	if errors.Is(err, errArrived) {
		return nil
	}
	if err != nil {
		if !errors.Is(err, store.ErrUnknownOutcome) {
			m.release(ctx, w.claims)
		}
		return m.named(ctx, pk, err, w.labels)
	}
	return nil
}

// receiptKey is the RowKey of the receipt of the move of entity id from
// src at version v, in the destination's partition.
func receiptKey(id string, src eventual.Ref, v int64) (string, error) {
	return keys.Join("a", id, srcString(src), strconv.FormatInt(v, 10))
}

// isReservationOf reports whether row r is the reservation of the move
// from (source@version).
func isReservationOf(r *store.Entity, from string) bool {
	s, _ := r.Properties[MovingFromProperty].(string)
	return s != "" && len(from) > len(s) && from[:len(s)] == s && from[len(s)] == '@'
}

// register makes m findable as a move's destination by its engine's
// workers.
func (m *Model[T]) register() { registry.Store(regKey{m.eng, m.table}, m) }
