package onetomany

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// deleteRounds bounds how often Delete reads the family again when another
// writer changes it in between.
const deleteRounds = 8

// Insert adds a new parent and its children in one transaction, and stores
// the new ETag in each value's etag field. A parent or child that exists is
// an error matching store.ErrAlreadyExists; nothing is written then.
func (t *Table[P, C]) Insert(ctx context.Context, parent *P, children ...*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	return t.write(ctx, pe, store.Action{Kind: store.ActionInsert, Entity: pe}, parent, store.ActionInsert, children)
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
	return t.write(ctx, pe, store.Action{Kind: store.ActionUpdateReplace, Entity: pe, IfMatch: etag}, parent, store.ActionUpsertReplace, children)
}

// Add inserts children of an existing parent in one transaction with a
// write of the parent that changes nothing but its ETag, conditional on
// the ETag in the parent's etag field (on its existence when it holds
// none). So a child is never added to a parent that is gone, and two
// writers of one family never interleave. The parent's new ETag goes into
// its etag field. Only the parent's key fields need be set.
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

// fenced writes children with the parent's ETag as the fence.
func (t *Table[P, C]) fenced(ctx context.Context, parent *P, kind store.ActionKind, children []*C) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	etag := mapper.ETagOf(parent)
	if etag == "" {
		etag = store.ETagAny
	}
	return t.write(ctx, pe, t.touch(pe, etag), parent, kind, children)
}

// touch is a write of the parent (pk, rk) that changes only its ETag: a
// merge of its discriminator, which it has already.
func (t *Table[P, C]) touch(pe store.Entity, etag store.ETag) store.Action {
	return store.Action{Kind: store.ActionUpdateMerge, IfMatch: etag, Entity: store.Entity{
		PartitionKey: pe.PartitionKey, RowKey: pe.RowKey, Properties: map[string]any{t.prop: t.pKind}}}
}

// write sends the parent's action and one action of kind per child as one
// transaction, and hands the new ETags back.
func (t *Table[P, C]) write(ctx context.Context, pe store.Entity, head store.Action, parent *P, kind store.ActionKind, children []*C) error {
	ms, err := t.children(pe.PartitionKey, pe.RowKey, children)
	if err != nil {
		return err
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
	if err := store.ValidateTransaction(acts); err != nil {
		return t.explain(err, pe, ms)
	}
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

// Delete removes the parent and all of its children. A family of up to
// MaxChildrenPerWrite children goes in one transaction; a larger one in
// transactions of that many children, each with the parent's fence, the
// parent deleted in the last: a crash part-way leaves the parent with
// fewer children, and Delete again finishes the job. When the parent
// value holds an ETag the family is deleted only if the parent still has
// it (store.ErrPreconditionFailed otherwise); without one, Delete reads
// the family again (up to 8 times) when another writer changes it in
// between. A missing parent is not an error; its children, if any, are
// deleted.
func (t *Table[P, C]) Delete(ctx context.Context, parent *P) error {
	pe, err := t.parentKeys(parent)
	if err != nil {
		return err
	}
	want := mapper.ETagOf(parent)
	var last error
	for range deleteRounds {
		last = t.deleteOnce(ctx, pe, want)
		if last == nil || want != "" || !errors.Is(last, store.ErrPreconditionFailed) {
			return last
		}
	}
	return fmt.Errorf("onetomany: delete of (%q, %q): the family kept changing: %w", pe.PartitionKey, pe.RowKey, last)
}

// deleteOnce reads the family's keys and deletes them.
func (t *Table[P, C]) deleteOnce(ctx context.Context, pe store.Entity, want store.ETag) error {
	rng, err := familyRange(pe.RowKey)
	if err != nil {
		return err
	}
	var etag store.ETag // the parent's, "" when missing
	var rows []string   // the children's RowKeys
	cond := filter.PK.Eq(pe.PartitionKey).And(filter.RK.Ge(pe.RowKey))
	if rng.HasUpper {
		cond = cond.And(filter.RK.Lt(rng.Upper))
	}
	cond = cond.And(filter.Or(t.reg.Cond(t.pKind), t.reg.Cond(t.cKind)))
	for e, err := range store.All(ctx, t.table, store.Query{Filter: cond.String(), Select: []string{t.prop}}) {
		if err != nil {
			return err
		}
		if e.RowKey == pe.RowKey {
			etag = e.ETag
		} else {
			rows = append(rows, e.RowKey)
		}
	}
	if want != "" && etag != want {
		got := "gone"
		if etag != "" {
			got = "at ETag " + string(etag)
		}
		return store.Errorf(store.CodeUpdateConditionNotSatisfied, 412, "onetomany: parent (%q, %q) changed since it was read (it is %s, not at ETag %s)", pe.PartitionKey, pe.RowKey, got, want)
	}
	for len(rows) > 0 || etag != "" {
		n := min(len(rows), MaxChildrenPerWrite)
		acts := make([]store.Action, 0, 1+n)
		last := n == len(rows)
		switch {
		case etag != "" && last:
			acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pe.PartitionKey, RowKey: pe.RowKey}, IfMatch: etag})
		case etag != "":
			acts = append(acts, t.touch(pe, etag))
		}
		for _, rk := range rows[:n] {
			acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pe.PartitionKey, RowKey: rk}, IfMatch: store.ETagAny})
		}
		res, err := t.table.Transact(ctx, acts)
		if store.EntityNotFound(err) && store.Index(err) >= 0 {
			// The parent or a child went in between: another writer is
			// deleting too. Reported as a change, so Delete reads again.
			return store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
				"onetomany: the family of (%q, %q) changed while it was deleted: %v", pe.PartitionKey, pe.RowKey, err)
		}
		if err != nil {
			return fmt.Errorf("onetomany: delete of (%q, %q): %w", pe.PartitionKey, pe.RowKey, err)
		}
		rows = rows[n:]
		if last {
			return nil
		}
		etag = res[0].ETag
	}
	return nil
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
