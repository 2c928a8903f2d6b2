package denorm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// work is what one source write does to one target.
type work[S any] struct {
	rel    *Rel[S]
	t      Target
	values map[string]any // nil: clear
}

// plan compares the stored source old (nil for none) with the new one (nil
// for a delete): every target of the new state is set, every target only
// the old state had is cleared. Targets are checked before anything is
// written.
func (d *Source[S]) plan(self Ref, old *S, e *store.Entity, v *S) (local, remote []work[S], err error) {
	for i := range d.rels {
		r := &d.rels[i]
		var now []Target
		if v != nil {
			if now, err = d.targetsOf(r, v, self); err != nil {
				return nil, nil, err
			}
		}
		var was []Target
		if old != nil {
			was, _ = d.targetsOf(r, old, self) // stored targets were valid when written
		}
		var ws []work[S]
		for _, t := range was {
			if !hasTarget(now, t) {
				ws = append(ws, work[S]{rel: r, t: t})
			}
		}
		for _, t := range now {
			if err := d.checkEncrypted(r, t); err != nil {
				return nil, nil, err
			}
			ws = append(ws, work[S]{rel: r, t: t, values: r.values(e)})
		}
		for _, w := range ws {
			if strings.EqualFold(w.t.Table, d.name) && w.t.PartitionKey == self.PartitionKey {
				local = append(local, w)
			} else {
				remote = append(remote, w)
			}
		}
	}
	return local, remote, nil
}

func hasTarget(ts []Target, t Target) bool {
	for _, x := range ts {
		if strings.EqualFold(x.Table, t.Table) && x.PartitionKey == t.PartitionKey && x.RowKey == t.RowKey {
			return true
		}
	}
	return false
}

// encode maps v to its entity, checking its keys.
func encode[S any](v *S) (store.Entity, error) {
	if v == nil {
		var zero S
		return store.Entity{}, refuse("nil %T", &zero)
	}
	e, err := mapper.Encode(v)
	if err != nil {
		return e, err
	}
	if err := store.ValidateKeys(e.PartitionKey, e.RowKey); err != nil {
		return e, fmt.Errorf("denorm: source (%q, %q): %w", naming.Cut(e.PartitionKey), naming.Cut(e.RowKey), err)
	}
	return e, nil
}

// Get reads the source with keys (pk, rk), with its ETag.
func (d *Source[S]) Get(ctx context.Context, pk, rk string) (S, error) {
	return d.repo.Get(ctx, pk, rk)
}

// Insert adds source *v and sets its copies on every target it maps to:
// in the same transaction for targets in its partition, through the
// engine for the others. It stores the new ETag in v. An existing source
// is an error matching store.ErrAlreadyExists; a target of its partition
// that another source maps to, an *OtherSourceError. Nothing is written on a
// refusal.
func (d *Source[S]) Insert(ctx context.Context, v *S) error {
	e, err := encode(v)
	if err != nil {
		return err
	}
	return d.change(ctx, v, &e, nil)
}

// Update replaces the stored source with *v if it still has the ETag in
// v's etag field (store.ErrPreconditionFailed otherwise; mapper.ErrNoETag
// without one), sets its copies on its targets and removes them from the
// targets it no longer maps to; it stores the new ETag in v.
func (d *Source[S]) Update(ctx context.Context, v *S) error {
	e, cur, err := d.current(ctx, v, "update")
	if err != nil {
		return err
	}
	return d.change(ctx, v, &e, &cur)
}

// Upsert writes *v whatever is stored, as Insert or Update, reading the
// stored source first and trying again when another writer changes it
// between.
func (d *Source[S]) Upsert(ctx context.Context, v *S) error {
	e, err := encode(v)
	if err != nil {
		return err
	}
	var last error
	for range maxRounds {
		cur, err := d.st.Table(d.name).Get(ctx, e.PartitionKey, e.RowKey, nil)
		switch {
		case store.EntityNotFound(err):
			last = d.change(ctx, v, &e, nil)
			if !errors.Is(last, store.ErrAlreadyExists) {
				return last
			}
		case err != nil:
			return err
		default:
			last = d.change(ctx, v, &e, &cur)
			if !sourceChanged(last) {
				return last
			}
		}
	}
	return fmt.Errorf("denorm: upsert of (%q, %q): the source kept changing: %w", e.PartitionKey, e.RowKey, last)
}

// Refresh writes the stored source (pk, rk) again, unchanged, so that its
// copies are set again on every target it maps to: for a target created
// after its source, or one whose denormalized properties a writer of its
// own overwrote.
func (d *Source[S]) Refresh(ctx context.Context, pk, rk string) error {
	v, err := d.repo.Get(ctx, pk, rk)
	if err != nil {
		return err
	}
	return d.Update(ctx, &v)
}

// Delete removes source *v if it still has the ETag in v's etag field,
// and its copies from every target.
func (d *Source[S]) Delete(ctx context.Context, v *S) error {
	_, cur, err := d.current(ctx, v, "delete")
	if err != nil {
		return err
	}
	return d.change(ctx, nil, nil, &cur)
}

// current reads the stored source of *v for op ("update" or "delete"),
// which may go on only if it still has the ETag in v's etag field:
// mapper.ErrNoETag without one, store.ErrPreconditionFailed when it
// changed. It returns *v encoded and the stored row.
func (d *Source[S]) current(ctx context.Context, v *S, op string) (e, cur store.Entity, err error) {
	etag := mapper.ETagOf(v)
	if etag == "" {
		return e, cur, fmt.Errorf("denorm: %s: %w", op, mapper.ErrNoETag)
	}
	if e, err = encode(v); err != nil {
		return e, cur, err
	}
	if cur, err = d.st.Table(d.name).Get(ctx, e.PartitionKey, e.RowKey, nil); err != nil {
		return e, cur, err
	}
	if cur.ETag != etag {
		return e, cur, store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
			"denorm: source (%q, %q) changed since it was read (ETag %s, not %s)", e.PartitionKey, e.RowKey, cur.ETag, etag)
	}
	return e, cur, nil
}

// DeleteKey removes the source with keys (pk, rk) whatever its version,
// and its copies from every target. A missing source is not an error.
func (d *Source[S]) DeleteKey(ctx context.Context, pk, rk string) error {
	if err := store.ValidateKeys(pk, rk); err != nil {
		return fmt.Errorf("denorm: source (%q, %q): %w", naming.Cut(pk), naming.Cut(rk), err)
	}
	var last error
	for range maxRounds {
		cur, err := d.st.Table(d.name).Get(ctx, pk, rk, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		last = d.change(ctx, nil, nil, &cur)
		if !sourceChanged(last) {
			return last
		}
	}
	return fmt.Errorf("denorm: delete of (%q, %q): the source kept changing: %w", pk, rk, last)
}

// sourceChanged reports a write refused because the source row changed
// or went away since it was read.
func sourceChanged(err error) bool {
	var ce *partition.ChangedError
	return errors.As(err, &ce) && ce.Label == "source"
}

// change writes the source (e over cur; e nil deletes, cur nil inserts)
// and its targets' copies: the local ones in the same transaction, read
// first and written conditional on their ETags (read again if one
// changed), the remote ones as the transaction's operation.
func (d *Source[S]) change(ctx context.Context, v *S, e *store.Entity, cur *store.Entity) error {
	self := Ref{}
	if e != nil {
		self = Ref{PartitionKey: e.PartitionKey, RowKey: e.RowKey}
	} else {
		self = Ref{PartitionKey: cur.PartitionKey, RowKey: cur.RowKey}
	}
	var old *S
	if cur != nil {
		old = new(S)
		if err := mapper.Decode(*cur, old); err != nil {
			return err
		}
	}
	local, remote, err := d.plan(self, old, e, v)
	if err != nil {
		return err
	}
	steps := make([]eventual.Step, 0, len(remote))
	for _, w := range remote {
		act := actSet
		if w.values == nil {
			act = actClear
		}
		steps = append(steps, d.step(w.rel, act, w.t, self, w.values))
	}
	var last error
	for range maxRounds {
		targets, err := d.readLocal(ctx, self, local)
		if err != nil {
			return err
		}
		res, err := d.eng.Write(ctx, d.name, self.PartitionKey, func(tx *eventual.Tx) error {
			switch {
			case cur == nil:
				if err := tx.Insert("source", *e); err != nil {
					return err
				}
			case e == nil:
				if err := tx.Delete("source", cur.RowKey, cur.ETag); err != nil {
					return err
				}
			default:
				if err := tx.Update("source", *e, store.Replace, cur.ETag); err != nil {
					return err
				}
			}
			for i, w := range local {
				tc, ok := targets[i]
				if !ok {
					continue
				}
				m := w.rel.merged(tc, self, tx.Version(), w.values)
				delete(m.Properties, eventual.VersionProperty) // the transaction stamps its own
				if err := tx.Update("target", m, store.Replace, tc.ETag); err != nil {
					return fmt.Errorf("denorm: relation %s: target %s: %w", w.rel.name, w.t, err)
				}
			}
			if len(steps) == 0 {
				return nil
			}
			return tx.Then(ctx, self.RowKey, steps...)
		})
		var ce *partition.ChangedError
		if errors.As(err, &ce) && ce.Label == "target" {
			last = err
			continue // a target changed since it was read: read it again
		}
		if err != nil {
			return err
		}
		if v == nil {
			return nil
		}
		if len(res.ETags) > 0 {
			return mapper.SetETag(v, res.ETags[0])
		}
		stored, err := d.st.Table(d.name).Get(ctx, self.PartitionKey, self.RowKey, nil)
		if err != nil {
			// The write committed: failing it now would tell the caller
			// it did not. Its new ETag is unknown, so v is left without
			// one (a later Update of v refuses rather than overwrites).
			return mapper.SetETag(v, "")
		}
		return mapper.SetETag(v, stored.ETag)
	}
	return fmt.Errorf("denorm: source %s: its targets kept changing: %w", self, last)
}

// readLocal reads the targets in the source's partition (by index into
// local; a missing target is left out) and refuses a set on a target
// another source still maps to. A clear of another source's copy is
// dropped.
func (d *Source[S]) readLocal(ctx context.Context, self Ref, local []work[S]) (map[int]store.Entity, error) {
	out := make(map[int]store.Entity, len(local))
	for i, w := range local {
		tc, err := d.st.Table(w.t.Table).Get(ctx, w.t.PartitionKey, w.t.RowKey, nil)
		if store.EntityNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("denorm: relation %s: read target %s: %w", w.rel.name, w.t, err)
		}
		if partition.IsReserved(tc.RowKey) {
			return nil, refuse("relation %s: target %s is a reserved row of the partition", w.rel.name, w.t)
		}
		if owner, has := sourceOf(&tc, w.rel.name); has && owner != self {
			if w.values == nil {
				continue
			}
			holds, err := d.stillMaps(ctx, w.rel, owner, w.t)
			if err != nil {
				return nil, err
			}
			if holds {
				return nil, otherSource(w.rel.name, w.t, owner, self)
			}
		}
		out[i] = tc
	}
	return out, nil
}
