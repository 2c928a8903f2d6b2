package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/store"
)

// NotAppliedError reports a commit whose answer was lost and that a read
// of the fence proved not applied; the package also made sure it never
// will (its fence condition is stale: another writer, or the package
// itself, moved the fence past the version it was based on). Nothing of
// the transaction was written. Begin again and retry.
//
// It matches store.ErrTransient and never store.ErrUnknownOutcome.
type NotAppliedError struct {
	Table, Partition string
	// Version is the version the transaction was based on.
	Version int64
	// Overtaken is set when another writer committed the next version;
	// otherwise the package moved the fence itself to shut the lost
	// request out.
	Overtaken bool
	// Err is the store's error for the lost answer, with Unknown cleared
	// now that the outcome is known.
	Err *store.Error
}

func (e *NotAppliedError) Error() string {
	how := "the fence was moved past it so it never will"
	if e.Overtaken {
		how = "another writer committed the next version first"
	}
	return fmt.Sprintf("partition %s of table %s: the answer to a commit on version %d was lost; a read of the fence shows it did not apply and %s: %v",
		quote(e.Partition), e.Table, e.Version, how, e.Err)
}

// Unwrap returns the store's error, Unknown cleared.
func (e *NotAppliedError) Unwrap() error { return e.Err }

// Is matches store.ErrTransient: nothing was applied and a new attempt may
// succeed.
func (e *NotAppliedError) Is(target error) bool { return target == store.ErrTransient }

// UnknownError reports a commit whose answer was lost and whose outcome
// the package could not decide: the context ended, the fence could not be
// read, or more than Options.History commits landed on the partition
// before the fence was read back. It matches store.ErrUnknownOutcome.
// Resolve tries again later.
type UnknownError struct {
	Table, Partition string
	// Version is the version the transaction was based on.
	Version int64
	// Reason says why the outcome is still unknown.
	Reason string
	// Err is the store's error for the lost answer (Unknown set).
	Err *store.Error

	txn *Txn
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("partition %s of table %s: the answer to a commit on version %d was lost and its outcome is unknown (%s): %v",
		quote(e.Partition), e.Table, e.Version, e.Reason, e.Err)
}

// Unwrap returns the store's error, which matches store.ErrUnknownOutcome.
func (e *UnknownError) Unwrap() error { return e.Err }

// Resolve tries again to learn whether the commit applied, as Commit does
// after a lost answer: a Result (Recovered) if it did, a NotAppliedError
// if it did not, an UnknownError if it still cannot tell. An UnknownError
// that Commit did not return (a nil pointer, or one built by hand) has no
// commit to resolve: an error matching store.ErrInvalidInput.
func (e *UnknownError) Resolve(ctx context.Context) (*Result, error) {
	if e == nil || e.txn == nil || e.Err == nil {
		return nil, refuse(store.CodeInvalidInput, 400,
			"partition: Resolve of an UnknownError that Commit did not return: there is no commit to resolve")
	}
	return e.txn.resolve(ctx, e.Err)
}

// resolve decides the outcome of a commit whose answer was lost. The fence
// names the writer of each of its recent versions, so the writer of
// version base+1 says whether this commit applied. While the fence still
// sits at base, the lost request may yet land (it can be delayed in the
// network or the service), so resolve commits an empty transaction on
// base itself: once that succeeds, the lost request's fence condition is
// stale forever.
func (t *Txn) resolve(ctx context.Context, cause *store.Error) (*Result, error) {
	poison := ""
	reason := "no attempt was made"
	for n := 0; n < t.p.s.resolveAttempts; n++ {
		if n > 0 {
			if err := t.p.s.wait(ctx, n); err != nil {
				return nil, t.unknown(cause, "the context ended: "+err.Error())
			}
		}
		f, err := t.p.h.read(ctx, t.p.table, t.p.pk)
		if err != nil {
			if errors.Is(err, ErrCorrupt) {
				return nil, t.unknown(cause, err.Error())
			}
			reason = "the " + t.p.what() + " could not be read: " + err.Error()
			continue
		}
		switch {
		case f.Version > t.base.Version:
			w, ok := f.writerOf(t.base.Version + 1)
			if !ok {
				return nil, t.unknown(cause, fmt.Sprintf("the %s moved from version %d to %d and no longer records who wrote version %d",
					t.p.what(), t.base.Version, f.Version, t.base.Version+1))
			}
			for _, a := range append([]*Txn{t}, t.alts...) {
				if w == a.id {
					return a.recovered(f), nil
				}
			}
			if slices.Contains(t.poisons, w) {
				t.shut = w
			}
			return nil, t.notApplied(cause, t.shut == "")
		case f.Version < t.base.Version:
			// Someone outside the package rewrote the fence: who applied
			// what cannot be told.
			return nil, t.unknown(cause, fmt.Sprintf("the %s went back from version %d to %d: it was rewritten outside the package", t.p.what(), t.base.Version, f.Version))
		}
		// The fence is at the transaction's base: shut the lost request out.
		// The empty commit is conditional on the base's ETag too, so a fence
		// rewritten outside the package at the same version makes it fail
		// and the loop read again.
		if poison == "" {
			if poison, err = t.p.s.id(); err != nil {
				return nil, t.unknown(cause, err.Error())
			}
			t.poisons = append(t.poisons, poison)
		}
		v, w := t.base.next(poison, t.p.s.history)
		_, err = t.p.table.Transact(ctx, t.p.h.actions(t.base, v, w, nil, false))
		switch {
		case err == nil:
			t.shut = poison
			return nil, t.notApplied(cause, false)
		case errors.Is(err, store.ErrUnknownOutcome), errors.Is(err, store.ErrTransient),
			store.Index(err) == 0 && (store.Status(err) == 409 || store.Status(err) == 412):
			// Read the fence again: it tells who won.
			reason = "moving the " + t.p.what() + " failed: " + err.Error()
		default:
			return nil, t.unknown(cause, "moving the "+t.p.what()+" failed: "+err.Error())
		}
	}
	return nil, t.unknown(cause, fmt.Sprintf("gave up after %d attempts: %s", t.p.s.resolveAttempts, reason))
}

// recovered is the Result of t, found applied in head state f after its
// answer was lost.
func (t *Txn) recovered(f Fence) *Result {
	return &Result{Version: t.next.Version, Outbox: t.ids, Fence: f, Recovered: true, RequestID: t.id}
}

func (t *Txn) notApplied(cause *store.Error, overtaken bool) error {
	known := *cause
	known.Unknown = false
	return &NotAppliedError{Table: t.p.table.Name(), Partition: t.p.pk, Version: t.base.Version, Overtaken: overtaken, Err: &known}
}

func (t *Txn) unknown(cause *store.Error, reason string) error {
	return &UnknownError{Table: t.p.table.Name(), Partition: t.p.pk, Version: t.base.Version, Reason: reason, Err: cause, txn: t}
}
