package onetomany

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// attempts bounds the tries of a write without the parent's ETag that
// other writers keep getting ahead of, and the consecutive tries of a
// Delete that make no progress.
const attempts = 16

// backoff is the pause before try n (n >= 1) after the first: full jitter
// over a ceiling doubling from 10 ms to 1 s.
var backoff = func(n int) time.Duration {
	d := time.Second
	if n-1 < 7 {
		d = min(d, 10*time.Millisecond<<(n-1))
	}
	return rand.N(d)
}

// wait pauses before try n, or returns the context's error.
func wait(ctx context.Context, n int) error {
	d := backoff(n)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// Insert adds a new parent and its children in one transaction, and stores
// the new ETag in each value's etag field. A parent or child that exists is
// an error matching store.ErrAlreadyExists; nothing is written then.
func (t *Table[P, C]) Insert(ctx context.Context, parent *P, children ...*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	acts, ms, err := t.prepare(pe, store.Action{Kind: store.ActionInsert, Entity: pe}, store.ActionInsert, children)
	if err != nil {
		return err
	}
	err = t.send(ctx, pe, acts, ms, parent, store.ActionInsert)
	if store.Index(err) == 0 && errors.Is(err, store.ErrAlreadyExists) {
		// The parent's row exists: it may be the mark of a pending delete.
		if cur, rerr := t.table.Get(ctx, pe.PartitionKey, pe.RowKey, &store.GetOptions{Select: []string{t.prop}}); rerr == nil && cur.Properties[t.prop] == t.mark {
			return t.pending(pe, store.CodeEntityAlreadyExists, 409)
		}
	}
	return err
}

// Update replaces the parent if it still has the ETag in its etag field
// (store.ErrPreconditionFailed otherwise, mapper.ErrNoETag without one) and
// inserts or replaces the given children, in one transaction. Children not
// given are left as they are.
func (t *Table[P, C]) Update(ctx context.Context, parent *P, children ...*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	etag := mapper.ETagOf(parent)
	if etag == "" {
		return fmt.Errorf("onetomany: update of parent (%q, %q): %w", pe.PartitionKey, pe.RowKey, mapper.ErrNoETag)
	}
	acts, ms, err := t.prepare(pe, store.Action{Kind: store.ActionUpdateReplace, Entity: pe, IfMatch: etag}, store.ActionUpsertReplace, children)
	if err != nil {
		return err
	}
	return t.send(ctx, pe, acts, ms, parent, store.ActionUpsertReplace)
}

// Add inserts children of an existing parent in one transaction with a
// write of the parent that changes nothing but its ETag, conditional on
// the ETag in the parent's etag field. When the field holds none, Add
// first reads the parent (one point read) and makes the write conditional
// on the ETag read, reading again when another writer gets in between (up
// to 16 times, then an error matching partition.ErrConflict, a race to
// retry, and store.ErrPreconditionFailed). So a child is never
// added to a parent that is gone or whose family is being deleted, and
// two writers of one family never interleave. The parent's new ETag goes
// into its etag field. Only the parent's key fields need be set.
func (t *Table[P, C]) Add(ctx context.Context, parent *P, children ...*C) error {
	return t.fenced(ctx, parent, store.ActionInsert, children)
}

// Remove deletes children of a parent in one transaction with the
// parent's fence, as Add does. A child whose value holds an ETag is
// deleted only if it still has it; a missing child fails the transaction
// with store.ErrNotFound, and nothing is written.
func (t *Table[P, C]) Remove(ctx context.Context, parent *P, children ...*C) error {
	return t.fenced(ctx, parent, store.ActionDelete, children)
}

// fenced writes children with the parent's ETag as the fence: the one
// the value holds, or the one read.
func (t *Table[P, C]) fenced(ctx context.Context, parent *P, kind store.ActionKind, children []*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	etag := mapper.ETagOf(parent)
	acts, ms, err := t.prepare(pe, t.touch(pe, etag), kind, children)
	if err != nil {
		return err
	}
	if etag != "" {
		return t.send(ctx, pe, acts, ms, parent, kind)
	}
	for n := 1; ; n++ {
		cur, err := t.table.Get(ctx, pe.PartitionKey, pe.RowKey, &store.GetOptions{Select: []string{t.prop}})
		switch {
		case store.EntityNotFound(err):
			return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %w: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), errNoParent, err)
		case err != nil:
			return fmt.Errorf("onetomany: read of parent (%q, %q) of table %s: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), err)
		case cur.Properties[t.prop] == t.mark:
			return t.pending(pe, store.CodeResourceNotFound, 404)
		case cur.Properties[t.prop] != t.pKind:
			return fmt.Errorf("onetomany: %w: the row (%q, %q) of table %s is of kind %v, not a parent (%s)", mapper.ErrWrongKind, pe.PartitionKey, pe.RowKey, t.table.Name(), cur.Properties[t.prop], t.pKind)
		}
		acts[0].IfMatch = cur.ETag
		err = t.send(ctx, pe, acts, ms, parent, kind)
		if store.Index(err) != 0 || !errors.Is(err, store.ErrPreconditionFailed) {
			return err
		}
		if n >= attempts {
			// Lost to other writers of the family every time: a race,
			// worth retrying later, not a change under the caller's ETag.
			return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %d tries lost to concurrent writers of the family: %w: %w",
				pe.PartitionKey, pe.RowKey, t.table.Name(), n, partition.ErrConflict, err)
		}
		// Another writer of the family got in between: read again.
		if werr := wait(ctx, n); werr != nil {
			return err
		}
	}
}

// touch is a write of the parent (pk, rk) that changes only its ETag: a
// merge of its discriminator, which it has already.
func (t *Table[P, C]) touch(pe store.Entity, etag store.ETag) store.Action {
	return store.Action{Kind: store.ActionUpdateMerge, IfMatch: etag, Entity: store.Entity{
		PartitionKey: pe.PartitionKey, RowKey: pe.RowKey, Properties: map[string]any{t.prop: t.pKind}}}
}

// prepare checks the children and builds the transaction: the parent's
// action head, then one action of kind per child.
func (t *Table[P, C]) prepare(pe store.Entity, head store.Action, kind store.ActionKind, children []*C) ([]store.Action, []member, error) {
	ms, err := t.children(pe.PartitionKey, pe.RowKey, children)
	if err != nil {
		return nil, nil, err
	}
	acts := make([]store.Action, 0, 1+len(ms))
	acts = append(acts, head)
	for _, m := range ms {
		a := store.Action{Kind: kind, Entity: m.e}
		if kind == store.ActionDelete {
			a.Entity.Properties = nil
			if a.IfMatch = mapper.ETagOf(m.value); a.IfMatch == "" {
				a.IfMatch = store.ETagAny
			}
		}
		acts = append(acts, a)
	}
	check := acts
	if head.IfMatch == "" && head.Kind != store.ActionInsert {
		// The fence's ETag is read later: check with a stand-in.
		check = append([]store.Action(nil), acts...)
		check[0].IfMatch = store.ETagAny
	}
	if err := store.ValidateTransaction(check); err != nil {
		return nil, nil, t.explain(err, pe, ms)
	}
	return acts, ms, nil
}

// send sends a family write as one transaction, and hands the new ETags
// back.
func (t *Table[P, C]) send(ctx context.Context, pe store.Entity, acts []store.Action, ms []member, parent *P, kind store.ActionKind) error {
	res, err := t.table.Transact(ctx, acts)
	if err != nil {
		return t.explain(err, pe, ms)
	}
	if err := mapper.SetETag(parent, res[0].ETag); err != nil {
		return err
	}
	if kind == store.ActionDelete {
		return nil
	}
	for i, m := range ms {
		if err := mapper.SetETag(m.value, res[1+i].ETag); err != nil {
			return err
		}
	}
	return nil
}

// explain names the row of a family write that failed.
func (t *Table[P, C]) explain(err error, pe store.Entity, ms []member) error {
	i := store.Index(err)
	switch {
	case i == 0 && store.EntityNotFound(err):
		return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %w: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), errNoParent, err)
	case i == 0:
		return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), err)
	case i > 0 && i <= len(ms):
		return fmt.Errorf("onetomany: child %d (%q) of parent (%q, %q): %w", i-1, ms[i-1].e.RowKey, pe.PartitionKey, pe.RowKey, err)
	}
	return fmt.Errorf("onetomany: family of (%q, %q) in table %s: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), err)
}

// Delete removes the parent and all of its children.
//
// A family of up to MaxChildrenPerWrite children goes in one transaction,
// conditional on the parent's ETag. A larger one goes in transactions of
// that many children; the first also replaces the parent by a mark,
// conditional on its ETag, and each later one rewrites the mark
// conditional on the mark's ETag; the last deletes the mark. From the
// first transaction on, the family is deleted for everyone: Get finds no
// parent, and Add, Remove and Update are refused (ErrDeletePending), so no
// writer adds to a family being deleted and the delete can always be
// finished: Delete tries again after a conflict, a throttled request or a
// lost answer (which the store resolves by reading the rows back, never
// by sending again), up to 16 tries without progress. When it stops
// before finishing (the context ends, the store keeps failing), it
// returns a *DeletePendingError saying how many rows it deleted and how
// many remain, and any later Delete of the family finishes it.
//
// When the parent value holds an ETag, the family is deleted only if the
// parent still has it: otherwise store.ErrPreconditionFailed, and nothing
// is deleted. Without one, Delete reads the family again when another
// writer changes it before the first transaction (up to 16 times). A
// family whose delete is pending is finished whatever ETag the value
// holds. A missing parent is not an error without an ETag; its children,
// if any, are deleted.
func (t *Table[P, C]) Delete(ctx context.Context, parent *P) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	rng, err := familyRange(pe.RowKey)
	if err != nil {
		return err
	}
	d := &deletion[P, C]{t: t, pe: pe, rng: rng, want: mapper.ETagOf(parent), remaining: -1}
	return d.run(ctx)
}

// deletion is one call of Delete.
type deletion[P, C any] struct {
	t         *Table[P, C]
	pe        store.Entity
	rng       keys.Range
	want      store.ETag // the ETag the caller holds, "" for none
	deleted   int        // rows this call's confirmed transactions deleted
	remaining int        // rows left, as last read or written; -1 unknown
	marked    bool       // the parent is known to carry the mark
	lost      error      // a transaction's lost answer, when the family has not been read since
}

// listing is the family as one query read it.
type listing struct {
	etag   store.ETag // the parent's, "" when missing
	marked bool       // the parent carries the mark
	rows   []string   // the children's RowKeys
}

// errReread asks for the family to be read again.
var errReread = errors.New("onetomany: read the family again")

// run deletes the family, reading it again after each failed
// transaction.
func (d *deletion[P, C]) run(ctx context.Context) error {
	fails := 0
	for n := 0; ; n++ {
		if n > 0 {
			if err := wait(ctx, max(fails, 1)); err != nil {
				return d.stop(err)
			}
		}
		before := d.remaining
		fam, err := d.list(ctx)
		if err != nil {
			return d.stop(err)
		}
		if before >= 0 && d.remaining < before {
			fails = 0 // someone deleted rows since: progress
		}
		if !fam.marked {
			if fam.etag == "" && len(fam.rows) == 0 {
				if d.want != "" && n == 0 {
					return d.nothing(store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
						"onetomany: parent (%q, %q) is gone, not at ETag %s", d.pe.PartitionKey, d.pe.RowKey, d.want))
				}
				return nil // deleted: by this call's transaction whose answer was lost, or by another
			}
			if d.want != "" && fam.etag != d.want {
				got := "gone"
				if fam.etag != "" {
					got = "at ETag " + string(fam.etag)
				}
				return d.nothing(store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
					"onetomany: parent (%q, %q) changed since it was read (it is %s, not at ETag %s)", d.pe.PartitionKey, d.pe.RowKey, got, d.want))
			}
		}
		progress := d.deleted
		err = d.steps(ctx, fam)
		if err == nil {
			return nil
		}
		if d.deleted > progress {
			fails = 0
		}
		if !retryable(err) {
			return d.stop(err)
		}
		if fails++; fails >= attempts {
			if !d.marked && d.deleted == 0 && d.lost == nil && conflict(err) {
				return d.nothing(fmt.Errorf("the family kept changing: %w", err))
			}
			return d.stop(err)
		}
	}
}

// list reads the keys of the family's rows.
func (d *deletion[P, C]) list(ctx context.Context) (listing, error) {
	var fam listing
	cond := d.t.familyCond(d.pe.PartitionKey, d.pe.RowKey, d.rng)
	for e, err := range store.All(ctx, d.t.table, store.Query{Filter: cond.String(), Select: []string{d.t.prop}}) {
		if err != nil {
			return listing{}, err
		}
		if e.RowKey == d.pe.RowKey {
			fam.etag, fam.marked = e.ETag, e.Properties[d.t.prop] == d.t.mark
		} else {
			fam.rows = append(fam.rows, e.RowKey)
		}
	}
	d.lost = nil
	d.marked = d.marked || fam.marked
	d.remaining = len(fam.rows)
	if fam.etag != "" {
		d.remaining++
	}
	return fam, nil
}

// steps deletes the family as listed, one transaction after another,
// until it is gone or a transaction fails.
func (d *deletion[P, C]) steps(ctx context.Context, fam listing) error {
	pk, etag, rows := d.pe.PartitionKey, fam.etag, fam.rows
	for {
		var acts []store.Action
		n := len(rows)
		switch {
		case etag == "":
			// Children without a parent: nothing fences them.
			n = min(n, store.MaxBatchActions)
		case n <= MaxChildrenPerWrite:
			acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: d.pe.RowKey}, IfMatch: etag})
		default:
			n = MaxChildrenPerWrite
			acts = append(acts, store.Action{Kind: store.ActionUpdateReplace, IfMatch: etag, Entity: store.Entity{
				PartitionKey: pk, RowKey: d.pe.RowKey, Properties: map[string]any{d.t.prop: d.t.mark}}})
		}
		for _, rk := range rows[:n] {
			acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, IfMatch: store.ETagAny})
		}
		res, err := d.t.table.Transact(ctx, acts)
		if err != nil {
			if errors.Is(err, store.ErrUnknownOutcome) {
				d.lost = err
			}
			return err
		}
		rows = rows[n:]
		d.deleted += n
		d.remaining -= n
		switch {
		case etag == "" && len(rows) == 0:
			return nil
		case etag == "":
			continue
		case acts[0].Kind == store.ActionDelete:
			d.deleted++
			d.remaining--
			return nil
		}
		d.marked = true
		if len(res) == 0 || res[0].ETag == "" {
			return errReread // the mark's new ETag is not known
		}
		etag = res[0].ETag
	}
}

// conflict reports a transaction refused because the family changed
// since it was read: the parent's ETag moved, or a row went.
func conflict(err error) bool {
	return store.Index(err) >= 0 && (store.Status(err) == 412 || store.EntityNotFound(err))
}

// retryable reports a failure after which Delete reads the family again
// and goes on: a conflict, a throttled or failed request (nothing
// applied), or a lost answer the store could not resolve (reading the
// family tells what applied, and every transaction is conditional on the
// parent's ETag as read, so a late one cannot apply over a newer state).
func retryable(err error) bool {
	return errors.Is(err, errReread) || conflict(err) ||
		errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome)
}

// nothing reports a Delete that deleted nothing.
func (d *deletion[P, C]) nothing(err error) error {
	return fmt.Errorf("onetomany: delete of (%q, %q) in table %s: nothing deleted, the family is intact: %w", d.pe.PartitionKey, d.pe.RowKey, d.t.table.Name(), err)
}

// stop reports a Delete that stopped before finishing.
func (d *deletion[P, C]) stop(err error) error {
	switch {
	case d.marked || d.deleted > 0:
		return &DeletePendingError{Table: d.t.table.Name(), PartitionKey: d.pe.PartitionKey, RowKey: d.pe.RowKey,
			Deleted: d.deleted, Remaining: d.remaining, Err: err}
	case d.lost != nil && d.lost != err:
		return fmt.Errorf("onetomany: delete of (%q, %q) in table %s: the answer to its first transaction was lost and the family could not be read since (%w): it is intact, or marked as being deleted; Delete again finishes it: %w",
			d.pe.PartitionKey, d.pe.RowKey, d.t.table.Name(), err, d.lost)
	case d.lost != nil:
		return fmt.Errorf("onetomany: delete of (%q, %q) in table %s: the outcome of its first transaction is unknown: the family is intact, or marked as being deleted; Delete again finishes it: %w",
			d.pe.PartitionKey, d.pe.RowKey, d.t.table.Name(), err)
	}
	return d.nothing(err)
}

// ChildKey returns the RowKey of a child of the parent with RowKey
// parentRK: the parent's parts followed by parts, as keys.Join makes it. A
// child's TableKeys can build its key from its parent's with it.
func ChildKey(parentRK string, parts ...string) (string, error) {
	pp, err := keys.Split(parentRK)
	if err != nil {
		return "", err
	}
	return keys.Join(append(pp, parts...)...)
}
