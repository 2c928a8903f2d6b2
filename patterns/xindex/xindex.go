package xindex

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Properties every copy (and claim) row carries besides the entity's own.
const (
	// SourcePartitionProperty and SourceRowProperty hold the keys of the
	// entity the row belongs to: its owner.
	SourcePartitionProperty = claims.SourcePartitionProperty
	SourceRowProperty       = claims.SourceRowProperty
	// ClaimProperty holds the token of the write that claimed a unique
	// value, and ClaimedProperty when; a claim row has version 0 and no
	// copied properties until the worker writes the copy over it.
	ClaimProperty   = claims.ClaimProperty
	ClaimedProperty = claims.ClaimedProperty
)

// The version a copy was made from is eventual.VersionProperty ("TkVersion").

var (
	// ErrHeldTwice matches a *HeldTwiceError: two entities hold one
	// unique value. It is a permanent conflict of the data, never a race:
	// it matches neither partition.ErrConflict nor store.ErrTransient. Do
	// not retry: change the data (one of the entities gives the value up).
	ErrHeldTwice = errors.New("xindex: two entities hold one unique value")
	// ErrDangling matches the error of a fresh lookup whose copy leads to an
	// entity that is gone or no longer holds the value.
	ErrDangling = errors.New("xindex: the copy's entity no longer holds the value")
)

// A unique value another entity holds (or is claiming) is refused with a
// *partition.DuplicateError (partition.ErrDuplicate, store.ErrAlreadyExists):
// IndexName and Value name the index and the value, Table and Partition
// the copy's, Holder the entity holding it, Pending a claim whose write
// may still commit.

// Ref names an entity: its PartitionKey and RowKey in the indexed table.
// It is store.Key, tablekit's one key-pair type.
type Ref = store.Key

// HeldTwiceError reports, from a worker, a unique value whose copy belongs
// to another entity that still holds the value: the two entities were
// written at once and the claim did not keep them apart. The first holder
// keeps the copy; the step fails (and is retried, then poisoned) until
// one of the entities gives the value up. Do not retry: change the data.
// It matches ErrHeldTwice and, through Err, store.ErrAlreadyExists; never
// partition.ErrConflict, partition.ErrDuplicate or store.ErrTransient.
type HeldTwiceError struct {
	// Table and Partition hold the copy; IndexName and Value name the
	// index and the value.
	Table, Partition, IndexName, Value string
	// Holder keeps the copy; Claimant is the entity whose step failed.
	Holder, Claimant Ref
	// Err is the package's refusal of the copy: Code EntityAlreadyExists,
	// Status 409, Source store.SourceClient (nothing was written).
	Err *store.Error
}

// Error names both entities.
func (e *HeldTwiceError) Error() string {
	return fmt.Sprintf("xindex: %s %q (partition %q of table %s) is held by %s and also by %s: do not retry, change one of them",
		e.IndexName, e.Value, e.Partition, e.Table, e.Holder, e.Claimant)
}

// Unwrap returns the refusal.
func (e *HeldTwiceError) Unwrap() error { return e.Err }

// Is matches ErrHeldTwice.
func (e *HeldTwiceError) Is(target error) bool { return target == ErrHeldTwice }

// DanglingError reports a copy whose entity is gone or no longer holds
// the value: the worker has not yet removed it.
type DanglingError struct {
	Index, Value string
	// Source is the entity the copy refers to; Gone is set when it does
	// not exist.
	Source Ref
	Gone   bool
	// CopyVersion is the version the copy was made from; SourceVersion
	// the entity's (0 when gone).
	CopyVersion, SourceVersion int64
}

// Error names the copy's entity and both versions.
func (e *DanglingError) Error() string {
	if e.Gone {
		return fmt.Sprintf("xindex: %s %q leads to %s, which is gone (copy of version %d)", e.Index, e.Value, e.Source, e.CopyVersion)
	}
	return fmt.Sprintf("xindex: %s %q leads to %s, which no longer holds it (copy of version %d, entity at %d)", e.Index, e.Value, e.Source, e.CopyVersion, e.SourceVersion)
}

// Unwrap returns a ResourceNotFound (404) naming the value, so store.Code
// and store.Status work on it.
func (e *DanglingError) Unwrap() error {
	se := store.Errorf(store.CodeResourceNotFound, 404, "xindex: %s %q: the entity %s no longer holds the value", e.Index, e.Value, e.Source)
	se.Source = store.SourceClient
	return se
}

// Is matches ErrDangling and store.ErrNotFound: the value is not found.
func (e *DanglingError) Is(target error) bool {
	return target == ErrDangling || target == store.ErrNotFound
}

// Spec declares one secondary index of T.
type Spec[T any] struct {
	name      string
	value     func(*T) string
	unique    bool
	project   []string
	table     string
	partition func(pk string) string
}

// Unique declares an index whose values identify one entity (an email
// address): a second entity with the value is refused
// (*partition.DuplicateError).
func Unique[T any](name string, value func(*T) string) Spec[T] {
	return Spec[T]{name: name, value: value, unique: true}
}

// NonUnique declares an index whose values many entities share (a last
// name): each entity has its own copy, keyed by the value and the
// entity's keys.
func NonUnique[T any](name string, value func(*T) string) Spec[T] {
	return Spec[T]{name: name, value: value}
}

// Project makes the index's copies hold only these properties (and the
// entity's keys): smaller rows; FindFresh reads the rest. Without it a
// copy holds every property.
func (s Spec[T]) Project(props ...string) Spec[T] {
	s.project = append([]string{}, props...)
	return s
}

// InTable puts the index's copies in another table (created by the
// caller); by default they share the entities' table.
func (s Spec[T]) InTable(table string) Spec[T] {
	s.table = table
	return s
}

// InPartition sets the partition of the copies of the entities of
// partition pk. The default is the index name, "_" and pk ("email_Sales"):
// one index partition per entity partition. A function returning one
// constant ("email") makes the index span every partition, and a unique
// value unique across them.
func (s Spec[T]) InPartition(fn func(pk string) string) Spec[T] {
	s.partition = fn
	return s
}

// Options tune a Table. The zero value gives the defaults.
type Options struct {
	// ClaimLease is how long a unique value's claim shuts other entities
	// out while its entity does not hold the value (the writer crashed
	// before its write, or the write is slow): after it another entity
	// may take the value over, and Reap removes it. Default 1 minute; keep
	// it well above the time one write takes.
	ClaimLease time.Duration
	// Now is the clock claims are stamped and aged with (default
	// time.Now).
	Now func() time.Time
}

// Table is a table of T whose entities carry secondary indexes in other
// partitions or tables, kept by the workers of an eventual engine. It is
// safe for concurrent use. Build the same Table (same indexes) on the
// engine of every process that runs its workers: New registers the
// worker's step handler on the engine.
type Table[T any] struct {
	eng    *eventual.Engine
	st     store.Store
	name   string
	repo   *mapper.Repository[T]
	specs  []Spec[T]
	prefix string
	o      Options
	kind   eventual.StepKind
	rules  *claims.Rules // the judgement of the claim and copy rows
}

// New returns the indexed table name of the engine's store for T, and
// registers the step handler of its copies on eng. T must declare a kind
// with a RowKey prefix (mapper.Kind): the entities' partitions also hold
// the engine's fence, tail and outbox rows, and the prefix keeps every
// read of T away from them. It fails, naming the value, for an index
// name that is empty, repeated or not letters, digits and underscores, a
// copy key prefix that would overlap T's prefix in a shared table, a
// projection naming a property T lacks, a bad table name, a nil value
// function, or a second Table of the same entity table on one engine.
func New[T any](eng *eventual.Engine, table string, options *Options, specs ...Spec[T]) (*Table[T], error) {
	if eng == nil {
		return nil, refuse("the engine is nil")
	}
	var opts Options
	if options != nil {
		opts = *options
	}
	if err := store.ValidateTableName(table); err != nil {
		return nil, err
	}
	props, err := mapper.PropertyNames[T]()
	if err != nil {
		return nil, err
	}
	kind := mapper.KindOf[T]()
	if kind == nil || kind.Prefix == "" {
		var zero T
		return nil, refuse("%T declares no RowKey prefix: declare one with TableKind (mapper.Kind{Prefix: ...}) so that reads of its entities never meet the engine's rows beside them", zero)
	}
	if len(specs) == 0 {
		return nil, refuse("no index declared")
	}
	if opts.ClaimLease < 0 {
		return nil, refuse("Options.ClaimLease is %s: it must be 0 (the default) or positive", opts.ClaimLease)
	}
	if opts.ClaimLease == 0 {
		opts.ClaimLease = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	seen := map[string]bool{}
	specs = append([]Spec[T](nil), specs...)
	for i := range specs {
		s := &specs[i]
		if !naming.Valid(s.name) {
			return nil, refuse("index name %q must be 1 to 32 letters, digits and underscores", s.name)
		}
		if seen[s.name] {
			return nil, refuse("index %q is declared twice", s.name)
		}
		seen[s.name] = true
		if s.value == nil {
			return nil, refuse("index %q has no value function", s.name)
		}
		if s.table == "" {
			s.table = table
		} else if err := store.ValidateTableName(s.table); err != nil {
			return nil, fmt.Errorf("xindex: index %q: %w", s.name, err)
		}
		if s.partition == nil {
			name := s.name
			s.partition = func(pk string) string { return name + "_" + pk }
		}
		copyPrefix, _ := keys.Join(s.name)
		if strings.EqualFold(s.table, table) && (strings.HasPrefix(copyPrefix, kind.Prefix) || strings.HasPrefix(kind.Prefix, copyPrefix)) {
			return nil, refuse("index %q: its copies' RowKeys (%q...) would overlap the entities' prefix %q in table %s", s.name, copyPrefix, kind.Prefix, table)
		}
		for _, p := range s.project {
			if !slices.Contains(props, p) {
				return nil, refuse("index %q projects %q, which is not a property of the type (properties: %s)", s.name, p, strings.Join(props, ", "))
			}
		}
	}
	x := &Table[T]{eng: eng, st: eng.Store(), name: table, repo: mapper.NewRepository[T](eng.Store(), table),
		specs: specs, prefix: kind.Prefix, o: opts, kind: eventual.StepKind("xindex:" + table)}
	x.rules = x.newRules()
	if err := eng.Handle(x.kind, eventual.StepHandler{Check: x.checkStep, Run: x.runStep}); err != nil {
		return nil, fmt.Errorf("xindex: table %s: %w", table, err)
	}
	return x, nil
}

// refuse builds a refusal of tablekit's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "xindex: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// refuseFor builds a refusal with its cause.
func refuseFor(cause error, format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "xindex: "+format, args...)
	e.Source = store.SourceClient
	e.Err = cause
	return e
}

// Repository returns the typed repository of the entities, for reads
// (write through the Table so the copies follow).
func (x *Table[T]) Repository() *mapper.Repository[T] { return x.repo }

// spec returns the index named name.
func (x *Table[T]) spec(name string) (*Spec[T], error) {
	for i := range x.specs {
		if x.specs[i].name == name {
			return &x.specs[i], nil
		}
	}
	names := make([]string, len(x.specs))
	for i, s := range x.specs {
		names[i] = s.name
	}
	return nil, refuse("no index %q (indexes: %s)", name, strings.Join(names, ", "))
}
