package xindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// stepData is what a copy step carries besides the copy row: the index
// and whether it puts or deletes.
type stepData struct {
	Index  string `json:"i"`
	Action string `json:"a"` // "put" or "del"
}

const (
	actPut = "put"
	actDel = "del"
)

// maxRounds bounds the read-and-retry rounds of a guarded write under
// contention.
const maxRounds = 8

// It is a race (partition.ErrConflict): the worker runs the step again.
var errContended = fmt.Errorf("xindex: the row kept changing under every attempt: %w: %w", partition.ErrConflict,
	&store.Error{Code: store.CodeUpdateConditionNotSatisfied, Status: 412, Index: -1, Message: "another writer changed the row first", Source: store.SourceClient})

// exists is the package's refusal of a row another entity holds: Code
// EntityAlreadyExists (409), nothing sent.
func exists(format string, args ...any) *store.Error {
	e := store.Errorf(store.CodeEntityAlreadyExists, 409, format, args...)
	e.Source = store.SourceClient
	return e
}

// step builds the engine step for a copy.
func (x *Table[T]) step(s *Spec[T], act string, row store.Entity) eventual.Step {
	data, _ := json.Marshal(stepData{Index: s.name, Action: act})
	return eventual.Custom(x.kind, s.table, row, data)
}

// readStep reads a step back.
func (x *Table[T]) readStep(st eventual.Step) (*Spec[T], stepData, error) {
	var d stepData
	if err := json.Unmarshal(st.Data, &d); err != nil {
		return nil, d, refuse("unreadable copy step: %v", err)
	}
	s, err := x.spec(d.Index)
	if err != nil {
		return nil, d, err
	}
	if d.Action != actPut && d.Action != actDel {
		return nil, d, refuse("copy step for index %s: unknown action %q", d.Index, d.Action)
	}
	if ownerOf(&st.Entity).RowKey == "" {
		return nil, d, refuse("copy step for index %s names no entity", d.Index)
	}
	if _, bad := st.Entity.Properties[eventual.VersionProperty]; bad {
		return nil, d, refuse("copy step for index %s carries %s: the worker sets it", d.Index, eventual.VersionProperty)
	}
	return s, d, nil
}

func (x *Table[T]) checkStep(st eventual.Step) error {
	_, _, err := x.readStep(st)
	return err
}

// runStep carries out one copy step under its guards.
func (x *Table[T]) runStep(ctx context.Context, op eventual.Operation, st eventual.Step) error {
	s, d, err := x.readStep(st)
	if err != nil {
		return err
	}
	tbl := x.st.Table(st.Table)
	src := ownerOf(&st.Entity)
	if d.Action == actDel {
		return x.del(ctx, s, tbl, st.Entity.PartitionKey, st.Entity.RowKey, src, op.Version)
	}
	return x.put(ctx, s, tbl, st.Entity, src, op.Version)
}

// retryable reports a guarded write that lost a race or whose answer was
// lost: read again and let the guard decide.
func retryable(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) ||
		store.EntityNotFound(err) || errors.Is(err, store.ErrUnknownOutcome)
}

// put writes the copy want of entity src at version v: over nothing (if
// the entity has not moved on), over an older copy of the same entity, or
// over a copy or claim of an entity that no longer holds the value.
func (x *Table[T]) put(ctx context.Context, s *Spec[T], tbl store.Table, want store.Entity, src Ref, v int64) error {
	want.Properties = cloneProps(want.Properties)
	want.Properties[eventual.VersionProperty] = v
	for range maxRounds {
		cur, err := tbl.Get(ctx, want.PartitionKey, want.RowKey, nil)
		switch {
		case store.EntityNotFound(err):
			if moved, err := x.movedOn(ctx, src, v); err != nil || moved {
				return err
			}
			etag, err := tbl.Insert(ctx, want)
			if retryable(err) {
				continue
			}
			if err != nil {
				return err
			}
			return x.postcheck(ctx, s, tbl, want, etag, src, v)
		case err != nil:
			return err
		}
		if owner := ownerOf(&cur); owner != src {
			if moved, err := x.movedOn(ctx, src, v); err != nil || moved {
				return err
			}
			holds, _, err := x.holds(ctx, s, owner, valueOf(want.RowKey))
			if err != nil {
				return err
			}
			if holds {
				v := valueOf(want.RowKey)
				return &HeldTwiceError{Table: tbl.Name(), Partition: want.PartitionKey, IndexName: s.name, Value: v, Holder: owner, Claimant: src,
					Err: exists("xindex: row (%q, %q) of table %s exists, another entity's", want.PartitionKey, naming.Cut(want.RowKey), tbl.Name())}
			}
			etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
			if retryable(err) {
				continue
			}
			if err != nil {
				return err
			}
			return x.postcheck(ctx, s, tbl, want, etag, src, v)
		}
		switch cv := eventual.VersionOf(&cur); {
		case cv > v:
			return nil
		case cv == v:
			// A run of this step that crashed after writing: finish it.
			return x.postcheck(ctx, s, tbl, want, cur.ETag, src, v)
		case cv == 0:
			// The entity's bare claim: as good as no copy (a delete may
			// have left it), so the same checks as for an insert.
			if moved, err := x.movedOn(ctx, src, v); err != nil || moved {
				return err
			}
			etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
			if retryable(err) {
				continue
			}
			if err != nil {
				return err
			}
			return x.postcheck(ctx, s, tbl, want, etag, src, v)
		}
		if _, err := tbl.Update(ctx, want, store.Replace, cur.ETag); retryable(err) {
			continue
		} else if err != nil {
			return err
		}
		return nil
	}
	return errContended
}

// postcheck runs after a copy was written where no copy of the same
// entity stood: the entity may have moved on between the check and the
// write, and the operation that moved it may have found nothing to
// delete. If the entity no longer maps to this copy, the copy goes (if
// unchanged since written).
func (x *Table[T]) postcheck(ctx context.Context, s *Spec[T], tbl store.Table, c store.Entity, etag store.ETag, src Ref, v int64) error {
	e, found, err := x.source(ctx, src)
	if err != nil {
		return err
	}
	if found {
		if eventual.VersionOf(&e) <= v {
			return nil
		}
		var t T
		if err := mapper.Decode(e, &t); err != nil {
			return err
		}
		if val := s.value(&t); val != "" {
			if at, err := s.at(src.PartitionKey, src.RowKey, val); err == nil && at.pk == c.PartitionKey && at.rk == c.RowKey {
				return nil // still mapped: the entity's later operation refreshes it
			}
		}
	}
	err = tbl.Delete(ctx, c.PartitionKey, c.RowKey, etag)
	if err == nil || store.EntityNotFound(err) || errors.Is(err, store.ErrPreconditionFailed) {
		return nil
	}
	return err
}

// del removes the copy at (pk, rk) if it belongs to src and is not newer
// than v.
func (x *Table[T]) del(ctx context.Context, s *Spec[T], tbl store.Table, pk, rk string, src Ref, v int64) error {
	for range maxRounds {
		cur, err := tbl.Get(ctx, pk, rk, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if ownerOf(&cur) != src || eventual.VersionOf(&cur) > v || eventual.VersionOf(&cur) == 0 {
			// Another entity's row, a newer copy, or a bare claim: a claim
			// may be a later write's of the same entity, still in flight
			// (one that never lands expires, and Reap removes it).
			return nil
		}
		if tok, _ := cur.Properties[ClaimProperty].(string); tok != "" && eventual.VersionOf(&cur) > 0 {
			// The entity claimed the value again since this copy was
			// written: leave no hole another entity could claim. If it
			// holds the value now, its later operation refreshes the
			// copy; if its write may still be in flight, a bare claim
			// stays (Reap removes it if the write never lands).
			holds, _, herr := x.holds(ctx, s, src, valueOf(rk))
			if herr != nil {
				return herr
			}
			if holds {
				return nil
			}
			if x.o.Now().Sub(claimedAt(&cur)) < x.o.ClaimLease {
				_, err = tbl.Update(ctx, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{
					SourcePartitionProperty: src.PartitionKey, SourceRowProperty: src.RowKey, ClaimProperty: tok,
					ClaimedProperty: cur.Properties[ClaimedProperty], eventual.VersionProperty: int64(0)}}, store.Replace, cur.ETag)
			} else {
				err = tbl.Delete(ctx, pk, rk, cur.ETag)
			}
		} else {
			err = tbl.Delete(ctx, pk, rk, cur.ETag)
		}
		if err == nil || store.EntityNotFound(err) {
			return nil
		}
		if retryable(err) {
			continue
		}
		return err
	}
	return errContended
}

// ref names entity r's row for the engine.
func (x *Table[T]) ref(r Ref) eventual.Ref {
	return eventual.Ref{Table: x.name, PartitionKey: r.PartitionKey, RowKey: r.RowKey}
}

// source reads an entity's row as stored, with its version.
func (x *Table[T]) source(ctx context.Context, r Ref) (store.Entity, bool, error) {
	e, found, err := x.ref(r).Read(ctx, x.st)
	if err != nil {
		return store.Entity{}, false, fmt.Errorf("xindex: read entity %s: %w", r, err)
	}
	return e, found, nil
}

// movedOn reports whether entity src is gone or past version v: a later
// operation carries its state, so a copy from v must not be created.
func (x *Table[T]) movedOn(ctx context.Context, src Ref, v int64) (bool, error) {
	moved, err := x.ref(src).MovedPast(ctx, x.st, v)
	if err != nil {
		return false, fmt.Errorf("xindex: read entity %s: %w", src, err)
	}
	return moved, nil
}

// holds reports whether entity r holds value in index s now, and its
// version.
func (x *Table[T]) holds(ctx context.Context, s *Spec[T], r Ref, value string) (bool, int64, error) {
	if r.RowKey == "" {
		return false, 0, nil
	}
	e, found, err := x.source(ctx, r)
	if err != nil || !found {
		return false, 0, err
	}
	var t T
	if err := mapper.Decode(e, &t); err != nil {
		return false, 0, err
	}
	return s.value(&t) == value, eventual.VersionOf(&e), nil
}

func cloneProps(m map[string]any) map[string]any {
	c := make(map[string]any, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}
