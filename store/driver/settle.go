package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// A write whose answer was lost (a 500, a timeout, a reset connection) has
// an unknown outcome. A backend never sends such a write again unless it
// is idempotent (store.Idempotent); it settles it here by reading back,
// and reports it done, not done (the error then matches
// store.ErrTransient), or still unknown (store.ErrUnknownOutcome).

// AmbiguousStatus reports whether a service answer with this HTTP status
// leaves a write's outcome unknown: 500 (InternalError, OperationTimedOut),
// 502 and 504 may come after the write was applied. A 503 ServerBusy comes
// before any work, and a 4xx is a refusal.
func AmbiguousStatus(status int) bool {
	return status == 500 || status == 502 || status == 504
}

// Settle turns the unknown outcome of a write into what a read-back
// shows (store.Resolve): on store.Applied it returns the results read back
// and no error; on store.NotApplied it returns cause marked as not applied
// (it then matches store.ErrTransient, not store.ErrUnknownOutcome);
// otherwise cause unchanged, its message extended with why the read-back
// did not decide. Backends call it for every write whose answer was lost.
func Settle(ctx context.Context, t store.Table, actions []store.Action, cause error) (results []store.ActionResult, err error) {
	name := ""
	if t != nil {
		name = t.Name()
	}
	ctx, fin := store.Observe(ctx, t, store.Operation{Name: "driver.Settle", Table: name, Batch: len(actions)})
	defer func() { fin.Finish(err, 0) }()
	res, results, err := store.Resolve(ctx, t, actions)
	switch res {
	case store.Applied:
		return results, nil
	case store.NotApplied:
		return nil, markResolved(cause, "a read-back shows it was not applied: sending it again is safe")
	}
	return nil, store.Undecided(cause, err)
}

// markResolved returns a copy of cause with Unknown cleared and a note.
func markResolved(cause error, note string) error {
	var se *store.Error
	if !errors.As(cause, &se) {
		return cause
	}
	c := *se
	c.Unknown = false
	c.Message = joinMessage(c.Message, note)
	return &c
}

// annotate returns a copy of cause with a note added to its message.
func annotate(cause error, note string) error {
	var se *store.Error
	if !errors.As(cause, &se) {
		return cause
	}
	c := *se
	c.Message = joinMessage(c.Message, note)
	return &c
}

func joinMessage(msg, note string) string {
	if msg == "" {
		return note
	}
	return msg + "; " + note
}

// appendResends is how often SettleAppend sends an append again while its
// answers keep getting lost.
const appendResends = 3

// SettleAppend decides the outcome of an append whose answer was lost
// (cause: a 500, a timeout, a reset). Backends call it for every such
// append; resend sends the same request once more, with the same
// conditions.
//
// An append without an AppendPosition cannot be settled: resending it could
// add the block twice, and another writer's block at the end looks the
// same. Its outcome stays unknown (cause is returned).
//
// With an AppendPosition p the block can only ever land at p, so resending
// is safe: at most one of the attempts commits. The resend's answer
// decides:
//
//   - success: the first attempt had not landed, the resend did;
//   - a refusal of its conditions (412: the position is taken, the size
//     limit or the If-Match no longer holds) or of the block count (409):
//     the bytes at p..p+len(block) are read back (GetRange). They are the
//     block: the first attempt landed, and the append is done. They are
//     not (or the blob ends before p+len(block)): it did not land, and
//     the refusal is returned, no longer unknown;
//   - lost again: it is resent, at most 3 times in all; then, or when the
//     resend fails otherwise (the blob was deleted, say), the outcome stays
//     unknown and cause is returned with a note saying why.
//
// Data at an offset of an append blob never changes, so a read-back that
// decides is final. Two writers appending the same bytes at the same
// position cannot be told apart: give each blob one writer (logdata's
// writers put their id in the blob name).
func SettleAppend(ctx context.Context, c store.Container, name string, block []byte, opts store.AppendOptions, cause error, resend func(context.Context) (store.AppendResult, error)) (store.AppendResult, error) {
	if opts.AppendPosition == nil {
		return store.AppendResult{}, annotate(cause,
			"an append without AppendPosition cannot be resent safely nor told apart from another writer's block: its outcome is unknown")
	}
	pos := *opts.AppendPosition
	var refusal error
	for attempt := 1; attempt <= appendResends; attempt++ {
		res, err := resend(ctx)
		if err == nil {
			return res, nil
		}
		if errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) {
			continue
		}
		if !settledByReadBack(err) {
			return store.AppendResult{}, annotate(cause, fmt.Sprintf("resending it at position %d failed (%v), so whether the first attempt landed is unknown", pos, err))
		}
		refusal = err
		break
	}
	if refusal == nil {
		return store.AppendResult{}, annotate(cause, fmt.Sprintf("%d resends at position %d got no answer either, so whether it landed is unknown", appendResends, pos))
	}
	data, props, err := c.GetRange(ctx, name, pos, int64(len(block)))
	switch {
	case err == nil && bytes.Equal(data, block):
		return store.AppendResult{Offset: pos, Size: pos + int64(len(block)), Blocks: props.Blocks, ETag: props.ETag, LastModified: props.LastModified}, nil
	case err == nil || store.Code(err) == store.CodeInvalidRange:
		return store.AppendResult{}, markResolved(refusal,
			fmt.Sprintf("an earlier attempt's answer was lost; a read-back at offset %d shows it was not applied", pos))
	}
	return store.AppendResult{}, annotate(cause, fmt.Sprintf("the resend at position %d was refused (%v) and the read-back failed (%v), so whether the first attempt landed is unknown", pos, refusal, err))
}

// settledByReadBack reports a resend's refusal that a read-back settles:
// the refusals a landed first attempt causes.
func settledByReadBack(err error) bool {
	switch store.Code(err) {
	case store.CodeAppendPositionConditionNotMet, store.CodeMaxBlobSizeConditionNotMet, store.CodeConditionNotMet, store.CodeBlockCountExceedsLimit:
		return true
	}
	return false
}
