package wide

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	// Refuse a value that cannot fit before any request: with the longest
	// list of writes the header can carry, and no rows to delete.
	if _, err := w.plan(&t, &header{}, cs, len(names), 1, longestWrites); err != nil {
		return "", err
	}
	etag, err := w.commit(ctx, &t, ifMatch, func(h *header, version int64, writes string) ([]store.Action, error) {
		return w.plan(&t, h, cs, len(names), version, writes)
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
	_, err = w.commit(ctx, &t, ifMatch, func(h *header, version int64, writes string) ([]store.Action, error) {
		if !h.live() {
			return nil, notFound(t.table, pk, id)
		}
		actions := []store.Action{{Kind: store.ActionUpdateReplace, IfMatch: h.etag, Entity: store.Entity{
			PartitionKey: pk, RowKey: t.head, Properties: headerProps(version, 0, writes)}}}
		for i := 1; i < h.rows; i++ {
			rk, _ := rowKey(id, i)
			actions = append(actions, store.Action{Kind: store.ActionDelete, IfMatch: store.ETagAny, Entity: store.Entity{PartitionKey: pk, RowKey: rk}})
		}
		return actions, nil
	})
	return err
}

// longestWrites is as long as the header's list of writes can be.
var longestWrites = strings.TrimSpace(strings.Repeat("0123456789abc ", History))

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

func headerProps(version int64, rows int32, writes string) map[string]any {
	return map[string]any{propVersion: version, propRows: rows, propWrites: writes}
}

// plan lays a value out in rows on top of header h and returns the
// actions of its transaction: the header first (an insert, or a replace
// conditional on h's ETag), then the other rows (insert-or-replace: the
// header fences them), then deletes of the rows h's version had beyond
// the new one's.
func (w *Wide[T]) plan(t *target, h *header, cs []cell, count int, version int64, writes string) ([]store.Action, error) {
	head := headerProps(version, 0, writes)
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

// outcome is what a read of the header says about a write whose answer
// was lost.
type outcome int

const (
	unchanged outcome = iota // the header is as the write found it: not applied (yet)
	applied                  // the header lists the write
	overtaken                // another write took the version after the write's base: it never applies
	undecided                // the header no longer tells
)

// judge reads header h for a write with id token that was conditional on
// base, whose answer was lost. Every write of the value replaces the
// header (a delete keeps it as a marker), so the header's version counts
// the writes and its list names the writers of the last History versions:
// the write applied exactly when the writer of version base+1 is token.
func judge(base, h *header, token string) (outcome, string) {
	switch {
	case base.exists == h.exists && base.etag == h.etag:
		return unchanged, ""
	case !h.exists:
		return undecided, "the header is gone: it was deleted outside the package"
	case slices.Contains(h.writes, token):
		return applied, ""
	case h.version <= base.version:
		return undecided, fmt.Sprintf("the header went from version %d to %d: it was rewritten outside the package", base.version, h.version)
	}
	if base.exists {
		// The header must still name base's writer at base's version, or
		// the versions cannot be compared.
		if w, ok := h.writerOf(base.version); !ok || w != base.writes[0] {
			return undecided, fmt.Sprintf("the header moved from version %d to %d and no longer records the writes in between", base.version, h.version)
		}
	}
	if _, ok := h.writerOf(base.version + 1); !ok {
		return undecided, fmt.Sprintf("the header moved from version %d to %d and no longer records who wrote version %d", base.version, h.version, base.version+1)
	}
	return overtaken, ""
}

// commit runs one write: it reads the header (one point read), checks
// ifMatch against it, has build make the transaction on top of it (the
// header's new version and write list given), and sends it. It tries again
// when an unconditional write meets a concurrent one, after a transient
// failure, and after a lost answer, each time reading the header first:
// a write whose answer was lost is judged by the header, and sent again
// only while the header shows it has not applied, conditional on the same
// header, so the two sends can never both apply. Every send of one commit
// records the same write id.
func (w *Wide[T]) commit(ctx context.Context, t *target, ifMatch store.ETag, build func(h *header, version int64, writes string) ([]store.Action, error)) (store.ETag, error) {
	token := w.token()
	var (
		pending *header      // the base of a send whose answer was lost, while it may yet apply
		lost    *store.Error // that send's error
		why     string       // why its outcome is not known yet
		last    error
	)
	// Up to Attempts sends, and after the last one, if its answer was lost,
	// one more read of the header to judge it.
	for n := 1; n <= w.attempts+1; n++ {
		if n > w.attempts && pending == nil {
			break
		}
		if n > 1 {
			if err := w.wait(ctx, n-1); err != nil {
				if pending != nil {
					return "", w.unknown(t, lost, "the context ended: "+err.Error())
				}
				return "", t.wrap(errors.Join(last, err))
			}
		}
		h, err := w.readHeader(ctx, t)
		if err != nil {
			if errors.Is(err, ErrCorrupt) || !(errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome)) {
				if pending != nil {
					return "", w.unknown(t, lost, "the header could not be read: "+err.Error())
				}
				return "", t.wrap(err)
			}
			last, why = err, "the header could not be read: "+err.Error()
			continue
		}
		if pending != nil {
			switch o, reason := judge(pending, &h, token); o {
			case unchanged:
				why = "the header still showed it not applied, and a request held up in the network may yet land"
			case applied:
				if h.writes[0] == token {
					return h.etag, nil
				}
				return "", nil // applied, and other writes landed on top of it since
			case overtaken:
				pending = nil
			case undecided:
				if lost == nil {
					// Only refusals and answers the store resolved as
					// not applied came back: trust them.
					pending = nil
					break
				}
				return "", w.unknown(t, lost, reason)
			}
		}
		if n > w.attempts {
			break // judged the last send; no more sends
		}
		if err := w.precondition(t, &h, ifMatch, n); err != nil {
			return "", err
		}
		writes := token
		if h.exists {
			writes = strings.Join(append([]string{token}, h.writes[:min(len(h.writes), History-1)]...), " ")
		}
		actions, err := build(&h, h.version+1, writes)
		if err != nil {
			return "", err // it names the value
		}
		res, err := w.table.Transact(ctx, actions)
		if err == nil {
			return res[0].ETag, nil
		}
		var se *store.Error
		switch {
		case errors.Is(err, store.ErrUnknownOutcome) && errors.As(err, &se):
			base := h
			pending, lost, why = &base, se, "its answer was lost"
		case errors.Is(err, store.ErrTransient):
			// Nothing was applied, as far as the store could tell when it
			// answered; a send delayed in the network may still land, and
			// judging the header covers that too.
			base := h
			if pending == nil {
				pending, lost = &base, nil
			}
			last = err
		case store.Index(err) == 0 && isConflict(err):
			if pending == nil && ifMatch != store.ETagAny {
				return "", w.conflict(t, ifMatch, "", n, err)
			}
			last = err // read the header again: it tells who won
		default:
			return "", w.refused(t, actions, err)
		}
	}
	if pending != nil && lost != nil {
		return "", w.unknown(t, lost, fmt.Sprintf("gave up after %d attempts: %s", w.attempts, why))
	}
	if ifMatch == store.ETagAny && isConflict(last) {
		return "", w.conflict(t, ifMatch, "", w.attempts, last)
	}
	return "", t.wrap(fmt.Errorf("gave up after %d attempts: %w", w.attempts, last))
}

// precondition checks ifMatch against the header read.
func (w *Wide[T]) precondition(t *target, h *header, ifMatch store.ETag, n int) error {
	switch {
	case ifMatch == store.ETagAny:
		return nil
	case ifMatch == "":
		if h.live() {
			return w.conflict(t, ifMatch, h.etag, n, refuse(store.CodeEntityAlreadyExists, 409, "the value exists already"))
		}
	case !h.live():
		return w.conflict(t, ifMatch, "", n, refuse(store.CodeUpdateConditionNotSatisfied, 412, "the value does not exist"))
	case h.etag != ifMatch:
		return w.conflict(t, ifMatch, h.etag, n, refuse(store.CodeUpdateConditionNotSatisfied, 412, "the value's ETag is %s", h.etag))
	}
	return nil
}

func isConflict(err error) bool {
	switch store.Status(err) {
	case 404, 409, 412:
		return true
	}
	return false
}

func (w *Wide[T]) conflict(t *target, ifMatch, current store.ETag, attempts int, err error) error {
	var se *store.Error
	if !errors.As(err, &se) {
		se = refuse(store.CodeUpdateConditionNotSatisfied, 412, "%v", err)
	}
	return &ConditionError{Table: t.table, Partition: t.pk, ID: t.id, IfMatch: ifMatch, Current: current, Attempts: attempts, Err: se}
}

func (w *Wide[T]) unknown(t *target, cause *store.Error, reason string) error {
	return &UnknownError{Table: t.table, Partition: t.pk, ID: t.id, Reason: reason, Err: cause}
}

// refused explains a refusal of any row but the header: only a row
// changed outside the package (a part to delete that is gone) or a
// failure the store reports as it is (throttling that outlasted the
// attempts, a connection that failed) gets here. Nothing was written.
func (w *Wide[T]) refused(t *target, actions []store.Action, err error) error {
	if i := store.Index(err); i > 0 && i < len(actions) {
		return t.wrap(fmt.Errorf("row %q (%s) was refused: %w", actions[i].Entity.RowKey, actions[i].Kind, err))
	}
	return t.wrap(err)
}
