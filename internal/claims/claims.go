// Package claims judges the rows of the values of an index whose copies
// live away from their entities: the model's global indexes. A value has one row in the index table, keyed by the value
// (and, for a non-unique index, by the entity): first the bare claim a
// writer takes before its entity write (version 0), then the copy the
// engine's worker writes over it (the entity's version). Every write to
// such a row is conditional (an insert, or If-Match the ETag read) and
// judged here, once: who may claim a row, take it over, write a copy over
// it, or remove it.
//
// The protocol. A row names its owner (the entity) and may carry a claim
// stamp: the token of a write of the owner that claimed the value, and
// when. A writer claims a value before its entity write: a missing row
// is inserted; its entity's own row is stamped with the write's token; a
// row of another entity is refused while that entity holds the value, or
// while its stamp is younger than the lease (a write of it may still
// land), and taken over otherwise, If-Match the ETag read before the
// judgement. So a takeover is justified only by reads made after the
// row's last change, and a write of the owner that claimed the row since
// makes it fail.
//
// The claims must be made inside the entity's transaction
// (eventual.Engine.Write's function), on every attempt: after it read the
// partition's fence, before it commits over it. Another write of the
// entity in between moves the fence, so the write starts over and claims
// again: it never commits on a claim judged before its entity's last
// change (an insert of an entity deleted, written again and deleted again
// meanwhile would otherwise commit on a claim that was stamped over and
// let go).
//
// A row only its owner can ever hold (model's non-unique global index
// keys it by the entity) is no permission: no other entity claims it, and
// its claim only makes the row exist, naming the owner and stamped, by
// the time the write returns (so that a lookup finds the entity before
// the copy is written), and turns a removal of an older copy of the owner
// into a bare claim rather than a hole. Such a claim may be sent beside
// the transaction instead of before it, as long as the writer waits for
// it before it returns: whichever lands first, the row is there when both
// did, since a removal of the owner's copy that runs between the
// transaction and the stamp makes the stamp (If-Match) fail, and the
// claim reads again and inserts the row.
//
// The stamp is what keeps a claim of a write in flight: only the copy of
// that same write (the put step carrying its token) clears it; a copy
// written from an earlier write of the entity keeps it, and a removal of
// the copy turns a row with a young stamp into a bare claim instead of a
// hole another entity could claim.
package claims

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/store"
)

// The properties of a row besides the entity's copied ones (and
// eventual.VersionProperty, the version the copy was made from; 0 for a
// bare claim).
const (
	// SourceTableProperty, SourcePartitionProperty and SourceRowProperty
	// name the row's owner.
	SourceTableProperty     = "TkSrcTable"
	SourcePartitionProperty = "TkSrcPK"
	SourceRowProperty       = "TkSrcRK"
	// ClaimProperty holds the token of the write that claimed the value
	// (the stamp), ClaimedProperty when.
	ClaimProperty   = "TkClaim"
	ClaimedProperty = "TkClaimed"
)

// MaxRounds bounds the read-and-retry rounds of a guarded write under
// contention.
const MaxRounds = 8

// Place is the row of one value of one index.
type Place struct {
	// Table is the index table; PK and RK the row's keys.
	Table, PK, RK string
	// Index and Value name the index and the value, for errors (Value may
	// be empty where a row is judged without it).
	Index, Value string
}

// Rules are what the package judging the rows needs from its user.
type Rules struct {
	// Store holds the index table and the entities.
	Store store.Store
	// Prefix starts every error message ("xindex", "model").
	Prefix string
	// Lease is how long a stamp keeps other entities off the value; Now
	// the clock of stamps.
	Lease time.Duration
	Now   func() time.Time
	// Current reads entity o as stored: whether it exists, its version,
	// and whether it maps to the row at p now (holds its value). An owner
	// with an empty RowKey is not found.
	Current func(ctx context.Context, p Place, o eventual.Ref) (found bool, version int64, holds bool, err error)
	// Handover reports whether entity o is in flight to entity to (a
	// move), whose rows to takes over whatever o holds; nil for never.
	Handover func(ctx context.Context, o, to eventual.Ref) (bool, error)
	// Taken is the refusal (Code EntityAlreadyExists, Status 409) a
	// *partition.DuplicateError carries for a value holder holds.
	Taken func(p Place, holder eventual.Ref) *store.Error
	// HeldTwice is the error of a copy step that finds the value held by
	// holder, another entity that still holds it, while claimant (at
	// version v) holds it too.
	HeldTwice func(p Place, holder, claimant eventual.Ref, v int64) error
	// Contended is the error of a guarded write that lost every round (a
	// partition.ErrConflict: the worker runs the step again).
	Contended error
}

// NewToken returns a fresh claim token.
func NewToken() string { return rand.Text() }

// Retryable reports a guarded write that lost a race or whose answer was
// lost: read again and let the judgement decide.
func Retryable(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) ||
		store.EntityNotFound(err) || errors.Is(err, store.ErrUnknownOutcome)
}

// OwnerOf reads the owner row e names.
func OwnerOf(e *store.Entity) eventual.Ref {
	table, _ := e.Properties[SourceTableProperty].(string)
	pk, _ := e.Properties[SourcePartitionProperty].(string)
	rk, _ := e.Properties[SourceRowProperty].(string)
	return eventual.Ref{Table: table, PartitionKey: pk, RowKey: rk}
}

// StampOwner names o as the owner in a row's properties.
func (r *Rules) StampOwner(props map[string]any, o eventual.Ref) {
	props[SourceTableProperty] = o.Table
	props[SourcePartitionProperty] = o.PartitionKey
	props[SourceRowProperty] = o.RowKey
}

// ClaimedAt reads when a row was stamped.
func ClaimedAt(e *store.Entity) time.Time {
	t, _ := e.Properties[ClaimedProperty].(time.Time)
	return t
}

// TokenOf reads a row's stamp ("" for none).
func TokenOf(e *store.Entity) string {
	t, _ := e.Properties[ClaimProperty].(string)
	return t
}

// young reports a row stamped less than the lease ago.
func (r *Rules) young(e *store.Entity) bool {
	return TokenOf(e) != "" && r.Now().Sub(ClaimedAt(e)) < r.Lease
}

// Held is a claim a write made: released (If-Match its ETag) when the
// write surely did not commit and Release is set.
type Held struct {
	Table, PK, RK string
	ETag          store.ETag
	Release       bool // a row this write created or took over
}

// Claim is one value a write claims before its entity write.
type Claim struct {
	Place
	// Owner is the entity; Token the write's.
	Owner eventual.Ref
	Token string
	// Extra are properties the claim row carries besides the stamp and the
	// owner (model: the entity in flight it arrives from).
	Extra map[string]any
	// Keep leaves a claim row this write inserted in place when the write
	// fails (it expires).
	Keep bool
	// Blind sends the insert of the bare claim before reading the row:
	// one request where the value is free (the usual case of a value the
	// owner did not hold), one more (the read, then the judgement below)
	// where a row is there. The outcome is the same either way: the
	// service inserts only over no row.
	Blind bool
}

// Claim reserves c's value for its owner before the entity write. A
// missing row gets a bare claim; the owner's own row (claim or copy) is
// stamped with the write's token, and never released, since another
// write of the owner may rely on it; a row of an entity in flight to the
// owner is taken over; another entity's row is refused with a
// *partition.DuplicateError while that entity holds the value (or, with
// Pending set, while its stamp is young), and taken over otherwise.
func (r *Rules) Claim(ctx context.Context, c Claim) (Held, error) {
	tbl := r.Store.Table(c.Table)
	now := r.Now().UTC()
	want := store.Entity{PartitionKey: c.PK, RowKey: c.RK, Properties: map[string]any{
		ClaimProperty: c.Token, ClaimedProperty: now, eventual.VersionProperty: int64(0)}}
	r.StampOwner(want.Properties, c.Owner)
	maps.Copy(want.Properties, c.Extra)
	if c.Blind {
		etag, err := tbl.Insert(ctx, want)
		if err == nil {
			return Held{Table: c.Table, PK: c.PK, RK: c.RK, ETag: etag, Release: !c.Keep}, nil
		}
		if !Retryable(err) {
			return Held{}, r.claimErr(c, err)
		}
		// A row is there (or the answer was lost): read and judge it.
	}
	for range MaxRounds {
		cur, err := tbl.Get(ctx, c.PK, c.RK, nil)
		switch {
		case store.EntityNotFound(err):
			etag, err := tbl.Insert(ctx, want)
			if Retryable(err) {
				continue
			}
			if err != nil {
				return Held{}, r.claimErr(c, err)
			}
			return Held{Table: c.Table, PK: c.PK, RK: c.RK, ETag: etag, Release: !c.Keep}, nil
		case err != nil:
			return Held{}, r.claimErr(c, err)
		}
		o := OwnerOf(&cur)
		if o == c.Owner {
			// Its own claim or copy: stamp it, so that a removal of the
			// copy on the way (an earlier write gave the value up) leaves
			// a claim, not a hole.
			stamp := store.Entity{PartitionKey: c.PK, RowKey: c.RK, Properties: map[string]any{ClaimProperty: c.Token, ClaimedProperty: now}}
			_, err := tbl.Update(ctx, stamp, store.Merge, cur.ETag)
			if Retryable(err) {
				continue
			}
			return Held{Table: c.Table, PK: c.PK, RK: c.RK}, err
		}
		if r.Handover != nil {
			in, err := r.Handover(ctx, o, c.Owner)
			if err != nil {
				return Held{}, err
			}
			if in {
				_, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
				if Retryable(err) {
					continue
				}
				return Held{Table: c.Table, PK: c.PK, RK: c.RK}, err
			}
		}
		_, _, holds, err := r.Current(ctx, c.Place, o)
		if err != nil {
			return Held{}, err
		}
		dup := &partition.DuplicateError{Table: c.Table, Partition: c.PK,
			Row:       partition.Row{Label: "claim of index " + c.Index, Index: -1, Kind: store.ActionInsert, RowKey: c.RK},
			IndexName: c.Index, Value: c.Value, Holder: partition.Ref{PartitionKey: o.PartitionKey, RowKey: o.RowKey},
			Err: r.Taken(c.Place, o)}
		if holds {
			return Held{}, dup
		}
		if r.young(&cur) {
			// A write of the owner claimed the value recently and may
			// still land.
			dup.Pending = true
			return Held{}, dup
		}
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		if Retryable(err) {
			continue
		}
		if err != nil {
			return Held{}, err
		}
		return Held{Table: c.Table, PK: c.PK, RK: c.RK, ETag: etag, Release: true}, nil
	}
	return Held{}, r.claimErr(c, r.Contended)
}

func (r *Rules) claimErr(c Claim, err error) error {
	return fmt.Errorf("%s: claim %s %q: %w", r.Prefix, c.Index, naming.Cut(c.Value), err)
}

// Release removes the claims of a write that surely did not commit, if
// no one wrote them since (best effort: a claim left behind expires).
func (r *Rules) Release(ctx context.Context, held []Held) {
	for _, h := range held {
		if h.Release {
			_ = r.Store.Table(h.Table).Delete(context.WithoutCancel(ctx), h.PK, h.RK, h.ETag)
		}
	}
}

// movedOn reports whether entity src is gone or past version v: a later
// operation carries its state, so a copy from v must not be created.
func (r *Rules) movedOn(ctx context.Context, src eventual.Ref, v int64) (bool, error) {
	moved, err := eventual.MovedPast(ctx, r.Store, src, v)
	if err != nil {
		return false, fmt.Errorf("%s: read entity %s: %w", r.Prefix, src, err)
	}
	return moved, nil
}

// Put writes want, the copy of entity src at version v made by the write
// with token (empty when unknown), at p: over nothing (while the entity
// has not moved on), over an older copy of the same entity, over its bare
// claim, or over a row of an entity that no longer holds the value;
// never over a newer copy. A copy written where no copy of the entity
// stood is checked afterwards (Postcheck). A stamp on the row that is not
// token's is kept: it is a later write's claim, maybe in flight.
func (r *Rules) Put(ctx context.Context, p Place, want store.Entity, src eventual.Ref, v int64, token string) error {
	tbl := r.Store.Table(p.Table)
	want.Properties = maps.Clone(want.Properties)
	want.Properties[eventual.VersionProperty] = v
	for range MaxRounds {
		cur, err := tbl.Get(ctx, p.PK, p.RK, nil)
		missing := store.EntityNotFound(err)
		if err != nil && !missing {
			return err
		}
		etag, werr, done := r.putOnce(ctx, tbl, p, cur, missing, want, src, v, token)
		if done {
			return werr
		}
		if Retryable(werr) {
			continue
		}
		if werr != nil {
			return werr
		}
		return r.Postcheck(ctx, p, etag, src, v)
	}
	return r.Contended
}

// putOnce is one round of Put over cur (missing when absent): done when
// the step is over (with its error), otherwise the write it made (its
// ETag, or the error to judge: retry, fail, or postcheck).
func (r *Rules) putOnce(ctx context.Context, tbl store.Table, p Place, cur store.Entity, missing bool,
	want store.Entity, src eventual.Ref, v int64, token string) (store.ETag, error, bool) {
	if missing {
		if moved, err := r.movedOn(ctx, src, v); err != nil || moved {
			return "", err, true
		}
		etag, err := tbl.Insert(ctx, want)
		return etag, err, false
	}
	if o := OwnerOf(&cur); o != src {
		if moved, err := r.movedOn(ctx, src, v); err != nil || moved {
			return "", err, true
		}
		_, _, holds, err := r.Current(ctx, p, o)
		if err != nil {
			return "", err, true
		}
		if holds && r.Handover != nil {
			in, err := r.Handover(ctx, o, src)
			if err != nil {
				return "", err, true
			}
			holds = !in // the entity in flight to src: src takes its row over
		}
		if holds {
			return "", r.HeldTwice(p, o, src, v), true
		}
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		return etag, err, false
	}
	over := keepStamp(want, &cur, token)
	switch cv := eventual.VersionOf(&cur); {
	case cv > v:
		return "", nil, true
	case cv == v:
		// A run of this step that crashed after writing: finish it.
		return "", r.Postcheck(ctx, p, cur.ETag, src, v), true
	case cv == 0:
		// The entity's bare claim: as good as no copy.
		moved, err := r.movedOn(ctx, src, v)
		if err != nil {
			return "", err, true
		}
		if moved {
			return "", r.dropClaim(ctx, p, cur, src, token), true
		}
		etag, err := tbl.Update(ctx, over, store.Replace, cur.ETag)
		return etag, err, false
	default:
		// An older copy of the same entity: replace it, no postcheck
		// (the entity may have moved on: a later operation carries its
		// state, and the stamp of a later write stays).
		_, err := tbl.Update(ctx, over, store.Replace, cur.ETag)
		if err == nil {
			return "", nil, true
		}
		return "", err, false
	}
}

// keepStamp returns want carrying cur's stamp when cur has one that is
// not token's: the claim of another write of the entity, which the copy
// of this write must not erase.
func keepStamp(want store.Entity, cur *store.Entity, token string) store.Entity {
	tok := TokenOf(cur)
	if tok == "" || tok == token {
		return want
	}
	want.Properties = maps.Clone(want.Properties)
	want.Properties[ClaimProperty] = tok
	want.Properties[ClaimedProperty] = cur.Properties[ClaimedProperty]
	return want
}

// dropClaim removes the bare claim cur when it is still the one the
// write with token made (no later write of the entity stamped it) and the
// entity, which moved on past that write, does not hold the value.
func (r *Rules) dropClaim(ctx context.Context, p Place, cur store.Entity, src eventual.Ref, token string) error {
	if token == "" || TokenOf(&cur) != token {
		return nil
	}
	_, _, holds, err := r.Current(ctx, p, src)
	if err != nil || holds {
		return err
	}
	return r.deleteIfUnchanged(ctx, p, cur.ETag)
}

// Postcheck runs after a copy of entity src at version v was written
// (with ETag etag) where no copy of the entity stood: the entity may have
// moved on between the check and the write, and the operation that moved
// it may have found nothing to remove. A copy the entity no longer maps
// to goes, if unchanged since.
func (r *Rules) Postcheck(ctx context.Context, p Place, etag store.ETag, src eventual.Ref, v int64) error {
	found, ver, holds, err := r.Current(ctx, p, src)
	if err != nil {
		return err
	}
	if found && (ver <= v || holds) {
		return nil
	}
	return r.deleteIfUnchanged(ctx, p, etag)
}

// deleteIfUnchanged removes the row at p if it still has etag; a row
// gone or changed since is no error.
func (r *Rules) deleteIfUnchanged(ctx context.Context, p Place, etag store.ETag) error {
	err := r.Store.Table(p.Table).Delete(ctx, p.PK, p.RK, etag)
	if err == nil || store.EntityNotFound(err) || errors.Is(err, store.ErrPreconditionFailed) {
		return nil
	}
	return err
}

// Del removes the copy at p of entity src if it is not newer than v. A
// bare claim, a newer copy or another entity's row is left alone. A copy
// with a stamp (a write of the entity took the value back) stays while
// the entity holds the value, and while the stamp is young it becomes a
// bare claim instead of a hole another entity could take (the write may
// still be in flight).
func (r *Rules) Del(ctx context.Context, p Place, src eventual.Ref, v int64) error {
	tbl := r.Store.Table(p.Table)
	for range MaxRounds {
		cur, err := tbl.Get(ctx, p.PK, p.RK, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		cv := eventual.VersionOf(&cur)
		if OwnerOf(&cur) != src || cv > v || cv == 0 {
			// A bare claim may be a later write's of the same entity,
			// still in flight (one that never lands expires).
			return nil
		}
		if TokenOf(&cur) != "" {
			// The entity claimed the value again since this copy was
			// written. If it holds the value now, its later operation
			// refreshes the copy. An unstamped copy needs no such read:
			// an entity takes a value back only through a claim, whose
			// stamp stays until that write's own copy replaces it.
			_, _, holds, err := r.Current(ctx, p, src)
			if err != nil {
				return err
			}
			if holds {
				return nil
			}
		}
		if r.young(&cur) {
			bare := store.Entity{PartitionKey: p.PK, RowKey: p.RK, Properties: map[string]any{
				ClaimProperty: TokenOf(&cur), ClaimedProperty: cur.Properties[ClaimedProperty], eventual.VersionProperty: int64(0)}}
			r.StampOwner(bare.Properties, src)
			_, err = tbl.Update(ctx, bare, store.Replace, cur.ETag)
		} else {
			err = tbl.Delete(ctx, p.PK, p.RK, cur.ETag)
		}
		if err == nil || store.EntityNotFound(err) {
			return nil
		}
		if Retryable(err) {
			continue
		}
		return err
	}
	return r.Contended
}

// Expired reports whether row cur at p is a bare claim whose lease ran
// out and whose owner does not hold the value: a claim a writer that
// crashed or failed left, which may be removed (If-Match cur's ETag).
func (r *Rules) Expired(ctx context.Context, p Place, cur *store.Entity) (bool, error) {
	if eventual.VersionOf(cur) != 0 || r.Now().Sub(ClaimedAt(cur)) < r.Lease {
		return false, nil
	}
	_, _, holds, err := r.Current(ctx, p, OwnerOf(cur))
	return !holds, err
}
