package partition

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// The patterns' errors. Every package under patterns/ reports a failed
// write with one of the meanings below, matched with errors.Is against
// these sentinels (and store's), whatever package or action failed. Every
// typed error names its table, partition and row, and unwraps to the
// *store.Error behind it, so store.Code, store.Status and errors.As to a
// *store.Error work on each of them.
//
//   - ErrConflict, a race to retry: another writer got there first (it
//     committed to the partition, or changed the row, after the state this
//     write was built on). Nothing was written. Read again and retry: a new
//     attempt may succeed. partition's ConflictError, wide's ConditionError
//     of a write under store.ETagAny, indexentity's ErrContention.
//   - ErrChanged, a changed row: a write conditional on the caller's ETag
//     met a row that changed or went away since the caller read it.
//     Nothing was written. Do not retry blindly: read the row again and
//     decide on what it holds now. It matches store.ErrPreconditionFailed
//     (or store.ErrNotFound for a row that is gone). ChangedError, wide's
//     ConditionError of a write under an ETag.
//   - ErrDuplicate, a duplicate: an insert met a row that exists: the
//     entity, or a unique value another entity holds (or is claiming).
//     Nothing was written. The same write fails again until the holder
//     gives the value up. One type, DuplicateError, in every package; it
//     matches store.ErrAlreadyExists (Code EntityAlreadyExists, 409).
//   - store.ErrUnknownOutcome, an unknown outcome: the answer to a write was
//     lost and the package could not tell whether it applied. UnknownError
//     (its Resolve asks again); wide's UnknownError.
//   - A domain conflict: the data breaks a pattern's rule, and no retry can
//     mend it: model.ErrHeldTwice (two entities hold one unique value),
//     model.ErrOtherSource (a target has a second source). These match
//     none of the sentinels above and never store.ErrTransient. Do not
//     retry: change the data.
//
// store.ErrTransient keeps its meaning (nothing applied, the same request
// may pass when sent again; NotAppliedError of a lost commit matches it).
var (
	// ErrConflict matches a race lost to another writer: nothing was
	// written; read again and retry.
	ErrConflict = errors.New("partition: a concurrent writer committed first")
	// ErrDuplicate matches a DuplicateError: an insert met an existing
	// row (the entity, or a unique value another entity holds). Nothing
	// was written; the same write fails again.
	ErrDuplicate = errors.New("partition: row exists already")
	// ErrChanged matches a write conditional on the caller's ETag that met
	// a row that changed or went away since it was read. Nothing was
	// written; read again before deciding to write.
	ErrChanged = errors.New("partition: row changed since it was read")
)

// Ref names an entity by its keys: the holder of a unique value, the
// source of a copy. It is store.Key, tablekit's one key-pair type.
type Ref = store.Key

// Row identifies one of the caller's data rows in a transaction, or the
// row a pattern's write met.
type Row struct {
	// Label is the name the caller (or the pattern) gave the row
	// ("employee", "index email"); it is "" for an outbox row.
	Label string
	// Index is the row's position among the caller's data rows of a
	// transaction, in the order they were added; -1 for an outbox row or
	// a row written outside a transaction of this package.
	Index int
	// Kind is the write.
	Kind store.ActionKind
	// RowKey is the row's key.
	RowKey string
}

func (r Row) String() string {
	if r.Index < 0 && r.Label == "" {
		return fmt.Sprintf("outbox row %s", quote(r.RowKey))
	}
	return fmt.Sprintf("%s (%s of RowKey %s)", labelText(r.Label), r.Kind, quote(r.RowKey))
}

// ConflictError reports that the fence refused the transaction: another
// writer committed to the partition after Version, the state this one was
// built on. Nothing was written. Read again (or Begin again) and retry. It
// matches ErrConflict.
type ConflictError struct {
	Table, Partition string
	// Version is the version the transaction was based on.
	Version int64
	// Err is the service's answer for the fence row.
	Err *store.Error
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("partition %s of table %s: another writer committed after version %d: %v", quote(e.Partition), e.Table, e.Version, e.Err)
}

// Unwrap returns the service's error.
func (e *ConflictError) Unwrap() error { return e.Err }

// Is matches ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// DuplicateError reports that an insert met an existing row: the entity
// exists already, or (IndexName set) a unique value is taken. Nothing was
// written, and the same write fails again until the holder gives the value
// up. It is the one duplicate error of every pattern (partition, index,
// xindex); it matches ErrDuplicate and, through Err, store.ErrAlreadyExists.
type DuplicateError struct {
	// Table and Partition hold the row that exists.
	Table, Partition string
	// Row is the row the insert met: its label and RowKey.
	Row
	// IndexName and Value name the unique index and the value, for an
	// index copy or claim ("" for the entity itself).
	IndexName, Value string
	// Holder is the entity holding (or claiming) the value, when known.
	Holder Ref
	// Pending is set when the holder's claim is recent and its entity does
	// not hold the value yet: its write may still commit. The value is
	// free again once the claim's write fails or the claim expires.
	Pending bool
	// Err is the service's answer, or the package's own when a read showed
	// the row: Code EntityAlreadyExists, Status 409.
	Err *store.Error
}

func (e *DuplicateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "partition %s of table %s: ", quote(e.Partition), e.Table)
	if e.IndexName != "" {
		fmt.Fprintf(&b, "%s %s is taken", e.IndexName, quote(e.Value))
		if e.Holder != (Ref{}) {
			fmt.Fprintf(&b, " by %s", e.Holder)
		}
		if e.Pending {
			b.WriteString(" (its write is in flight)")
		}
	} else {
		fmt.Fprintf(&b, "%s: the row exists already", e.Row)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the service's error.
func (e *DuplicateError) Unwrap() error { return e.Err }

// Is matches ErrDuplicate.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// ChangedError reports that a conditional update or delete of one of the
// caller's rows failed: the row's ETag is no longer the one given, or the
// row is gone (Missing). Nothing was written. It matches ErrChanged, and
// through Err store.ErrPreconditionFailed (or store.ErrNotFound when
// Missing): read the row again before deciding to write.
type ChangedError struct {
	Table, Partition string
	Row
	// Missing is set when the row does not exist (404) rather than having
	// another ETag (412).
	Missing bool
	// Err is the service's answer.
	Err *store.Error
}

func (e *ChangedError) Error() string {
	what := "the row changed since it was read"
	if e.Missing {
		what = "the row does not exist"
	}
	return fmt.Sprintf("partition %s of table %s: %s: %s: %v", quote(e.Partition), e.Table, e.Row, what, e.Err)
}

// Unwrap returns the service's error.
func (e *ChangedError) Unwrap() error { return e.Err }

// Is matches ErrChanged.
func (e *ChangedError) Is(target error) bool { return target == ErrChanged }

// RowError reports any other refusal of one of the caller's rows (or of an
// outbox row): by the service, or by the store's check of the whole
// transaction before sending (a property map changed after its row was
// added). Nothing was written.
type RowError struct {
	Table, Partition string
	Row
	// Err is the refusal (its Source says who refused).
	Err *store.Error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("partition %s of table %s: %s was refused: %v", quote(e.Partition), e.Table, e.Row, e.Err)
}

// Unwrap returns the service's error.
func (e *RowError) Unwrap() error { return e.Err }

// classify turns the service's refusal of a transaction into the typed
// error of the action that failed.
func (t *Txn) classify(err error) error {
	var se *store.Error
	r0 := t.reserved()
	if !errors.As(err, &se) || se.Index < 0 || se.Index >= r0+t.Len() {
		return t.p.wrap("commit", err)
	}
	tbl, pk := t.p.table.Name(), t.p.pk
	i := se.Index
	switch {
	case i == 0:
		// The fence exists already (409), changed (412) or went away (404).
		if se.Status == 409 || se.Status == 412 || (se.Status == 404 && se.Code == store.CodeResourceNotFound) {
			return &ConflictError{Table: tbl, Partition: pk, Version: t.base.Version, Err: se}
		}
		return t.p.wrap("commit: the "+t.p.what()+" was refused", err)
	case i < r0:
		return t.p.wrap("commit: the tail row was refused", err)
	case i-r0 >= len(t.data):
		k := i - r0 - len(t.data)
		return &RowError{Table: tbl, Partition: pk, Row: Row{Index: -1, Kind: store.ActionInsert, RowKey: t.outbox[k].Entity.RowKey}, Err: se}
	}
	r := t.rows[i-r0]
	switch {
	case se.Code == store.CodeEntityAlreadyExists:
		return &DuplicateError{Table: tbl, Partition: pk, Row: r, Err: se}
	case se.Status == 412:
		return &ChangedError{Table: tbl, Partition: pk, Row: r, Err: se}
	case se.Status == 404 && se.Code == store.CodeResourceNotFound:
		return &ChangedError{Table: tbl, Partition: pk, Row: r, Missing: true, Err: se}
	}
	return &RowError{Table: tbl, Partition: pk, Row: r, Err: se}
}
