package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Rules of append blobs and ranged reads, shared by every backend.

// ValidateAppend checks an append before it is sent: the blob name, a
// block of 1 byte to MaxAppendBlockSize (an empty block is the service's
// InvalidHeaderValue 400 for Content-Length 0; a larger one its
// RequestBodyTooLarge 413), and conditions that are not negative.
func ValidateAppend(name string, block []byte, opts *AppendOptions) error {
	if err := ValidateBlobName(name); err != nil {
		return err
	}
	switch {
	case len(block) == 0:
		return refuse(CodeInvalidHeaderValue, 400,
			"append to blob %s: the block is empty (Content-Length 0): a block holds 1 to %d bytes", quoteTrunc(name), MaxAppendBlockSize)
	case len(block) > MaxAppendBlockSize:
		return refuse(CodeRequestBodyTooLarge, 413,
			"append to blob %s: a block of %d bytes is over the limit of %d bytes (100 MiB) per Append Block", quoteTrunc(name), len(block), MaxAppendBlockSize)
	}
	if opts == nil {
		return nil
	}
	if p := opts.AppendPosition; p != nil && *p < 0 {
		return refuse(CodeInvalidHeaderValue, 400,
			"append to blob %s: AppendPosition %d is negative: it is the blob's expected length in bytes", quoteTrunc(name), *p)
	}
	if m := opts.MaxSize; m != nil && *m < 0 {
		return refuse(CodeInvalidHeaderValue, 400,
			"append to blob %s: MaxSize %d is negative: it is the blob's largest allowed length in bytes", quoteTrunc(name), *m)
	}
	if opts.IfMatch != "" {
		return ValidateETag(opts.IfMatch)
	}
	return nil
}

// ValidateRange checks the offset and count of a ranged read: neither may
// be negative (count 0 means "to the end").
func ValidateRange(name string, offset, count int64) error {
	if err := ValidateBlobName(name); err != nil {
		return err
	}
	if offset < 0 || count < 0 {
		return invalid("read of blob %s: offset %d and count %d must not be negative (count 0 reads to the end)", quoteTrunc(name), offset, count)
	}
	return nil
}

// RangeNotSatisfiable is the service's answer to a ranged read that starts
// at or past the end of a blob of size bytes. Backends use it where the
// server answers otherwise (Azurite returns an empty body for a range that
// starts exactly at the end).
func RangeNotSatisfiable(container, name string, offset, size int64) *Error {
	return Errorf(CodeInvalidRange, 416,
		"read of blob %s in container %q from offset %d: the blob is %d bytes long, so the range is not satisfiable", quoteTrunc(name), container, offset, size)
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
func SettleAppend(ctx context.Context, c Container, name string, block []byte, opts AppendOptions, cause error, resend func(context.Context) (AppendResult, error)) (AppendResult, error) {
	if opts.AppendPosition == nil {
		return AppendResult{}, annotate(cause,
			"an append without AppendPosition cannot be resent safely nor told apart from another writer's block: its outcome is unknown")
	}
	pos := *opts.AppendPosition
	var refusal error
	for attempt := 1; attempt <= appendResends; attempt++ {
		res, err := resend(ctx)
		if err == nil {
			return res, nil
		}
		if errors.Is(err, ErrUnknownOutcome) || errors.Is(err, ErrTransient) {
			continue
		}
		if !settledByReadBack(err) {
			return AppendResult{}, annotate(cause, fmt.Sprintf("resending it at position %d failed (%v), so whether the first attempt landed is unknown", pos, err))
		}
		refusal = err
		break
	}
	if refusal == nil {
		return AppendResult{}, annotate(cause, fmt.Sprintf("%d resends at position %d got no answer either, so whether it landed is unknown", appendResends, pos))
	}
	data, props, err := c.GetRange(ctx, name, pos, int64(len(block)))
	switch {
	case err == nil && bytes.Equal(data, block):
		return AppendResult{Offset: pos, Size: pos + int64(len(block)), Blocks: props.Blocks, ETag: props.ETag, LastModified: props.LastModified}, nil
	case err == nil || Code(err) == CodeInvalidRange:
		return AppendResult{}, markResolved(refusal,
			fmt.Sprintf("an earlier attempt's answer was lost; a read-back at offset %d shows it was not applied", pos))
	}
	return AppendResult{}, annotate(cause, fmt.Sprintf("the resend at position %d was refused (%v) and the read-back failed (%v), so whether the first attempt landed is unknown", pos, refusal, err))
}

// settledByReadBack reports a resend's refusal that a read-back settles:
// the refusals a landed first attempt causes.
func settledByReadBack(err error) bool {
	switch Code(err) {
	case CodeAppendPositionConditionNotMet, CodeMaxBlobSizeConditionNotMet, CodeConditionNotMet, CodeBlockCountExceedsLimit:
		return true
	}
	return false
}
