// Package store is tablekit's contract for Azure Table storage: the entity
// model, the closed set of property types, the Store interfaces a backend
// implements, the service's error codes and limits, and the service's rules
// of keys, names, values, entities and transactions, enforced in one place
// so that every backend, and the bulk writer before it sends, refuses the
// same input the same way.
//
// Two backends implement it: memstore, the in-memory reference engine, and
// store/azstore, the Azure backend built on the official SDK. The
// conformance suite in store/storetest proves both behave alike. What only
// a backend or a wrapper needs (the rules of requests, the settling of
// lost answers, continuation tokens, the probe of the typed lane) is in
// store/driver, which imports store; store never imports it.
package store

import (
	"context"
	"time"
)

// ETag is an entity's or blob's opaque version tag.
type ETag string

// ETagAny matches any version: If-Match * makes a write unconditional.
const ETagAny ETag = "*"

// Entity is one row of a table. Properties hold only the Go types TypeOf
// accepts; a nil value means "not stored", as a JSON null does on the wire.
type Entity struct {
	// PartitionKey and RowKey identify the entity; an empty string is a
	// valid key.
	PartitionKey string
	RowKey       string
	// Timestamp is set by the service on every write; it is ignored on write.
	Timestamp time.Time
	// ETag is set by the service on every write; pass it back as If-Match
	// for optimistic concurrency.
	ETag ETag
	// Properties are the custom properties by name (case-sensitive).
	Properties map[string]any
}

// Clone returns a deep copy of e: the map and every []byte are copied.
func (e Entity) Clone() Entity {
	c := e
	if e.Properties != nil {
		c.Properties = make(map[string]any, len(e.Properties))
		for k, v := range e.Properties {
			if b, ok := v.([]byte); ok && b != nil {
				v = append([]byte(nil), b...)
			}
			c.Properties[k] = v
		}
	}
	return c
}

// UpdateMode chooses between the service's two kinds of update.
type UpdateMode int

const (
	// Merge keeps the stored properties the request leaves out.
	Merge UpdateMode = iota
	// Replace removes the stored properties the request leaves out.
	Replace
)

// String names the mode.
func (m UpdateMode) String() string {
	if m == Replace {
		return "replace"
	}
	return "merge"
}

// GetOptions shape a point read.
type GetOptions struct {
	// Select, when non-empty, projects the entity to these properties (keys,
	// Timestamp and ETag always come back).
	Select []string
}

// Query is one page request: the service's own $filter, $select and $top,
// and the opaque continuation token from the previous page.
type Query struct {
	// Filter is an OData $filter string; build it with store/filter.
	Filter string
	// Select projects each entity; a named property the entity lacks comes
	// back absent from Properties.
	Select []string
	// Top caps the page size, 1 to 1,000; 0 means the service maximum.
	Top int
	// Continuation resumes after the previous page; "" starts at the beginning.
	Continuation string
}

// Page is one page of query results. A page may be short or even empty
// while Continuation is set: callers must follow Continuation until it is "".
type Page struct {
	// Entities are in (PartitionKey, RowKey) order.
	Entities []Entity
	// Continuation is "" on the last page; otherwise pass it in
	// Query.Continuation for the next.
	Continuation string
}

// ActionKind is the kind of one write in a transaction or bulk write.
type ActionKind int

const (
	// ActionInsert inserts; it fails with EntityAlreadyExists when the key exists.
	ActionInsert ActionKind = iota
	// ActionUpdateMerge merges into an existing entity (If-Match IfMatch).
	ActionUpdateMerge
	// ActionUpdateReplace replaces an existing entity (If-Match IfMatch).
	ActionUpdateReplace
	// ActionUpsertMerge inserts or merges.
	ActionUpsertMerge
	// ActionUpsertReplace inserts or replaces.
	ActionUpsertReplace
	// ActionDelete deletes an existing entity (If-Match IfMatch).
	ActionDelete
)

// String names the kind.
func (k ActionKind) String() string {
	switch k {
	case ActionInsert:
		return "insert"
	case ActionUpdateMerge:
		return "update-merge"
	case ActionUpdateReplace:
		return "update-replace"
	case ActionUpsertMerge:
		return "upsert-merge"
	case ActionUpsertReplace:
		return "upsert-replace"
	case ActionDelete:
		return "delete"
	}
	return "unknown"
}

// NeedsIfMatch reports whether the kind takes an If-Match condition.
func (k ActionKind) NeedsIfMatch() bool {
	return k == ActionUpdateMerge || k == ActionUpdateReplace || k == ActionDelete
}

// Action is one write of a transaction. For ActionDelete only the keys of
// Entity are used. IfMatch is required for updates and deletes: an ETag, or
// ETagAny for an unconditional write.
type Action struct {
	// Kind is the write: insert, update, upsert or delete.
	Kind ActionKind
	// Entity is the entity written, or the keys deleted.
	Entity Entity
	// IfMatch is the condition of an update or delete.
	IfMatch ETag
	// Source, when set, supplies the properties of an insert, update or
	// upsert in place of Entity.Properties, which must then be nil; Entity
	// still carries the keys. Only a TypedTable takes such actions (its
	// Transact and Write): WithProperties turns one into the Entity form.
	Source PropertySource
}

// ActionResult is the outcome of one successful action: the entity's new
// ETag (empty for a delete).
type ActionResult struct {
	// ETag is the entity's new ETag.
	ETag ETag
}

// TableInfo describes one table.
type TableInfo struct {
	// Name is the table's name in the case it was created with.
	Name string
}

// ListTablesOptions page through the tables of an account.
type ListTablesOptions struct {
	// Prefix keeps only tables whose name starts with it (case-sensitive, as
	// the service compares).
	Prefix string
	// Top caps the page size, 1 to 1,000; 0 means the service maximum.
	Top int
	// Continuation resumes after the previous page.
	Continuation string
}

// TablePage is one page of table names.
type TablePage struct {
	// Tables are in name order.
	Tables []TableInfo
	// Continuation is "" on the last page; otherwise pass it in
	// ListTablesOptions.Continuation for the next.
	Continuation string
}

// Store is one storage account: its tables, queues and blob containers.
// Implementations are safe for concurrent use.
type Store interface {
	// CreateTable creates a table; TableAlreadyExists (409) when a table of
	// that name exists in any letter case.
	CreateTable(ctx context.Context, name string) error
	// CreateTableIfNotExists creates a table unless it exists, and reports
	// whether it created it.
	CreateTableIfNotExists(ctx context.Context, name string) (created bool, err error)
	// DeleteTable deletes a table and every entity in it.
	DeleteTable(ctx context.Context, name string) error
	// ListTables returns one page of tables in name order.
	ListTables(ctx context.Context, opts ListTablesOptions) (TablePage, error)
	// Table returns a handle to a table; it does no I/O.
	Table(name string) Table
	// Queue returns a handle to a queue; it does no I/O.
	Queue(name string) Queue
	// Container returns a handle to a blob container; it does no I/O.
	Container(name string) Container
}

// Table is the entity API of one table. Every method validates its input
// with the service's rules before doing anything.
type Table interface {
	// Name returns the table's name as given to Store.Table.
	Name() string
	// Get reads one entity; ResourceNotFound (404) when it is missing.
	Get(ctx context.Context, pk, rk string, opts *GetOptions) (Entity, error)
	// Insert adds a new entity; EntityAlreadyExists (409) when the key exists.
	Insert(ctx context.Context, e Entity) (ETag, error)
	// Update merges or replaces an existing entity. ifMatch is the ETag the
	// caller read, or ETagAny for an unconditional update; a stale ETag
	// fails with UpdateConditionNotSatisfied (412).
	Update(ctx context.Context, e Entity, mode UpdateMode, ifMatch ETag) (ETag, error)
	// Upsert inserts the entity or merges/replaces the existing one.
	Upsert(ctx context.Context, e Entity, mode UpdateMode) (ETag, error)
	// Delete removes an entity; ifMatch as for Update.
	Delete(ctx context.Context, pk, rk string, ifMatch ETag) error
	// Query returns one page of entities in (PartitionKey, RowKey) order.
	Query(ctx context.Context, q Query) (Page, error)
	// Transact runs an entity group transaction: 1 to 100 actions on one
	// partition, all or nothing. On failure the *Error's Index names the
	// failing action.
	Transact(ctx context.Context, actions []Action) ([]ActionResult, error)
}
