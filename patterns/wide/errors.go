package wide

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// Sentinels for errors.Is. A write refused because the value was not in
// the state it was conditional on is a *ConditionError, which speaks the
// patterns' vocabulary (package partition): partition.ErrConflict,
// partition.ErrChanged or partition.ErrDuplicate.
var (
	// ErrTooLarge matches a TooLargeError: the value does not fit one
	// entity group transaction.
	ErrTooLarge = errors.New("wide: the value does not fit one entity group transaction")
	// ErrInconsistentRead matches the error of a read that never saw one
	// version of the value: a write landed during every one of its
	// attempts.
	ErrInconsistentRead = errors.New("wide: writers kept changing the value during the read")
	// ErrCorrupt matches the error about a row in a value's key range
	// that the package did not write as it is: a writer outside the
	// package changed it.
	ErrCorrupt = errors.New("wide: a row of the value is malformed")
)

// ConditionError reports a write refused because the value was not in the
// state it was conditional on. Nothing was written. What it matches says
// what to do, by the write's condition (IfMatch):
//
//   - store.ETagAny: other writers got in during each attempt, a race:
//     partition.ErrConflict; write again.
//   - an ETag: the value changed or went away since it was read:
//     partition.ErrChanged and store.ErrPreconditionFailed; read it again
//     before deciding to write.
//   - "" (a create): the value exists: partition.ErrDuplicate and
//     store.ErrAlreadyExists; the same create fails again.
//
// Err holds the *store.Error of the refusal.
type ConditionError struct {
	Table, Partition, ID string
	// IfMatch is the condition of the write: an ETag, store.ETagAny, or ""
	// for a write that creates the value.
	IfMatch store.ETag
	// Current is the value's ETag when the write was refused ("" when the
	// value does not exist, or when the service's refusal did not say).
	Current store.ETag
	// Attempts is how many times the write was tried (more than one for an
	// unconditional write that kept meeting other writers).
	Attempts int
	// Err is the service's refusal of the header row, or the client's own
	// when a read of the header showed the state already.
	Err *store.Error
}

// Error says which state the value was in and what the write expected.
func (e *ConditionError) Error() string {
	var what string
	switch {
	case e.IfMatch == "" && e.Current != "":
		what = "it exists already"
	case e.IfMatch == "":
		what = "another writer created it first"
	case e.IfMatch == store.ETagAny:
		what = fmt.Sprintf("other writers changed it during each of %d attempts", e.Attempts)
	case e.Current == "":
		what = fmt.Sprintf("it does not exist (the write was conditional on ETag %s)", e.IfMatch)
	default:
		what = fmt.Sprintf("it changed since ETag %s was read", e.IfMatch)
	}
	return fmt.Sprintf("wide: value %q of partition %q in table %s: %s: %v", e.ID, e.Partition, e.Table, what, e.Err)
}

// Unwrap returns the refusal.
func (e *ConditionError) Unwrap() error { return e.Err }

// Is matches the meaning of the refusal by the write's condition:
// partition.ErrConflict under store.ETagAny, partition.ErrChanged and
// store.ErrPreconditionFailed under an ETag, partition.ErrDuplicate and
// store.ErrAlreadyExists for a create.
func (e *ConditionError) Is(target error) bool {
	switch e.IfMatch {
	case store.ETagAny:
		return target == partition.ErrConflict
	case "":
		return target == partition.ErrDuplicate || target == store.ErrAlreadyExists
	}
	return target == partition.ErrChanged || target == store.ErrPreconditionFailed
}

// TooLargeError reports a value that cannot be stored: split into rows
// within the service's limits for one entity, it needs more rows or a
// larger request than one entity group transaction takes. Nothing was
// written. It matches ErrTooLarge, store.ErrTooLarge and
// store.ErrInvalidInput.
type TooLargeError struct {
	Table, Partition, ID string
	// Properties is the number of the value's properties, and Size their
	// size by the service's entity size formula (store.EntitySize).
	Properties, Size int
	// Rows is the number of rows the value needs, Actions the actions of
	// its transaction (the rows, and deletes of rows a shorter version no
	// longer needs) and Bytes the transaction's request body by the
	// store's estimate (store.ActionWireSize, base64 and escapes
	// included).
	Rows, Actions, Bytes int
	// Err is the refusal: RequestBodyTooLarge (413) or InvalidInput (400),
	// made by the package before anything was sent.
	Err *store.Error
}

// Error names the value and the limit it passes.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("wide: value %q of partition %q in table %s: %v", e.ID, e.Partition, e.Table, e.Err)
}

// Unwrap returns the refusal.
func (e *TooLargeError) Unwrap() error { return e.Err }

// Is matches ErrTooLarge and store.ErrTooLarge.
func (e *TooLargeError) Is(target error) bool {
	return target == ErrTooLarge || target == store.ErrTooLarge
}

// UnknownError reports a write whose answer was lost and whose outcome
// the value's head row (a partition.Head) could not decide: the context
// ended, the header could not be read or moved, or more than History
// other commits landed on it before it was read back. It matches
// store.ErrUnknownOutcome, the patterns' unknown outcome (package
// partition), and nothing else. The value is whole either way: one
// version or the other, never a mix; Resolve asks the head again, and a
// read (Read or Get) shows which version is stored.
type UnknownError struct {
	Table, Partition, ID string
	// Reason says why the outcome is still unknown.
	Reason string
	// Err is the store's error for the lost answer (Unknown set).
	Err *store.Error

	head *partition.UnknownError
}

// Resolve tries again to learn whether the write applied, reading the
// value's head row as the write did: its header's ETag ("" when other
// writes landed on top of it since) if it did, an error matching
// store.ErrTransient (a partition.NotAppliedError: nothing was written,
// and the head was moved past it so it never will be) if it did not, an
// UnknownError if it still cannot tell. An UnknownError the package did
// not return has no write to resolve: an error matching
// store.ErrInvalidInput.
func (e *UnknownError) Resolve(ctx context.Context) (store.ETag, error) {
	if e == nil || e.head == nil {
		return "", store.Errorf(store.CodeInvalidInput, 400,
			"wide: Resolve of an UnknownError that a write did not return: there is no write to resolve")
	}
	res, err := e.head.Resolve(ctx)
	var ue *partition.UnknownError
	switch {
	case errors.As(err, &ue):
		return "", &UnknownError{Table: e.Table, Partition: e.Partition, ID: e.ID, Reason: ue.Reason, Err: ue.Err, head: ue}
	case err != nil:
		return "", fmt.Errorf("wide: value %q of partition %q in table %s: %w", e.ID, e.Partition, e.Table, err)
	case res.Fence.Version != res.Version:
		return "", nil
	}
	return res.Fence.ETag, nil
}

// Error names the value and says why its outcome is unknown.
func (e *UnknownError) Error() string {
	return fmt.Sprintf("wide: value %q of partition %q in table %s: the answer to a write was lost and its outcome is unknown (%s): %v",
		e.ID, e.Partition, e.Table, e.Reason, e.Err)
}

// Unwrap returns the store's error, which matches store.ErrUnknownOutcome.
func (e *UnknownError) Unwrap() error { return e.Err }

// corrupt is the error about a row the package did not write as it is.
func corrupt(e *store.Entity, format string, args ...any) error {
	return fmt.Errorf("%w: row %q of partition %q: %s", ErrCorrupt, e.RowKey, e.PartitionKey, fmt.Sprintf(format, args...))
}

// notFound is the error of a value that does not exist (or was deleted).
func notFound(table, pk, id string) error {
	return store.Errorf(store.CodeResourceNotFound, 404, "wide: value %q of partition %q in table %s does not exist", id, pk, table)
}
