package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/store"
)

// maxRounds bounds the read-and-retry rounds of a guarded write.
const maxRounds = claims.MaxRounds

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
	// clears that write's stamp (keeping any other write's), and removes
	// its bare claim when the entity moved on.
	Token string `json:"t,omitempty"`
}

// newToken returns a fresh claim token for a write.
func newToken() (string, error) { return claims.NewToken(), nil }

func (m *Model[T]) newStep(f *Feature[T], act string, c store.Entity, token string) eventual.Step {
	data, _ := json.Marshal(stepData{Index: f.name, Action: act, Token: token})
	return eventual.Custom(m.step, f.table, c, data)
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
	if f.kind == featCopy && tableOf(f, s.Table) == "" {
		return nil, d, refuse("copy step for %s: table %q is not one of its tables", d.Index, s.Table)
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
func owner(e *store.Entity) eventual.Ref { return claims.OwnerOf(e) }

func claimedAt(e *store.Entity) time.Time { return claims.ClaimedAt(e) }

var errContended = fmt.Errorf("model: the row kept changing under every attempt: %w", partition.ErrConflict)

// rules returns the judgement of the claim and copy rows of the index
// table (internal/claims): owners named on
// the rows with their table, an entity in flight handing its rows over to
// where it moves.
func (m *Model[T]) rules() *claims.Rules {
	return &claims.Rules{Store: m.st, Prefix: "model", Lease: m.o.ClaimLease, Now: m.o.Now,
		Current: m.judge, Handover: m.movingTo, Contended: errContended,
		Taken: func(p claims.Place, o eventual.Ref) *store.Error {
			return clientErr(store.CodeEntityAlreadyExists, 409, "model: %s %q is held by %s", p.Index, p.Value, o)
		},
		HeldTwice: func(p claims.Place, o, src eventual.Ref, v int64) error {
			return fmt.Errorf("%w: index %s, row (%q, %q) of %s: held by %s, and %s wants it at version %d",
				ErrHeldTwice, p.Index, p.PK, p.RK, p.Table, o, src, v)
		}}
}

// place is the row at a of index f in the index table.
func (m *Model[T]) place(f *Feature[T], a at, value string) claims.Place {
	return claims.Place{Table: f.table, PK: a.pk, RK: a.rk, Index: f.name, Value: value}
}

// judge is current for the claims package: entity o as stored, its
// version, and whether it maps to the row at p.
func (m *Model[T]) judge(ctx context.Context, p claims.Place, o eventual.Ref) (found bool, version int64, holds bool, err error) {
	f := m.byName[p.Index]
	if f == nil {
		return false, 0, false, refuse("no global index %q", p.Index)
	}
	row, found, holds, err := m.current(ctx, f, o, at{p.PK, p.RK})
	return found, eventual.VersionOf(&row), holds, err
}

// current reads entity src as stored: its row, and whether it still maps
// to the copy at a of index f (an entity in flight to src, a move's
// reservation, by the state its marker holds).
func (m *Model[T]) current(ctx context.Context, f *Feature[T], src eventual.Ref, a at) (row store.Entity, found, holds bool, err error) {
	if src.RowKey == "" || src.Table == "" {
		return row, false, false, nil
	}
	row, found, err = src.Read(ctx, m.st)
	if err != nil || !found {
		return row, found, false, err
	}
	state := row
	if reserved(&row) {
		// A move's reservation is no entity (found is false), but while
		// the marker at the source sends the entity to it, the entity is
		// in flight and holds what the marker holds: an arrival claims
		// the entity's values in the reservation's name, and a unique
		// value stays the entity's throughout the move.
		mk, in, err := m.arriving(ctx, &row, src)
		if err != nil || !in {
			return row, false, false, err
		}
		state, found = mk, false
	}
	id := idOf(src.RowKey)
	if id == "" {
		return row, found, false, nil
	}
	v, err := decodeProps[T](src.PartitionKey, id, own(state.Properties), state.ETag)
	if err != nil {
		return row, found, false, err
	}
	val := f.value(v)
	if val == "" {
		return row, found, false, nil
	}
	now, err := m.globalAt(f, val, src.PartitionKey, id)
	return row, found, err == nil && now == a, nil
}

// arriving reads the marker of the entity in flight to reservation r at
// dst: the marker, and whether it still sends the entity to dst (a
// reservation whose source never committed, or whose entity arrived or
// went elsewhere, has none).
func (m *Model[T]) arriving(ctx context.Context, r *store.Entity, dst eventual.Ref) (store.Entity, bool, error) {
	s, _ := r.Properties[MovingFromProperty].(string)
	from, err := parseRef(s)
	if err != nil {
		return store.Entity{}, false, nil
	}
	mk, found, err := from.Read(ctx, m.st)
	if err != nil || !found {
		return mk, false, err
	}
	to, ok := movedTo(&mk)
	return mk, ok && to == dst, nil
}

// heldClaim is a claim a write made: released (If-Match its ETag) if the
// write surely did not commit.
type heldClaim = claims.Held

// claim reserves the value at a for src before the entity write
// (claims.Rules.Claim judges the row). A free place gets a bare claim
// (version 0); the entity's own row is stamped with the write's token (so
// a queued removal of it leaves a claim, not a hole); another entity's
// row is refused while that entity holds the value or its claim is
// recent, and taken over otherwise. Only a unique index can meet another
// entity's row.
//
// A write of an entity arriving from a move (prev, the entity in flight)
// takes over the row of the entity in flight, and marks its claim with
// prev so lookups find the entity in flight until it arrived; such a
// claim is kept, not released, when the write fails.
//
// blind inserts the bare claim before reading the row (one request where
// the value is free): a write's claim of a value its entity did not hold,
// where the row is seldom there.
func (m *Model[T]) claim(ctx context.Context, f *Feature[T], a at, value string, src eventual.Ref, token, prev string, blind bool) (heldClaim, error) {
	c := claims.Claim{Place: m.place(f, a, value), Owner: src, Token: token, Keep: prev != "", Blind: blind}
	if prev != "" {
		c.Extra = map[string]any{PrevProperty: prev}
	}
	return m.rules().Claim(ctx, c)
}

// release removes the bare claims of a write that did not commit (best
// effort: a claim left behind expires, and Repair removes it).
func (m *Model[T]) release(ctx context.Context, held []heldClaim) {
	m.rules().Release(ctx, held)
}

// sideClaim is the claim of a value of a non-unique global index, sent
// beside the write's transaction instead of before it. Its row is keyed
// by the entity, so no other entity can take it, and the claim decides
// nothing: it only has to be there when the write returns, naming the
// entity (FindAll reads the entity through it before the copy is written)
// and stamped (a removal of an older copy of the entity leaves a bare
// claim, not a hole). internal/claims judges the row the same whichever
// of the claim and the transaction lands first.
type sideClaim struct {
	c    claims.Claim
	done chan struct{} // closed when the claim returned
	held heldClaim
	err  error
	// crash is a panic of the claim's goroutine, raised again in the
	// writer's (a process that dies sending the claim dies in its write).
	crash any
}

// sideClaims are a write's claims sent beside its transaction, by place:
// each is sent once per write, whatever attempt first needs it.
type sideClaims map[at]*sideClaim

// claimBeside starts the claim of value at a of index f for src on a
// goroutine of its own, unless the write already sent it; settleSide
// waits for it.
func (m *Model[T]) claimBeside(ctx context.Context, w *txWrite, f *Feature[T], a at, value string, src eventual.Ref, token string) {
	w.wanted[a] = true
	if _, sent := w.side[a]; sent {
		return
	}
	s := &sideClaim{c: claims.Claim{Place: m.place(f, a, value), Owner: src, Token: token, Blind: true}, done: make(chan struct{})}
	w.side[a] = s
	rules := m.rules()
	go func() {
		defer close(s.done)
		defer func() {
			if r := recover(); r != nil {
				s.crash = r
			}
		}()
		s.held, s.err = rules.Claim(ctx, s.c)
	}()
}

// wait waits for every claim, and raises the panic of one that panicked.
func (sc sideClaims) wait() {
	var crash any
	for _, s := range sc {
		<-s.done
		if crash == nil {
			crash = s.crash
		}
	}
	if crash != nil {
		panic(crash)
	}
}

// sideRetries bounds the claims made again after a transaction that
// committed, when the one sent beside it failed; sideBackoff is the wait
// before the first (doubled each time).
const (
	sideRetries = 3
	sideBackoff = 10 * time.Millisecond
)

// settleSide waits for the write's side claims and finishes them by the
// outcome of its transaction (err): committed, a claim the committed
// attempt needed that failed is made again (a few times: the write is
// done whatever happens, and without the row its lookups find the entity
// once the worker wrote the copy), and a claim only an earlier attempt
// needed is released; surely not committed, every claim is released;
// unknown, every claim stays (the write may have applied).
func (m *Model[T]) settleSide(ctx context.Context, w *txWrite, err error) {
	if len(w.side) == 0 {
		return
	}
	w.side.wait()
	var drop []heldClaim
	switch {
	case err == nil:
		for a, s := range w.side {
			switch {
			case !w.wanted[a]:
				drop = append(drop, s.held)
			case s.err != nil:
				m.claimAgain(ctx, s.c)
			}
		}
	case !errors.Is(err, store.ErrUnknownOutcome):
		for _, s := range w.side {
			drop = append(drop, s.held)
		}
	}
	m.release(ctx, drop)
	w.side = sideClaims{}
}

// claimAgain makes claim c again after its first sending failed, up to
// sideRetries times.
func (m *Model[T]) claimAgain(ctx context.Context, c claims.Claim) {
	d := sideBackoff
	for range sideRetries {
		if wait.Sleep(ctx, d) != nil {
			return
		}
		if _, err := m.rules().Claim(ctx, c); err == nil {
			return
		}
		d *= 2
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
		return m.copyPut(ctx, f, tableOf(f, s.Table), s.Entity, *op.Source, op.Version)
	case actCopyDel:
		return m.copyDel(ctx, f, eventual.Ref{Table: tableOf(f, s.Table), PartitionKey: a.pk, RowKey: a.rk}, *op.Source, op.Version)
	}
	if d.Action == actDel {
		return m.del(ctx, f, a, *op.Source, op.Version)
	}
	return m.putCopy(ctx, f, s.Entity, *op.Source, op.Version, d.Token)
}

// putCopy writes copy want of entity src at version v, made by the write
// with token ("" when unknown): over nothing (if the entity still maps to
// it), over an older copy of the same entity, or over a copy or claim of
// an entity that no longer holds the value; never over a newer copy, and
// never erasing the claim stamp of another write (claims.Rules.Put).
func (m *Model[T]) putCopy(ctx context.Context, f *Feature[T], want store.Entity, src eventual.Ref, v int64, token string) error {
	return m.rules().Put(ctx, m.place(f, at{want.PartitionKey, want.RowKey}, ""), want, src, v, token)
}

// del removes the copy at a of entity src if it is not newer than v and
// the entity does not hold the value now. A copy the entity claimed again
// recently (a write of it taking the value back, maybe in flight) becomes
// a bare claim instead of a hole another entity could take
// (claims.Rules.Del).
func (m *Model[T]) del(ctx context.Context, f *Feature[T], a at, src eventual.Ref, v int64) error {
	return m.rules().Del(ctx, m.place(f, a, ""), src, v)
}
