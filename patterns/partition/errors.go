package partition

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// Sentinels for errors.Is; the typed errors below match them, so a caller
// can branch on meaning without knowing which action of the transaction
// failed or what the service answered.
var (
	// ErrConflict matches a ConflictError: another writer committed to
	// the partition after the state the transaction began from.
	ErrConflict = errors.New("partition: a concurrent writer committed first")
	// ErrDuplicate matches a DuplicateError: an insert met an existing row.
	ErrDuplicate = errors.New("partition: row exists already")
	// ErrChanged matches a ChangedError: a conditional write met a row
	// that changed or went away since it was read.
	ErrChanged = errors.New("partition: row changed since it was read")
)

// Row identifies one of the caller's data rows in a transaction.
type Row struct {
	// Label is the name the caller gave the row ("employee", "index
	// email"); it is "" for an outbox row.
	Label string
	// Index is the row's position among the caller's data rows, in the
	// order they were added (-1 for an outbox row).
	Index int
	// Kind is the write.
	Kind store.ActionKind
	// RowKey is the row's key.
	RowKey string
}

func (r Row) String() string {
	if r.Index < 0 {
		return fmt.Sprintf("outbox row %s", quote(r.RowKey))
	}
	return fmt.Sprintf("%s (%s of RowKey %s)", labelText(r.Label), r.Kind, quote(r.RowKey))
}

// ConflictError reports that the fence refused the transaction: another
// writer committed to the partition after Version, the state this one was
// built on. Nothing was written. Read again (or Begin again) and retry.
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

// DuplicateError reports that an insert of one of the caller's rows met an
// existing row: for an index copy, its value is taken. Nothing was written.
type DuplicateError struct {
	Table, Partition string
	Row
	// Err is the service's answer (EntityAlreadyExists).
	Err *store.Error
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("partition %s of table %s: %s: the row exists already: %v", quote(e.Partition), e.Table, e.Row, e.Err)
}

// Unwrap returns the service's error.
func (e *DuplicateError) Unwrap() error { return e.Err }

// Is matches ErrDuplicate.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// ChangedError reports that a conditional update or delete of one of the
// caller's rows failed: the row's ETag is no longer the one given, or the
// row is gone (Missing). Nothing was written.
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
	if !errors.As(err, &se) || se.Index < 0 || se.Index >= ReservedActions+t.Len() {
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
		return t.p.wrap("commit: the fence row was refused", err)
	case i == 1:
		return t.p.wrap("commit: the tail row was refused", err)
	case i-ReservedActions >= len(t.data):
		k := i - ReservedActions - len(t.data)
		return &RowError{Table: tbl, Partition: pk, Row: Row{Index: -1, Kind: store.ActionInsert, RowKey: t.outbox[k].Entity.RowKey}, Err: se}
	}
	r := t.rows[i-ReservedActions]
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
