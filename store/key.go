package store

import (
	"context"
	"fmt"
)

// Key names an entity by its keys, within a table the context gives: the
// holder of a unique value, the source of a copy, an entity a list holds.
// It is tablekit's one key-pair type; the packages that name an entity
// this way (partition.Ref) are aliases of it.
type Key struct {
	PartitionKey, RowKey string
}

// String formats the keys for messages: ("pk", "rk").
func (k Key) String() string { return fmt.Sprintf("(%q, %q)", k.PartitionKey, k.RowKey) }

// RowRef names a row of a table: its table and its keys. It is tablekit's
// one table-qualified reference; eventual.Ref (the source of an
// operation) and denorm.Target (a row a copy is written to) are aliases
// of it.
type RowRef struct {
	Table, PartitionKey, RowKey string
}

// String formats the reference for messages: Table ("pk", "rk").
func (r RowRef) String() string {
	return fmt.Sprintf("%s (%q, %q)", r.Table, r.PartitionKey, r.RowKey)
}

// Read reads the row r names from st as stored. A row that does not exist
// is not found (found false, no error); a missing table is an error
// (TableNotFound), so that a caller never takes it for a deleted row. The
// error is the store's: the caller says what it was reading.
func (r RowRef) Read(ctx context.Context, st Store) (row Entity, found bool, err error) {
	if st == nil {
		return Entity{}, false, invalid("store: reading %s: the store is nil", r)
	}
	if ctx == nil {
		return Entity{}, false, invalid("store: reading %s: the context is nil", r)
	}
	row, err = st.Table(r.Table).Get(ctx, r.PartitionKey, r.RowKey, nil)
	if EntityNotFound(err) {
		return Entity{}, false, nil
	}
	if err != nil {
		return Entity{}, false, err
	}
	return row, true, nil
}
