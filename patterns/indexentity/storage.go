package indexentity

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// lists is where a placement keeps its lists.
type lists interface {
	// check refuses a list that cannot be stored (a value too long for
	// its keys or blob name), naming the value and the limit.
	check(r listRef) error
	// readAll returns every entry of a list, sorted.
	readAll(ctx context.Context, r listRef) ([]entry, error)
	// segmentFor reads the segment that holds (or would hold) k.
	segmentFor(ctx context.Context, r listRef, k Key) (segment, error)
	// write replaces the entries of seg with next, conditional on seg
	// being as read: an error matching conflict when it changed.
	write(ctx context.Context, r listRef, seg segment, next []entry) error
}

// conflict reports a write refused because its row or blob changed since
// it was read (or appeared, or went away): read again and retry.
func conflict(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) ||
		(store.EntityNotFound(err) && store.Code(err) != store.CodeContainerNotFound)
}

// retryable reports a write that may be tried again after a fresh read:
// a conflict, a refusal before any work (throttling), or a lost answer
// (the read shows what happened; list changes are idempotent).
func retryable(err error) bool {
	return conflict(err) || errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome)
}

// tableLists keeps lists in index entities: in the entities' own
// partitions (samePartition, RowKeys keys.Join(list, value, bound)) or in
// a partition per list value of another table (PartitionKey
// keys.Join(list, value), RowKey the bound).
type tableLists struct {
	tbl           store.Table
	layout        Layout
	samePartition bool
}

// where returns the partition and the RowKey prefix of a list's index
// entities.
func (t *tableLists) where(r listRef) (pk, prefix string, err error) {
	if t.samePartition {
		prefix, err = keys.Join(r.name, r.value, "")
		return r.pk, prefix, err
	}
	pk, err = keys.Join(r.name, r.value)
	return pk, "", err
}

func (t *tableLists) withPK() bool { return !t.samePartition }

func (t *tableLists) check(r listRef) error {
	pk, prefix, err := t.where(r)
	if err == nil {
		err = store.ValidateKeys(pk, prefix+boundKey(maxBound))
	}
	if err != nil {
		what, n := "RowKey", keys.UTF16Len(prefix)+16
		if !t.samePartition {
			what, n = "PartitionKey", keys.UTF16Len(pk)
		}
		return refuseFor(err, "list %s: value %q makes its index entities' %s %d UTF-16 units long: the limit is %d (keys.MaxKeyUnits), the list name and escaping included",
			r.name, naming.Cut(r.value), what, n, keys.MaxKeyUnits)
	}
	return nil
}

// rangeOf is the filter of a list's index entities with bounds from lo.
func (t *tableLists) rangeOf(pk, prefix string, lo uint64) string {
	return filter.PK.Eq(pk).And(filter.RK.Ge(prefix + boundKey(lo))).And(filter.RK.Le(prefix + boundKey(maxBound))).String()
}

// decode reads one index entity of a list.
func (t *tableLists) decode(e store.Entity, prefix string) (segment, error) {
	b, ok := parseBound(e.RowKey[min(len(prefix), len(e.RowKey)):])
	if !ok || len(e.RowKey) != len(prefix)+16 {
		return segment{}, fmt.Errorf("%w: row (%q, %q) of %s is not an index entity", ErrCorrupt, e.PartitionKey, e.RowKey, t.tbl.Name())
	}
	entries, err := decodeEntity(e, t.withPK())
	if err != nil {
		return segment{}, fmt.Errorf("%w: index entity (%q, %q) of %s: %w", ErrCorrupt, e.PartitionKey, e.RowKey, t.tbl.Name(), err)
	}
	return segment{bound: b, etag: e.ETag, exists: true, entries: entries}, nil
}

func (t *tableLists) readAll(ctx context.Context, r listRef) ([]entry, error) {
	pk, prefix, err := t.where(r)
	if err != nil {
		return nil, err
	}
	var out []entry
	for e, err := range store.All(ctx, t.tbl, store.Query{Filter: t.rangeOf(pk, prefix, 0)}) {
		if err != nil {
			return nil, fmt.Errorf("indexentity: read %s: %w", r, err)
		}
		s, err := t.decode(e, prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, s.entries...)
	}
	return out, nil
}

func (t *tableLists) segmentFor(ctx context.Context, r listRef, k Key) (segment, error) {
	pk, prefix, err := t.where(r)
	if err != nil {
		return segment{}, err
	}
	for e, err := range store.All(ctx, t.tbl, store.Query{Filter: t.rangeOf(pk, prefix, hashOf(k)), Top: 1}) {
		if err != nil {
			return segment{}, fmt.Errorf("indexentity: read %s: %w", r, err)
		}
		return t.decode(e, prefix)
	}
	// No segment covers the id's hash: it goes to a new last one.
	return segment{bound: maxBound}, nil
}

// actions returns the writes that replace seg's entries with next: the
// segment updated (or inserted, or deleted once empty), and the pieces it
// splits into when next does not fit one index entity, all in its
// partition.
func (t *tableLists) actions(r listRef, seg segment, next []entry) ([]store.Action, error) {
	pk, prefix, err := t.where(r)
	if err != nil {
		return nil, err
	}
	if len(next) == 0 {
		if !seg.exists {
			return nil, nil
		}
		return []store.Action{{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: prefix + boundKey(seg.bound)}, IfMatch: seg.etag}}, nil
	}
	pieces, err := pack(pk, func(b uint64) string { return prefix + boundKey(b) }, seg.bound, next, t.withPK(), t.layout)
	if err != nil {
		return nil, err
	}
	acts := make([]store.Action, 0, len(pieces))
	for _, p := range pieces {
		a := store.Action{Kind: store.ActionInsert, Entity: p.entity}
		if p.bound == seg.bound && seg.exists {
			a = store.Action{Kind: store.ActionUpdateReplace, Entity: p.entity, IfMatch: seg.etag}
		}
		acts = append(acts, a)
	}
	return acts, nil
}

func (t *tableLists) write(ctx context.Context, r listRef, seg segment, next []entry) error {
	acts, err := t.actions(r, seg, next)
	if err != nil || len(acts) == 0 {
		return err
	}
	return apply(ctx, t.tbl, acts)
}

// apply sends the actions: one request for one action, a transaction for
// more. It writes the index entities of a SeparatePartition list for the
// engine's step (sync), never a SamePartition list, whose changes ride in
// the entity's transaction on its head. It judges no lost answer: the
// step is repeatable, and sync reads the index entity again after any
// failure and either finds its change made or makes it, each write
// conditional on the ETag it read (or an insert), so a lost request that
// lands late fails on that condition instead of applying twice.
func apply(ctx context.Context, tbl store.Table, acts []store.Action) error {
	if len(acts) > 1 {
		_, err := tbl.Transact(ctx, acts)
		return err
	}
	a := acts[0]
	var err error
	switch a.Kind {
	case store.ActionInsert:
		_, err = tbl.Insert(ctx, a.Entity)
	case store.ActionUpdateReplace:
		_, err = tbl.Update(ctx, a.Entity, store.Replace, a.IfMatch)
	case store.ActionDelete:
		err = tbl.Delete(ctx, a.Entity.PartitionKey, a.Entity.RowKey, a.IfMatch)
	default:
		_, err = tbl.Transact(ctx, acts)
	}
	return err
}

// blobLists keeps each list in one blob: list/escaped value.
type blobLists struct {
	c store.Container
}

func (b *blobLists) name(r listRef) (string, error) {
	v, err := keys.Escape(r.value)
	if err != nil {
		return "", err
	}
	return r.name + "/" + v, nil
}

func (b *blobLists) check(r listRef) error {
	n, err := b.name(r)
	if err == nil {
		err = store.ValidateBlobName(n)
	}
	if err != nil {
		return refuseFor(err, "list %s: value %q makes its blob's name %d characters long: the limit is %d (store.MaxBlobNameUnits), the list name and escaping included",
			r.name, naming.Cut(r.value), keys.UTF16Len(n), store.MaxBlobNameUnits)
	}
	return nil
}

func (b *blobLists) read(ctx context.Context, r listRef) (segment, error) {
	n, err := b.name(r)
	if err != nil {
		return segment{}, err
	}
	data, props, err := b.c.Get(ctx, n)
	if errors.Is(err, store.ErrNotFound) && store.Code(err) == store.CodeBlobNotFound {
		return segment{bound: maxBound}, nil
	}
	if err != nil {
		return segment{}, fmt.Errorf("indexentity: read %s: %w", r, err)
	}
	entries, err := decodeText(data)
	if err != nil {
		return segment{}, fmt.Errorf("%w: blob %s of %s: %w", ErrCorrupt, n, b.c.Name(), err)
	}
	return segment{bound: maxBound, etag: props.ETag, exists: true, entries: entries}, nil
}

func (b *blobLists) readAll(ctx context.Context, r listRef) ([]entry, error) {
	s, err := b.read(ctx, r)
	return s.entries, err
}

func (b *blobLists) segmentFor(ctx context.Context, r listRef, _ Key) (segment, error) {
	return b.read(ctx, r)
}

// write puts the whole list under the blob's ETag (or creates it only if
// it still does not exist), or deletes the blob once the list is empty.
func (b *blobLists) write(ctx context.Context, r listRef, seg segment, next []entry) error {
	n, err := b.name(r)
	if err != nil {
		return err
	}
	if len(next) == 0 {
		if !seg.exists {
			return nil
		}
		return b.c.DeleteBlob(ctx, n, seg.etag)
	}
	opts := &store.BlobPutOptions{IfMatch: seg.etag}
	if !seg.exists {
		opts = &store.BlobPutOptions{IfNoneMatchAny: true}
	}
	_, err = b.c.Put(ctx, n, encodeText(next), opts)
	return err
}
