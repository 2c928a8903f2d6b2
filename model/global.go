package model

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// maxRounds bounds the read-and-retry rounds of a guarded write.
const maxRounds = 8

const (
	actPut     = "put"
	actDel     = "del"
	actCopyPut = "cput"
	actCopyDel = "cdel"
)

// stepData is what a copy step carries besides the copy row.
type stepData struct {
	Index  string `json:"i"`
	Action string `json:"a"`
	// Token is the claim token of the write that made a put: the put
	// removes that write's own bare claim when the entity moved on.
	Token string `json:"t,omitempty"`
}

func newToken() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func (m *Model[T]) newStep(f *Feature[T], act string, c store.Entity, token string) eventual.Step {
	data, _ := json.Marshal(stepData{Index: f.name, Action: act, Token: token})
	table := m.itable
	if f.kind == featCopy {
		table = f.table
	}
	return eventual.Custom(m.step, table, c, data)
}

func (m *Model[T]) readStep(s eventual.Step) (*Feature[T], stepData, error) {
	var d stepData
	if err := json.Unmarshal(s.Data, &d); err != nil {
		return nil, d, refuse("unreadable copy step: %v", err)
	}
	if d.Action == actMove || d.Action == actMoveLog || d.Action == actMoved || d.Action == actReceipt {
		return nil, d, nil
	}
	f := m.byName[d.Index]
	if f == nil || !f.global {
		return nil, d, refuse("copy step for %q: no such global index or copy", d.Index)
	}
	if (f.kind == featCopy) != (d.Action == actCopyPut || d.Action == actCopyDel) {
		return nil, d, refuse("copy step for %s: action %q does not fit it", d.Index, d.Action)
	}
	if d.Action != actPut && d.Action != actDel && d.Action != actCopyPut && d.Action != actCopyDel {
		return nil, d, refuse("copy step for index %s: unknown action %q", d.Index, d.Action)
	}
	if _, bad := s.Entity.Properties[eventual.VersionProperty]; bad {
		return nil, d, refuse("copy step for index %s carries %s", d.Index, eventual.VersionProperty)
	}
	return f, d, nil
}

func (m *Model[T]) checkStep(s eventual.Step) error {
	_, _, err := m.readStep(s)
	return err
}

// owner names the entity a row of the index table belongs to.
func owner(e *store.Entity) eventual.Ref {
	t, _ := e.Properties[SourceTableProperty].(string)
	p, _ := e.Properties[SourcePartitionProperty].(string)
	r, _ := e.Properties[SourceRowProperty].(string)
	return eventual.Ref{Table: t, PartitionKey: p, RowKey: r}
}

func claimedAt(e *store.Entity) time.Time {
	t, _ := e.Properties[ClaimedProperty].(time.Time)
	return t
}

func retryable(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) ||
		store.EntityNotFound(err) || errors.Is(err, store.ErrUnknownOutcome)
}

var errContended = fmt.Errorf("model: the row kept changing under every attempt: %w", partition.ErrConflict)

// current reads entity src as stored: its row, and whether it still maps
// to the copy at a of index f.
func (m *Model[T]) current(ctx context.Context, f *Feature[T], src eventual.Ref, a at) (row store.Entity, found, holds bool, err error) {
	if src.RowKey == "" || src.Table == "" {
		return row, false, false, nil
	}
	row, found, err = src.Read(ctx, m.st)
	if err != nil || !found || reserved(&row) {
		return row, found && !reserved(&row), false, err
	}
	id := idOf(src.RowKey)
	if id == "" {
		return row, true, false, nil
	}
	v, err := decodeProps[T](src.PartitionKey, id, own(row.Properties), row.ETag)
	if err != nil {
		return row, true, false, err
	}
	val := f.value(v)
	if val == "" {
		return row, true, false, nil
	}
	now, err := m.globalAt(f, val, src.PartitionKey, id)
	return row, true, err == nil && now == a, nil
}

// heldClaim is a claim a write made: released (If-Match its ETag) if the
// write surely did not commit.
type heldClaim struct {
	a       at
	etag    store.ETag
	release bool
}

// claim reserves the value at a for src before the entity write. A free
// place gets a bare claim (version 0); the entity's own row is stamped
// with the write's token (so a queued removal of it leaves a claim, not a
// hole); another entity's row is refused while that entity holds the
// value or its claim is recent, and taken over otherwise. Only a unique
// index can meet another entity's row.
//
// A write of an entity arriving from a move (prev, the entity in flight)
// takes over the row of the entity in flight, and marks its claim with
// prev so lookups find the entity in flight until it arrived; such a
// claim is kept, not released, when the write fails.
func (m *Model[T]) claim(ctx context.Context, f *Feature[T], a at, value string, src eventual.Ref, token, prev string) (heldClaim, error) {
	tbl := m.st.Table(m.itable)
	now := m.o.Now().UTC()
	want := store.Entity{PartitionKey: a.pk, RowKey: a.rk, Properties: map[string]any{
		ClaimProperty: token, ClaimedProperty: now, eventual.VersionProperty: int64(0)}}
	m.stampOwner(want.Properties, src)
	if prev != "" {
		want.Properties[PrevProperty] = prev
	}
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
		switch {
		case store.EntityNotFound(err):
			etag, err := tbl.Insert(ctx, want)
			if retryable(err) {
				continue
			}
			if err != nil {
				return heldClaim{}, fmt.Errorf("model: claim %s %q: %w", f.name, value, err)
			}
			return heldClaim{a: a, etag: etag, release: prev == ""}, nil
		case err != nil:
			return heldClaim{}, fmt.Errorf("model: claim %s %q: %w", f.name, value, err)
		}
		o := owner(&cur)
		if o == src {
			stamp := store.Entity{PartitionKey: a.pk, RowKey: a.rk, Properties: map[string]any{ClaimProperty: token, ClaimedProperty: now}}
			_, err := tbl.Update(ctx, stamp, store.Merge, cur.ETag)
			if retryable(err) {
				continue
			}
			return heldClaim{a: a}, err
		}
		if in, err := m.movingTo(ctx, o, src); err != nil || in {
			if err != nil {
				return heldClaim{}, err
			}
			_, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
			if retryable(err) {
				continue
			}
			return heldClaim{a: a}, err
		}
		_, _, holds, err := m.current(ctx, f, o, a)
		if err != nil {
			return heldClaim{}, err
		}
		dup := &partition.DuplicateError{Table: m.itable, Partition: a.pk,
			Row:       partition.Row{Label: "claim of index " + f.name, Index: -1, Kind: store.ActionInsert, RowKey: a.rk},
			IndexName: f.name, Value: value, Holder: partition.Ref{PartitionKey: o.PartitionKey, RowKey: o.RowKey},
			Err: clientErr(store.CodeEntityAlreadyExists, 409, "model: %s %q is held by %s", f.name, value, o)}
		if holds {
			return heldClaim{}, dup
		}
		if tok, _ := cur.Properties[ClaimProperty].(string); tok != "" && now.Sub(claimedAt(&cur)) < m.o.ClaimLease {
			dup.Pending = true
			return heldClaim{}, dup
		}
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		if retryable(err) {
			continue
		}
		if err != nil {
			return heldClaim{}, err
		}
		return heldClaim{a: a, etag: etag, release: true}, nil
	}
	return heldClaim{}, fmt.Errorf("model: claim %s %q: %w", f.name, value, errContended)
}

// release removes the bare claims of a write that did not commit (best
// effort: a claim left behind expires, and Repair removes it).
func (m *Model[T]) release(ctx context.Context, held []heldClaim) {
	for _, h := range held {
		if h.release {
			_ = m.st.Table(m.itable).Delete(context.WithoutCancel(ctx), h.a.pk, h.a.rk, h.etag)
		}
	}
}

// runStep carries out one copy step under the guards.
func (m *Model[T]) runStep(ctx context.Context, op eventual.Operation, s eventual.Step) error {
	f, d, err := m.readStep(s)
	if err != nil {
		return err
	}
	if op.Source == nil {
		return refuse("copy step %s without a source", d.Action)
	}
	if f == nil {
		return m.runMove(ctx, op, s, d.Action)
	}
	a := at{s.Entity.PartitionKey, s.Entity.RowKey}
	switch d.Action {
	case actCopyPut:
		return m.copyPut(ctx, f, s.Entity, *op.Source, op.Version)
	case actCopyDel:
		return m.copyDel(ctx, f, a, *op.Source, op.Version)
	}
	if d.Action == actDel {
		return m.del(ctx, f, a, *op.Source, op.Version)
	}
	return m.putCopy(ctx, f, s.Entity, *op.Source, op.Version, d.Token)
}

// putCopy writes copy want of entity src at version v: over nothing (if
// the entity still maps to it), over an older copy of the same entity, or
// over a copy or claim of an entity that no longer holds the value;
// never over a newer copy.
func (m *Model[T]) putCopy(ctx context.Context, f *Feature[T], want store.Entity, src eventual.Ref, v int64, token string) error {
	tbl := m.st.Table(m.itable)
	want.Properties = maps.Clone(want.Properties)
	want.Properties[eventual.VersionProperty] = v
	a := at{want.PartitionKey, want.RowKey}
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
		if err != nil && !store.EntityNotFound(err) {
			return err
		}
		etag, werr, done := m.putOnce(ctx, f, tbl, cur, store.EntityNotFound(err), want, src, v, token)
		if done {
			return werr
		}
		if retryable(werr) {
			continue
		}
		if werr != nil {
			return werr
		}
		return m.postcheck(ctx, f, want, etag, src, v)
	}
	return errContended
}

// putOnce is one round of putCopy over cur (missing when absent): done
// when the step is over (with its error), otherwise the write it made
// (its ETag, or the error to judge: retry, fail, or postcheck).
func (m *Model[T]) putOnce(ctx context.Context, f *Feature[T], tbl store.Table, cur store.Entity, missing bool,
	want store.Entity, src eventual.Ref, v int64, token string) (store.ETag, error, bool) {
	switch {
	case missing:
		if moved, err := src.MovedPast(ctx, m.st, v); err != nil || moved {
			return "", err, true
		}
		etag, err := tbl.Insert(ctx, want)
		return etag, err, false
	case owner(&cur) != src:
		if moved, err := src.MovedPast(ctx, m.st, v); err != nil || moved {
			return "", err, true
		}
		o := owner(&cur)
		a := at{want.PartitionKey, want.RowKey}
		_, _, holds, err := m.current(ctx, f, o, a)
		if err != nil {
			return "", err, true
		}
		if in, err := m.movingTo(ctx, o, src); err != nil {
			return "", err, true
		} else if in {
			holds = false // the entity in flight to src: src takes its row over
		}
		if holds {
			return "", fmt.Errorf("%w: index %s, row (%q, %q) of %s: held by %s, and %s wants it at version %d",
				ErrHeldTwice, f.name, a.pk, a.rk, m.itable, o, src, v), true
		}
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		return etag, err, false
	}
	switch cv := eventual.VersionOf(&cur); {
	case cv > v:
		return "", nil, true
	case cv == v:
		// A run of this step that crashed after writing: finish it.
		return "", m.postcheck(ctx, f, want, cur.ETag, src, v), true
	case cv == 0:
		// The entity's bare claim: as good as no copy.
		moved, err := src.MovedPast(ctx, m.st, v)
		if err != nil {
			return "", err, true
		}
		if moved {
			return "", m.dropClaim(ctx, f, cur, src, token), true
		}
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		return etag, err, false
	default:
		// An older copy of the same entity: replace it, no postcheck.
		_, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		if err == nil {
			return "", nil, true
		}
		return "", err, false
	}
}

// dropClaim removes the bare claim cur when it is still the one the
// write with token made (no later write of the entity stamped it) and the
// entity, which moved on past that write, does not hold the value.
func (m *Model[T]) dropClaim(ctx context.Context, f *Feature[T], cur store.Entity, src eventual.Ref, token string) error {
	if tok, _ := cur.Properties[ClaimProperty].(string); token == "" || tok != token {
		return nil
	}
	a := at{cur.PartitionKey, cur.RowKey}
	_, _, holds, err := m.current(ctx, f, src, a)
	if err != nil || holds {
		return err
	}
	err = m.st.Table(m.itable).Delete(ctx, a.pk, a.rk, cur.ETag)
	if err == nil || store.EntityNotFound(err) || errors.Is(err, store.ErrPreconditionFailed) {
		return nil
	}
	return err
}

// postcheck runs after a copy was written where no copy of the same
// entity stood: the entity may have moved on between the check and the
// write, and the operation that moved it may have found nothing to
// remove. A copy the entity no longer maps to goes (if unchanged).
func (m *Model[T]) postcheck(ctx context.Context, f *Feature[T], c store.Entity, etag store.ETag, src eventual.Ref, v int64) error {
	a := at{c.PartitionKey, c.RowKey}
	row, found, holds, err := m.current(ctx, f, src, a)
	if err != nil {
		return err
	}
	if found && (holds || eventual.VersionOf(&row) <= v) {
		return nil
	}
	err = m.st.Table(m.itable).Delete(ctx, a.pk, a.rk, etag)
	if err == nil || store.EntityNotFound(err) || errors.Is(err, store.ErrPreconditionFailed) {
		return nil
	}
	return err
}

// del removes the copy at a of entity src if it is not newer than v and
// the entity does not hold the value now. A copy the entity claimed again
// recently (a write of it taking the value back, maybe in flight) becomes
// a bare claim instead of a hole another entity could take.
func (m *Model[T]) del(ctx context.Context, f *Feature[T], a at, src eventual.Ref, v int64) error {
	tbl := m.st.Table(m.itable)
	for range maxRounds {
		cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		cv := eventual.VersionOf(&cur)
		if owner(&cur) != src || cv > v || cv == 0 {
			return nil
		}
		_, _, holds, err := m.current(ctx, f, src, a)
		if err != nil {
			return err
		}
		if holds {
			return nil // a later operation refreshes it
		}
		if tok, _ := cur.Properties[ClaimProperty].(string); tok != "" && m.o.Now().Sub(claimedAt(&cur)) < m.o.ClaimLease {
			bare := store.Entity{PartitionKey: a.pk, RowKey: a.rk, Properties: map[string]any{
				ClaimProperty: tok, ClaimedProperty: cur.Properties[ClaimedProperty], eventual.VersionProperty: int64(0)}}
			m.stampOwner(bare.Properties, src)
			_, err = tbl.Update(ctx, bare, store.Replace, cur.ETag)
		} else {
			err = tbl.Delete(ctx, a.pk, a.rk, cur.ETag)
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
