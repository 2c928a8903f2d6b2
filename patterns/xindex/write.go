package xindex

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// plan is what one write of an entity implies for its indexes: the copy
// steps (deletes of the copies whose value went away, then a put of every
// copy of the new state) and the unique values to claim first, under the
// write's claim token (which its puts carry).
type plan struct {
	steps  []eventual.Step
	claims []claimAt
	token  string
}

type claimAt struct {
	spec  string
	at    copyAt
	owner Ref
}

// plan compares the stored entity old (nil for none) with the new one
// (nil for a delete). Every key is checked before anything is written.
func (x *Table[T]) plan(old *store.Entity, oldV *T, e *store.Entity, v *T) (plan, error) {
	p := plan{token: claims.NewToken()}
	var puts []eventual.Step
	for i := range x.specs {
		s := &x.specs[i]
		var was, now copyAt
		if e != nil {
			if val := s.value(v); val != "" {
				at, err := s.at(e.PartitionKey, e.RowKey, val)
				if err != nil {
					return p, err
				}
				row := s.copyOf(at, e)
				if err := store.ValidateEntity(&row); err != nil {
					return p, fmt.Errorf("xindex: index %s: value %q: the copy cannot be stored: %w", s.name, naming.Cut(val), err)
				}
				now = at
				puts = append(puts, x.step(s, actPut, row, p.token))
			}
		}
		if old != nil {
			if val := s.value(oldV); val != "" {
				// A stored value made a valid key when it was written.
				if at, err := s.at(old.PartitionKey, old.RowKey, val); err == nil {
					was = at
				}
			}
		}
		if was.rk != "" && (was.pk != now.pk || was.rk != now.rk) {
			owner := Ref{PartitionKey: old.PartitionKey, RowKey: old.RowKey}
			p.steps = append(p.steps, x.step(s, actDel, store.Entity{PartitionKey: was.pk, RowKey: was.rk, Properties: map[string]any{
				SourcePartitionProperty: owner.PartitionKey, SourceRowProperty: owner.RowKey}}, ""))
		}
		if s.unique && now.rk != "" && (was.pk != now.pk || was.rk != now.rk) {
			p.claims = append(p.claims, claimAt{spec: s.name, at: now, owner: Ref{PartitionKey: e.PartitionKey, RowKey: e.RowKey}})
		}
	}
	p.steps = append(p.steps, puts...)
	return p, nil
}

// encode maps v to its entity, checking its keys.
func encode[T any](v *T) (store.Entity, error) {
	if v == nil {
		var zero T
		return store.Entity{}, refuse("nil %T", &zero)
	}
	e, err := mapper.Encode(v)
	if err != nil {
		return e, err
	}
	if err := store.ValidateKeys(e.PartitionKey, e.RowKey); err != nil {
		return e, fmt.Errorf("xindex: entity (%q, %q): %w", naming.Cut(e.PartitionKey), naming.Cut(e.RowKey), err)
	}
	return e, nil
}

// Insert adds *v and the intent to write its copies, in one transaction
// of its partition, after claiming its unique values; it stores the
// entity's new ETag in v. An existing entity, or a unique value another
// entity holds, is a *partition.DuplicateError (partition.ErrDuplicate,
// store.ErrAlreadyExists; IndexName and Value set for a value). Nothing
// is written on a refusal.
func (x *Table[T]) Insert(ctx context.Context, v *T) error {
	e, err := encode(v)
	if err != nil {
		return err
	}
	p, err := x.plan(nil, nil, &e, v)
	if err != nil {
		return err
	}
	return x.write(ctx, v, e, p, func(tx *eventual.Tx) error { return tx.Insert("entity", e) })
}

// Update replaces the stored entity with *v if it still has the ETag in
// v's etag field (store.ErrPreconditionFailed otherwise; mapper.ErrNoETag
// without one), with the intent to move the copies whose values changed
// and refresh the others, in one transaction; it stores the new ETag in v.
func (x *Table[T]) Update(ctx context.Context, v *T) error {
	e, cur, err := x.current(ctx, v, "update")
	if err != nil {
		return err
	}
	return x.replace(ctx, v, e, cur)
}

// replace writes e over cur, the stored entity read with its ETag.
func (x *Table[T]) replace(ctx context.Context, v *T, e, cur store.Entity) error {
	var old T
	if err := mapper.Decode(cur, &old); err != nil {
		return err
	}
	p, err := x.plan(&cur, &old, &e, v)
	if err != nil {
		return err
	}
	return x.write(ctx, v, e, p, func(tx *eventual.Tx) error { return tx.Update("entity", e, store.Replace, cur.ETag) })
}

// Upsert writes *v whatever is stored (creating it, or replacing it and
// moving its copies), and stores the new ETag in v. It reads the stored
// entity first and tries again when another writer changes it between.
func (x *Table[T]) Upsert(ctx context.Context, v *T) error {
	e, err := encode(v)
	if err != nil {
		return err
	}
	var last error
	for range maxRounds {
		cur, err := x.st.Table(x.name).Get(ctx, e.PartitionKey, e.RowKey, nil)
		switch {
		case store.EntityNotFound(err):
			last = x.Insert(ctx, v)
			if !errors.Is(last, store.ErrAlreadyExists) || taken(last) {
				return last
			}
		case err != nil:
			return err
		default:
			last = x.replace(ctx, v, e, cur)
			if !errors.Is(last, partition.ErrChanged) && !errors.Is(last, store.ErrPreconditionFailed) && !store.EntityNotFound(last) {
				return last
			}
		}
	}
	return contended("upsert", e, last)
}

// taken reports the duplicate of a unique value (not of the entity, which
// Upsert replaces).
func taken(err error) bool {
	var de *partition.DuplicateError
	return errors.As(err, &de) && de.IndexName != ""
}

// contended is the error of an unconditional write that lost the race for
// the entity on every round: a race (partition.ErrConflict), never a
// changed row, with the last refusal's *store.Error.
func contended(op string, e store.Entity, last error) error {
	var se *store.Error
	if errors.As(last, &se) {
		last = se
	}
	return fmt.Errorf("xindex: %s of (%q, %q): the entity kept changing: %w: %w", op, e.PartitionKey, e.RowKey, partition.ErrConflict, last)
}

// Delete removes *v's entity if it still has the ETag in v's etag field,
// with the intent to remove every copy, in one transaction.
func (x *Table[T]) Delete(ctx context.Context, v *T) error {
	_, cur, err := x.current(ctx, v, "delete")
	if err != nil {
		return err
	}
	return x.remove(ctx, cur)
}

// current reads the stored entity of *v for op ("update" or "delete"),
// which may go on only if it still has the ETag in v's etag field:
// mapper.ErrNoETag without one, a *partition.ChangedError when it changed
// or is gone. It returns *v encoded and the stored row.
func (x *Table[T]) current(ctx context.Context, v *T, op string) (e, cur store.Entity, err error) {
	etag := mapper.ETagOf(v)
	if etag == "" {
		return e, cur, fmt.Errorf("xindex: %s: %w", op, mapper.ErrNoETag)
	}
	if e, err = encode(v); err != nil {
		return e, cur, err
	}
	if cur, err = x.st.Table(x.name).Get(ctx, e.PartitionKey, e.RowKey, nil); err != nil {
		var se *store.Error
		if store.EntityNotFound(err) && errors.As(err, &se) {
			return e, cur, x.changed(e, op, true, se)
		}
		return e, cur, err
	}
	if cur.ETag != etag {
		se := store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
			"xindex: entity (%q, %q) changed since it was read (ETag %s, not %s)", e.PartitionKey, e.RowKey, cur.ETag, etag)
		se.Source = store.SourceClient
		return e, cur, x.changed(e, op, false, se)
	}
	return e, cur, nil
}

// changed is the error of a write conditional on the caller's ETag whose
// entity changed (or went away) since it was read.
func (x *Table[T]) changed(e store.Entity, op string, missing bool, se *store.Error) error {
	kind := store.ActionUpdateReplace
	if op == "delete" {
		kind = store.ActionDelete
	}
	return &partition.ChangedError{Table: x.name, Partition: e.PartitionKey,
		Row: partition.Row{Label: "entity", Kind: kind, RowKey: e.RowKey}, Missing: missing, Err: se}
}

// DeleteKey removes the entity with keys (pk, rk), whatever its version,
// with the intent to remove every copy. A missing entity is not an error.
func (x *Table[T]) DeleteKey(ctx context.Context, pk, rk string) error {
	if err := store.ValidateKeys(pk, rk); err != nil {
		return fmt.Errorf("xindex: entity (%q, %q): %w", naming.Cut(pk), naming.Cut(rk), err)
	}
	var last error
	for range maxRounds {
		cur, err := x.st.Table(x.name).Get(ctx, pk, rk, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		last = x.remove(ctx, cur)
		if !errors.Is(last, store.ErrPreconditionFailed) {
			if store.EntityNotFound(last) {
				return nil
			}
			return last
		}
	}
	return contended("delete", store.Entity{PartitionKey: pk, RowKey: rk}, last)
}

// remove deletes cur (conditional on its ETag) with its copies' deletes.
func (x *Table[T]) remove(ctx context.Context, cur store.Entity) error {
	var old T
	if err := mapper.Decode(cur, &old); err != nil {
		return err
	}
	p, err := x.plan(&cur, &old, nil, nil)
	if err != nil {
		return err
	}
	return x.write(ctx, nil, cur, p, func(tx *eventual.Tx) error { return tx.Delete("entity", cur.RowKey, cur.ETag) })
}

// write commits the entity write and its copy steps in one transaction
// of the entity's partition, claiming p's unique values inside it: after
// the transaction began and before it commits, on every attempt. The
// commit is conditional on the partition's fence, so a write of the
// partition between a claim and the commit (another write of the same
// entity, which may have taken the claim over and let it go) makes the
// attempt start again and claim again: a write never commits on a claim
// judged before the entity's last change. Claims of a write that surely
// did not commit are released.
func (x *Table[T]) write(ctx context.Context, v *T, e store.Entity, p plan, row func(tx *eventual.Tx) error) error {
	var held []claims.Held
	res, err := x.eng.Write(ctx, x.name, e.PartitionKey, func(tx *eventual.Tx) error {
		for _, c := range p.claims {
			h, err := x.claim(ctx, c, p.token)
			if err != nil {
				return err
			}
			held = append(held, h)
		}
		if err := row(tx); err != nil {
			return err
		}
		if len(p.steps) == 0 {
			return nil
		}
		return tx.Then(ctx, e.RowKey, p.steps...)
	})
	if err != nil {
		if !errors.Is(err, store.ErrUnknownOutcome) {
			x.rules.Release(ctx, held)
		}
		return err
	}
	if v == nil {
		return nil
	}
	if len(res.ETags) > 0 {
		return mapper.SetETag(v, res.ETags[0])
	}
	// The answer was lost and the commit proved applied: read the ETag.
	cur, err := x.st.Table(x.name).Get(ctx, e.PartitionKey, e.RowKey, nil)
	if err != nil {
		// The write committed: failing it now would tell the caller it
		// did not. Its new ETag is unknown, so v is left without one (a
		// later Update of v refuses rather than overwrites).
		return mapper.SetETag(v, "")
	}
	return mapper.SetETag(v, cur.ETag)
}
