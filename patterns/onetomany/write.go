package onetomany

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// attempts bounds the attempts of one family write, and of each
// transaction of a Delete: those of the parent's commit loop
// (partition.Options.Attempts).
const attempts = 16

// backoff, when a test sets it, replaces the pause of the parent's commit
// loop (partition.Options.Backoff; nil for its default, full jitter over a
// ceiling doubling from 10 ms to 1 s).
var backoff func(n int) time.Duration

// The parent's row is the family's head (a partition.Head at the
// parent's RowKey, its own properties the default TkHeadVersion and
// TkHeadWriters): every write of the family is one transaction on it,
// the parent written through Txn.SetHead (or, for Add and Remove, only
// the head's own two properties merged into it) and the children as its
// rows. The head's commit loop (partition.Head.Run) reads the parent,
// builds the transaction, commits it conditional on the parent's state,
// and decides: another writer of the family that got in first makes the
// write read again and try again; a write whose answer was lost is
// resolved exactly by the head, never sent again. After a Delete the row
// stays, holding the head's two properties alone: it is no parent to any
// read (they all select by the kind's discriminator), and it keeps the
// head's version and writers for the family's next writers.

// head returns the family's head: the parent's row.
func (t *Table[P, C]) head(pe store.Entity) (*partition.Head, error) {
	hd, err := partition.NewHead(t.table, pe.PartitionKey, pe.RowKey, &partition.Options{Attempts: attempts, Backoff: backoff})
	if err != nil {
		return nil, fmt.Errorf("onetomany: parent (%q, %q): %w", pe.PartitionKey, pe.RowKey, err)
	}
	return hd, nil
}

// kindOf is the discriminator of the parent's row as read: t.pKind for a
// parent, t.mark for one whose family is being deleted, nil when there is
// no row or only the head's own properties.
type kindOf = any

// write runs one family write through the parent's commit loop: each
// attempt reads the parent's row (its discriminator and the head's own
// properties: one point read), then plan builds the transaction from its
// kind. fresh begins without a read, from a parent that does not exist
// (Insert). It returns the Result, or plan's own error as it is, or the
// loop's error with the row that failed named.
func (t *Table[P, C]) write(ctx context.Context, pe store.Entity, ms []member, fresh bool, plan func(kind kindOf, tx *partition.Txn) error) (*partition.Result, error) {
	hd, err := t.head(pe)
	if err != nil {
		return nil, err
	}
	ver, wr := hd.Properties()
	var (
		kind kindOf
		own  error
	)
	run := &partition.RunOptions{Read: func(ctx context.Context) (partition.Fence, error) {
		e, err := t.table.Get(ctx, pe.PartitionKey, pe.RowKey, &store.GetOptions{Select: []string{t.prop, ver, wr}})
		if store.EntityNotFound(err) {
			kind = nil
			return hd.Absent(), nil
		}
		if err != nil {
			return partition.Fence{}, fmt.Errorf("onetomany: read of parent (%q, %q) of table %s: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), err)
		}
		kind = e.Properties[t.prop]
		return hd.FenceOf(&e)
	}}
	if fresh {
		f := hd.Absent()
		run.Start = &f
	}
	res, err := hd.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
		own = plan(kind, tx)
		return own
	}, run)
	switch {
	case err == nil || err == own:
		return res, err
	case errors.As(err, new(*partition.AttemptsError)), errors.Is(err, store.ErrUnknownOutcome):
		return nil, fmt.Errorf("onetomany: family of (%q, %q) in table %s: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), err)
	}
	return nil, t.explain(err, pe, ms)
}

// changedParent is the refusal of a write conditional on the parent's
// ETag whose parent changed since it was read.
func (t *Table[P, C]) changedParent(pe store.Entity, etag store.ETag) error {
	e := store.Errorf(store.CodeUpdateConditionNotSatisfied, 412, "onetomany: parent (%q, %q) of table %s changed since it was read (ETag %s)",
		pe.PartitionKey, pe.RowKey, t.table.Name(), etag)
	e.Source, e.Index = store.SourceClient, 0
	return e
}

// noParent is the refusal of a write of a family whose parent is missing.
func (t *Table[P, C]) noParent(pe store.Entity) error {
	e := store.Errorf(store.CodeResourceNotFound, 404, "onetomany: no parent (%q, %q) in table %s", pe.PartitionKey, pe.RowKey, t.table.Name())
	e.Source, e.Index = store.SourceClient, 0
	return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %w: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), errNoParent, e)
}

// Insert adds a new parent and its children in one transaction, and stores
// the new ETag in each value's etag field. A parent or child that exists is
// an error matching store.ErrAlreadyExists; nothing is written then. The
// insert is sent without a read: when the parent's row exists (the
// parent, or the head a deleted family left), the transaction is refused
// on it and the insert reads it and goes on from what it holds.
func (t *Table[P, C]) Insert(ctx context.Context, parent *P, children ...*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	ms, err := t.prepare(pe, store.ActionInsert, children)
	if err != nil {
		return err
	}
	res, err := t.write(ctx, pe, ms, true, func(kind kindOf, tx *partition.Txn) error {
		switch kind {
		case nil:
		case t.mark:
			return t.pending(pe, store.CodeEntityAlreadyExists, 409)
		default:
			e := store.Errorf(store.CodeEntityAlreadyExists, 409, "onetomany: parent (%q, %q) exists already in table %s", pe.PartitionKey, pe.RowKey, t.table.Name())
			e.Source, e.Index = store.SourceClient, 0
			return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %w", pe.PartitionKey, pe.RowKey, t.table.Name(), e)
		}
		if err := tx.SetHead(pe.Properties); err != nil {
			return err
		}
		return t.addChildren(tx, ms, store.ActionInsert)
	})
	return t.finish(ms, parent, store.ActionInsert, res, err)
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
	ms, err := t.prepare(pe, store.ActionUpsertReplace, children)
	if err != nil {
		return err
	}
	res, err := t.write(ctx, pe, ms, false, func(kind kindOf, tx *partition.Txn) error {
		if kind != t.pKind {
			if kind == nil {
				return t.noParent(pe)
			}
			return t.explain(t.changedParent(pe, etag), pe, ms)
		}
		if !tx.Unchanged(etag) {
			return t.explain(t.changedParent(pe, etag), pe, ms)
		}
		if err := tx.SetHead(pe.Properties); err != nil {
			return err
		}
		return t.addChildren(tx, ms, store.ActionUpsertReplace)
	})
	return t.finish(ms, parent, store.ActionUpsertReplace, res, err)
}

// Add inserts children of an existing parent in one transaction with a
// write of the parent that changes nothing but its ETag (the head's own
// two properties), conditional on the parent's state as read, and on the
// ETag in the parent's etag field when it holds one. The parent is read
// first (one point read), and read again when another writer gets in
// between (up to 16 attempts, then an error matching
// partition.ErrConflict, a race to retry, and store.ErrPreconditionFailed).
// So a child is never added to a parent that is gone or whose family is
// being deleted, and two writers of one family never interleave. The
// parent's new ETag goes into its etag field. Only the parent's key fields
// need be set.
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

// fenced writes children with the parent as the fence: its state as
// read, and the ETag the value holds, if any.
func (t *Table[P, C]) fenced(ctx context.Context, parent *P, kind store.ActionKind, children []*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	etag := mapper.ETagOf(parent)
	ms, err := t.prepare(pe, kind, children)
	if err != nil {
		return err
	}
	res, err := t.write(ctx, pe, ms, false, func(k kindOf, tx *partition.Txn) error {
		switch {
		case k == nil:
			return t.noParent(pe)
		case k == t.mark && etag != "":
			return t.explain(t.changedParent(pe, etag), pe, ms)
		case k == t.mark:
			return t.pending(pe, store.CodeResourceNotFound, 404)
		case k != t.pKind:
			return fmt.Errorf("onetomany: %w: the row (%q, %q) of table %s is of kind %v, not a parent (%s)", mapper.ErrWrongKind, pe.PartitionKey, pe.RowKey, t.table.Name(), k, t.pKind)
		case etag != "" && !tx.Unchanged(etag):
			return t.explain(t.changedParent(pe, etag), pe, ms)
		}
		return t.addChildren(tx, ms, kind)
	})
	if ae := (*partition.AttemptsError)(nil); errors.As(err, &ae) && ae.Raced {
		// Lost to other writers of the family every time: a race,
		// worth retrying later, not a change under the caller's ETag.
		return fmt.Errorf("onetomany: parent (%q, %q) of table %s: %d tries lost to concurrent writers of the family: %w: %w",
			pe.PartitionKey, pe.RowKey, t.table.Name(), ae.Attempts, partition.ErrConflict, ae.Err)
	}
	return t.finish(ms, parent, kind, res, err)
}

// prepare checks the children and the family write they make with the
// parent, before any request.
func (t *Table[P, C]) prepare(pe store.Entity, kind store.ActionKind, children []*C) ([]member, error) {
	ms, err := t.children(pe.PartitionKey, pe.RowKey, children)
	if err != nil {
		return nil, err
	}
	acts := make([]store.Action, 0, 1+len(ms))
	acts = append(acts, store.Action{Kind: store.ActionUpdateReplace, Entity: pe, IfMatch: store.ETagAny}) // the parent, as the head writes it
	for _, m := range ms {
		acts = append(acts, childAction(m, kind))
	}
	if err := store.ValidateTransaction(acts); err != nil {
		return nil, t.explain(err, pe, ms)
	}
	return ms, nil
}

// childAction is the write of one child.
func childAction(m member, kind store.ActionKind) store.Action {
	a := store.Action{Kind: kind, Entity: m.e}
	if kind == store.ActionDelete {
		a.Entity.Properties = nil
		if a.IfMatch = mapper.ETagOf(m.value); a.IfMatch == "" {
			a.IfMatch = store.ETagAny
		}
	}
	return a
}

// addChildren adds the children's writes to the transaction.
func (t *Table[P, C]) addChildren(tx *partition.Txn, ms []member, kind store.ActionKind) error {
	for i, m := range ms {
		if err := tx.Add(fmt.Sprintf("child %d", i), childAction(m, kind)); err != nil {
			return err
		}
	}
	return nil
}

// finish hands the new ETags back after a family write that applied: the
// parent's (the head's) and each child's. When the answer was lost and the
// head proved the write applied, the children's ETags are unknown and
// their fields emptied, and so is the parent's when other writes landed
// on top since.
func (t *Table[P, C]) finish(ms []member, parent *P, kind store.ActionKind, res *partition.Result, err error) error {
	if err != nil {
		return err
	}
	petag := res.Fence.ETag
	if res.Recovered && res.Fence.Version != res.Version {
		petag = ""
	}
	if err := mapper.SetETag(parent, petag); err != nil {
		return err
	}
	if kind == store.ActionDelete {
		return nil
	}
	for i, m := range ms {
		etag := store.ETag("")
		if len(res.ETags) == len(ms) {
			etag = res.ETags[i]
		}
		if err := mapper.SetETag(m.value, etag); err != nil {
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
// A family of up to MaxChildrenPerWrite children goes in one transaction
// on the parent's row (the family's head), conditional on its state. A
// larger one goes in transactions of that many children; the first also
// replaces the parent by a mark, and each later one rewrites the mark;
// the last replaces the mark by the head's own properties alone (the
// parent is gone). From the first transaction on, the family is deleted
// for everyone: Get finds no parent, and Add, Remove and Update are
// refused (ErrDeletePending), so no writer adds to a family being deleted
// and the delete can always be finished. Each transaction goes through
// the head's commit loop: it is tried again after a conflict or a
// throttled request, and a lost answer is resolved exactly by the head,
// never sent again (up to 16 attempts each). When it stops before
// finishing (the context ends, the store keeps failing), it returns a
// *DeletePendingError saying how many rows it deleted and how many
// remain, and any later Delete of the family finishes it.
//
// When the parent value holds an ETag, the family is deleted only if the
// parent still has it: otherwise store.ErrPreconditionFailed, and nothing
// is deleted. Without one, Delete reads the family again when another
// writer changes it before the first transaction. A family whose delete
// is pending is finished whatever ETag the value holds. A missing parent
// is not an error without an ETag; its children, if any, are deleted.
func (t *Table[P, C]) Delete(ctx context.Context, parent *P) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	rng, err := familyRange(pe.RowKey)
	if err != nil {
		return err
	}
	hd, err := t.head(pe)
	if err != nil {
		return err
	}
	d := &deletion[P, C]{t: t, pe: pe, rng: rng, hd: hd, want: mapper.ETagOf(parent), remaining: -1}
	return d.run(ctx)
}

// deletion is one call of Delete.
type deletion[P, C any] struct {
	t         *Table[P, C]
	pe        store.Entity
	rng       keys.Range
	hd        *partition.Head
	want      store.ETag // the ETag the caller holds, "" for none
	deleted   int        // rows this call's transactions deleted
	remaining int        // rows left, as last read or written; -1 unknown
	marked    bool       // the parent is known to carry the mark
}

// listing is the family as one query read it.
type listing struct {
	fence partition.Fence // the parent's row as the family's head
	kind  kindOf          // the parent's discriminator (nil: no parent)
	rows  []string        // the children's RowKeys
}

// errGone ends a Delete that finds nothing left to delete.
var errGone = errors.New("onetomany: the family is gone")

// run deletes the family one transaction at a time, each through the
// head's commit loop. A step that applied hands the next its fence and
// what is left to delete, so the next needs no read.
func (d *deletion[P, C]) run(ctx context.Context) error {
	var (
		fam   listing
		start *partition.Fence
	)
	for first := true; ; first = false {
		var (
			n     int  // children this step deletes
			final bool // this step removes the parent
			own   error
		)
		res, err := d.hd.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
			own = d.step(&fam, first, tx, &n, &final)
			return own
		}, &partition.RunOptions{Start: start, Read: func(ctx context.Context) (partition.Fence, error) {
			var err error
			fam, err = d.list(ctx)
			return fam.fence, err
		}})
		switch {
		case err == errGone:
			return nil // deleted: by this call or by another
		case err != nil && err == own:
			return d.stop(err)
		case err != nil:
			return d.stop(err)
		}
		d.deleted += n
		d.remaining -= n
		if fam.kind != nil {
			d.marked = true
		}
		if final {
			if fam.kind != nil {
				d.deleted++
				d.remaining--
			}
			return nil
		}
		start = nil
		if !res.Recovered {
			start = &res.Fence
		}
		fam = listing{fence: res.Fence, kind: d.t.mark, rows: fam.rows[n:]}
	}
}

// step builds one transaction of the delete from the family as listed.
func (d *deletion[P, C]) step(fam *listing, first bool, tx *partition.Txn, n *int, final *bool) error {
	if fam.kind != d.t.mark {
		if fam.kind == nil && len(fam.rows) == 0 {
			if first && d.want != "" {
				return store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
					"onetomany: parent (%q, %q) is gone, not at ETag %s", d.pe.PartitionKey, d.pe.RowKey, d.want)
			}
			return errGone
		}
		if d.want != "" && (fam.kind == nil || !tx.Unchanged(d.want)) {
			got := "gone"
			if fam.kind != nil {
				got = "at ETag " + string(tx.Base().ETag)
			}
			return store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
				"onetomany: parent (%q, %q) changed since it was read (it is %s, not at ETag %s)", d.pe.PartitionKey, d.pe.RowKey, got, d.want)
		}
	}
	*n, *final = len(fam.rows), true
	head := map[string]any{} // the parent gone: the head's own properties alone
	if *n > MaxChildrenPerWrite {
		*n, *final = MaxChildrenPerWrite, false
		head = map[string]any{d.t.prop: d.t.mark}
	}
	if err := tx.SetHead(head); err != nil {
		return err
	}
	for i, rk := range fam.rows[:*n] {
		if err := tx.Delete(fmt.Sprintf("child %d", i), rk, store.ETagAny); err != nil {
			return err
		}
	}
	return nil
}

// list reads the family: the parent's row, whatever it holds (the head's
// own properties too), and the keys of the children.
func (d *deletion[P, C]) list(ctx context.Context) (listing, error) {
	var fam listing
	fam.fence = d.hd.Absent()
	ver, wr := d.hd.Properties()
	t := d.t
	cond := filter.PK.Eq(d.pe.PartitionKey).And(filter.RK.Ge(d.pe.RowKey))
	if d.rng.HasUpper {
		cond = cond.And(filter.RK.Lt(d.rng.Upper))
	}
	cond = cond.And(filter.Or(filter.RK.Eq(d.pe.RowKey), t.reg.Cond(t.pKind), t.reg.Cond(t.cKind), filter.Prop(t.prop).Eq(t.mark)))
	for e, err := range store.All(ctx, t.table, store.Query{Filter: cond.String(), Select: []string{t.prop, ver, wr}}) {
		if err != nil {
			return listing{}, err
		}
		if e.RowKey == d.pe.RowKey {
			fam.kind = e.Properties[t.prop]
			if fam.fence, err = d.hd.FenceOf(&e); err != nil {
				return listing{}, err
			}
			continue
		}
		fam.rows = append(fam.rows, e.RowKey)
	}
	if fam.kind == t.mark {
		d.marked = true
	}
	d.remaining = len(fam.rows)
	if fam.kind != nil {
		d.remaining++
	}
	return fam, nil
}

// nothing reports a Delete that deleted nothing.
func (d *deletion[P, C]) nothing(err error) error {
	return fmt.Errorf("onetomany: delete of (%q, %q) in table %s: nothing deleted, the family is intact: %w", d.pe.PartitionKey, d.pe.RowKey, d.t.table.Name(), err)
}

// stop reports a Delete that stopped before finishing.
func (d *deletion[P, C]) stop(err error) error {
	var ae *partition.AttemptsError
	switch {
	case d.marked || d.deleted > 0:
		return &DeletePendingError{Table: d.t.table.Name(), PartitionKey: d.pe.PartitionKey, RowKey: d.pe.RowKey,
			Deleted: d.deleted, Remaining: d.remaining, Err: err}
	case errors.Is(err, store.ErrUnknownOutcome):
		return fmt.Errorf("onetomany: delete of (%q, %q) in table %s: the outcome of its first transaction is unknown: the family is intact, or marked as being deleted, or deleted; Delete again finishes it: %w",
			d.pe.PartitionKey, d.pe.RowKey, d.t.table.Name(), err)
	case errors.As(err, &ae) && ae.Raced:
		return d.nothing(fmt.Errorf("the family kept changing: %w", err))
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
