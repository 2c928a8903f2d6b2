package wide

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Put writes *v as the value id of partition pk, in one entity group
// transaction: the header row (conditional on ifMatch) and every other
// row of the value, and deletes of the rows an earlier, longer version
// had and this one no longer needs. It returns the header's new ETag,
// which T's etag field, if it has one, receives too.
//
// ifMatch is the ETag the value was read with (Put fails with a
// ConditionError matching partition.ErrChanged if it changed since), "" to
// create the value (a ConditionError matching partition.ErrDuplicate if it
// exists), or store.ETagAny to write whatever is stored (Put then retries
// when another writer gets in between its read of the header and its
// write, up to Options.Attempts times, then fails with a ConditionError
// matching partition.ErrConflict).
//
// A value that cannot be split within the limits of one transaction (100
// rows, a 4 MiB request) fails with a TooLargeError, and bad input (a nil
// value, a property of a Properties value that is nil, bad keys, a
// property the service refuses) with an error naming the value and the
// limit, before any request; nothing is written then. A Put whose answer is
// lost is resolved by reading the header back, never sent blindly again:
// it returns the ETag if the write applied ("" when other writes have
// landed on top of it since), a ConditionError if another write got in
// first, and an UnknownError (store.ErrUnknownOutcome) only when that
// cannot be told.
//
// T's key fields are not read: the value is stored under pk and id, which
// Get puts back into them.
func (w *Wide[T]) Put(ctx context.Context, pk, id string, v *T, ifMatch store.ETag) (store.ETag, error) {
	t, err := w.locate(pk, id)
	if err != nil {
		return "", err
	}
	if ifMatch != "" {
		if err := store.ValidateETag(ifMatch); err != nil {
			return "", t.wrap(err)
		}
	}
	props, err := w.encode(v)
	if err != nil {
		return "", t.wrap(err)
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names) // the layout, and which bad property is named, never depend on the map's order
	for _, name := range names {
		if props[name] == nil {
			return "", t.wrap(refuse(store.CodeInvalidInput, 400,
				"property %q is nil: a wide value stores every property it holds; leave the property out of the value instead", truncate(name)))
		}
		if err := validName(name); err != nil {
			return "", t.wrap(err)
		}
		if err := validValue(name, props[name]); err != nil {
			return "", t.wrap(err)
		}
	}
	if err := w.precheck(&t, names, props); err != nil {
		return "", err
	}
	cs, err := cells(names, props)
	if err != nil {
		return "", t.wrap(err)
	}
	if err := w.checkEncrypted(cs); err != nil {
		return "", t.wrap(err)
	}
	// Refuse a value that cannot fit before any request: with the longest
	// list of writes the header can carry, and no rows to delete.
	if _, err := w.plan(&t, &header{}, cs, len(names), 1); err != nil {
		return "", err
	}
	etag, err := w.commit(ctx, &t, ifMatch, func(h *header, version int64) ([]store.Action, error) {
		return w.plan(&t, h, cs, len(names), version)
	})
	if err != nil {
		return "", err
	}
	if !w.asMap && etag != "" {
		if err := mapper.SetETag(v, etag); err != nil {
			return etag, t.wrap(err)
		}
	}
	return etag, nil
}

// Delete deletes the value id of partition pk if its ETag is still ifMatch
// (store.ETagAny for any), in one entity group transaction: its rows go,
// and its header is replaced by a small marker that keeps the value's
// version and its last writes, so that a later write's lost answer can
// still be resolved exactly. A missing value is an error matching
// store.ErrNotFound; a changed one a ConditionError. A lost answer is
// resolved as for Put.
func (w *Wide[T]) Delete(ctx context.Context, pk, id string, ifMatch store.ETag) error {
	t, err := w.locate(pk, id)
	if err != nil {
		return err
	}
	if err := store.ValidateETag(ifMatch); err != nil {
		return t.wrap(err)
	}
	_, err = w.commit(ctx, &t, ifMatch, func(h *header, version int64) ([]store.Action, error) {
		if !h.live() {
			return nil, notFound(t.table, pk, id)
		}
		actions := []store.Action{{Kind: store.ActionUpdateReplace, IfMatch: h.etag, Entity: store.Entity{
			PartitionKey: pk, RowKey: t.head, Properties: headerProps(version, 0)}}}
		for i := 1; i < h.rows; i++ {
			rk, _ := rowKey(id, i)
			actions = append(actions, store.Action{Kind: store.ActionDelete, IfMatch: store.ETagAny, Entity: store.Entity{PartitionKey: pk, RowKey: rk}})
		}
		return actions, nil
	})
	return err
}

// longestWrites is as long as the head's list of writes can be: History
// write ids of 13 characters, comma-separated.
var longestWrites = []byte(strings.TrimSuffix(strings.Repeat("0123456789abc,", History), ","))

// precheck refuses, before splitting it, a value whose strings and binary
// values alone pass the limit of a transaction's body: their bytes as
// UTF-8 and base64 are a lower bound of what they take on the wire.
func (w *Wide[T]) precheck(t *target, names []string, props Properties) error {
	total := 0
	for _, name := range names {
		switch x := props[name].(type) {
		case string:
			total += len(x)
		case []byte:
			total += (len(x) + 2) / 3 * 4
		}
	}
	if total < store.MaxBatchBytes {
		return nil
	}
	l := layout{}
	for _, name := range names {
		size, _ := propSize(name, props[name])
		l.size += size
	}
	return w.tooLarge(t, len(names), l, 0, total, refuse(store.CodeRequestBodyTooLarge, 413,
		"the value's strings and binary values alone take at least %d bytes of a transaction body (binary as base64): the service's limit is %d", total, store.MaxBatchBytes))
}

// headerProps are the header's own properties: the value's, and,
// sized at their longest, the two the head row adds (the commit replaces
// them with the head's own values).
func headerProps(version int64, rows int32) map[string]any {
	return map[string]any{propVersion: version, propRows: rows, propHeadVersion: int64(0), propWrites: longestWrites}
}

// plan lays a value out in rows on top of header h and returns the
// actions of its transaction: the header first (an insert, or a replace
// conditional on h's ETag), then the other rows (insert-or-replace: the
// header fences them), then deletes of the rows h's version had beyond
// the new one's.
func (w *Wide[T]) plan(t *target, h *header, cs []cell, count int, version int64) ([]store.Action, error) {
	head := headerProps(version, 0)
	l := pack(t.pk, t.id, cs, head, map[string]any{propVersion: version})
	n := len(l.rows)
	size := max(n, h.rows)
	if size > MaxRows {
		return nil, w.tooLarge(t, count, l, size, 0, refuse(store.CodeInvalidInput, 400,
			"%d properties (%d bytes by the service's size formula) split into rows of at most %d properties and %d bytes need %d rows: one entity group transaction writes at most %d",
			count, l.size, store.MaxCustomProperties, store.MaxEntitySize, n, store.MaxBatchActions))
	}
	actions := make([]store.Action, 0, size)
	head[propRows] = int32(n)
	bytes := 0
	for i, row := range l.rows {
		props := head
		if i > 0 {
			props = map[string]any{propVersion: version}
		}
		for _, c := range row {
			props[c.name] = c.v
		}
		rk, _ := rowKey(t.id, i)
		a := store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: t.pk, RowKey: rk, Properties: props}}
		if i == 0 {
			a.Kind, a.IfMatch = store.ActionUpdateReplace, h.etag
			if !h.exists {
				a.Kind, a.IfMatch = store.ActionInsert, ""
			}
		}
		actions = append(actions, a)
	}
	for i := n; i < h.rows; i++ {
		rk, _ := rowKey(t.id, i)
		actions = append(actions, store.Action{Kind: store.ActionDelete, IfMatch: store.ETagAny, Entity: store.Entity{PartitionKey: t.pk, RowKey: rk}})
	}
	for i := range actions {
		bytes += store.ActionWireSize(&actions[i])
	}
	if bytes >= store.MaxBatchBytes {
		return nil, w.tooLarge(t, count, l, size, bytes, refuse(store.CodeRequestBodyTooLarge, 413,
			"%d properties (%d bytes by the service's size formula) in %d rows make a transaction body of about %d bytes (base64 and escapes included): the service's limit is %d",
			count, l.size, n, bytes, store.MaxBatchBytes))
	}
	return actions, nil
}

func (w *Wide[T]) tooLarge(t *target, count int, l layout, actions, bytes int, err *store.Error) error {
	err.Message += "; nothing was written (keep large values in blobs, or split the value into several)"
	return &TooLargeError{Table: t.table, Partition: t.pk, ID: t.id, Properties: count, Size: l.size,
		Rows: len(l.rows), Actions: actions, Bytes: bytes, Err: err}
}

// head returns the value's head row: a partition.Head at the header's
// RowKey, whose commit loop, budget and lost-answer resolution every
// write of the value goes through; Options.Attempts, Backoff and Random
// are its policy.
func (w *Wide[T]) head(t *target) (*partition.Head, error) {
	h, err := partition.NewHead(w.table, t.pk, t.head, &partition.Options{
		History:         History,
		NewID:           func() (string, error) { return w.token(), nil },
		Attempts:        w.attempts,
		ResolveAttempts: w.attempts,
		Backoff:         w.backoff,
		Random:          w.random,
		HeadPrefix:      headPrefix,
	})
	if err != nil {
		return nil, t.wrap(err)
	}
	return h, nil
}

// commit runs one write through the value's head row and its commit
// loop (partition.Head.Run): each attempt reads the header (one point
// read), checks ifMatch against it, has build make the transaction on
// top of it (the value's new version given), and commits it with the
// head. The loop decides the outcome: a lost race under store.ETagAny,
// a commit proved not applied or a transient failure is tried again
// from a new read; a lost answer is resolved by the head, never sent
// again (applied, or an UnknownError); a send reported not applied that
// a later read shows landed is returned as applied.
func (w *Wide[T]) commit(ctx context.Context, t *target, ifMatch store.ETag, build func(h *header, version int64) ([]store.Action, error)) (store.ETag, error) {
	hd, err := w.head(t)
	if err != nil {
		return "", err
	}
	var (
		h   header // the header the attempt read
		n   int    // the attempt
		own error  // the write's own refusal, which names the value
	)
	res, err := hd.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
		n++
		own = w.attempt(t, &h, ifMatch, n, tx, build)
		return own
	}, &partition.RunOptions{Read: func(ctx context.Context) (partition.Fence, error) {
		var f partition.Fence
		var err error
		h, f, err = w.readHeader(ctx, t, hd)
		return f, err
	}})
	var (
		ue *partition.UnknownError
		ae *partition.AttemptsError
	)
	switch {
	case err == nil && res.Recovered && res.Fence.Version != res.Version:
		return "", nil // applied, and other writes landed on top of it since
	case err == nil:
		return res.Fence.ETag, nil
	case err == own:
		return "", err
	case errors.As(err, &ue):
		return "", w.unknown(t, ue)
	case errors.As(err, &ae) && ae.Raced && ifMatch == store.ETagAny:
		return "", w.conflict(t, ifMatch, "", ae.Attempts, ae.Err)
	case errors.Is(err, partition.ErrConflict) && ifMatch != store.ETagAny:
		// Refused on the head: the value changed since it was read.
		return "", w.conflict(t, ifMatch, "", n, err)
	}
	return "", t.wrap(err)
}

// attempt builds one attempt's transaction on the header h it read:
// ifMatch checked, the value's rows on top of it, the header through the
// head's SetHead.
func (w *Wide[T]) attempt(t *target, h *header, ifMatch store.ETag, n int, tx *partition.Txn, build func(h *header, version int64) ([]store.Action, error)) error {
	if err := w.precondition(t, h, ifMatch, n, tx); err != nil {
		return err
	}
	actions, err := build(h, h.version+1)
	if err != nil {
		return err // it names the value
	}
	head := actions[0].Entity.Properties
	delete(head, propHeadVersion)
	delete(head, propWrites)
	if err := tx.SetHead(head); err != nil {
		return t.wrap(err)
	}
	for _, a := range actions[1:] {
		if err := tx.Add("row "+a.Entity.RowKey, a); err != nil {
			return t.wrap(err)
		}
	}
	return nil
}

// precondition checks ifMatch against the header read (tx's base): an
// ETag holds while the header is unchanged since it had it, also when
// the head moved only to shut out a lost send of this write.
func (w *Wide[T]) precondition(t *target, h *header, ifMatch store.ETag, n int, tx *partition.Txn) error {
	switch {
	case ifMatch == store.ETagAny:
		return nil
	case ifMatch == "":
		if h.live() {
			return w.conflict(t, ifMatch, h.etag, n, refuse(store.CodeEntityAlreadyExists, 409, "the value exists already"))
		}
	case !h.live():
		return w.conflict(t, ifMatch, "", n, refuse(store.CodeUpdateConditionNotSatisfied, 412, "the value does not exist"))
	case !tx.Unchanged(ifMatch):
		return w.conflict(t, ifMatch, h.etag, n, refuse(store.CodeUpdateConditionNotSatisfied, 412, "the value's ETag is %s", h.etag))
	}
	return nil
}

func (w *Wide[T]) conflict(t *target, ifMatch, current store.ETag, attempts int, err error) error {
	var se *store.Error
	if !errors.As(err, &se) {
		se = refuse(store.CodeUpdateConditionNotSatisfied, 412, "%v", err)
	}
	return &ConditionError{Table: t.table, Partition: t.pk, ID: t.id, IfMatch: ifMatch, Current: current, Attempts: attempts, Err: se}
}

func (w *Wide[T]) unknown(t *target, ue *partition.UnknownError) error {
	return &UnknownError{Table: t.table, Partition: t.pk, ID: t.id, Reason: ue.Reason, Err: ue.Err, head: ue}
}
