// Package model declares an entity type once and plans every write of it
// from the declaration: the entity row, its copies in the entity's
// partition (unique and non-unique indexes) and its change log commit in
// one partition transaction (core/partition, through
// core/eventual's Write); its copies in other partitions or tables
// (unique and non-unique indexes keyed by value) are carried out by the
// eventual engine from an outbox row of that same transaction, under the
// entity's version, so a copy is only ever replaced by a newer one and
// removed only when the entity no longer holds it.
//
// A type's struct holds its own keys: the field tagged pk is the
// partition, the field tagged rk the entity's id (never a prefix). The
// model derives every RowKey from them with keys.Join and a kind prefix:
//
//	entity                    Join("e", id)
//	unique index (partition)  Join("u", index, value)
//	index (partition)         Join("i", index, value, id)
//	change log                Join("l", id, inverted version)
//	list (index entity)       Join("n", list, value, segment bound)
//	move receipt              Join("a", id, source, version)
//
// (during a Move the entity's own key holds the marker of the entity in
// flight at the source, and the reservation at the destination) and, in
// the index table (the index's In, or Options.IndexTable, default the
// entity's table), partition Join("x", index, value) with RowKey "u" for a unique
// value and Join(table, pk, id) for a non-unique one.
//
// See docs/patterns/model.md for what each write does and costs, how a
// lookup through another partition reads its own writes, and the limits.
package model

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Properties the model keeps on the rows it writes besides the entity's
// own (eventual.VersionProperty records the version on every row).
const (
	// OpProperty names what a log row records: "insert", "update",
	// "delete".
	OpProperty = "TkOp"
	// IDProperty holds the entity's id on its index copies in its own
	// partition.
	IDProperty = "TkID"
	// SourceTableProperty, SourcePartitionProperty and SourceRowProperty
	// name the entity a copy or claim in the index table belongs to.
	SourceTableProperty     = "TkSrcTable"
	SourcePartitionProperty = "TkSrcPK"
	SourceRowProperty       = "TkSrcRK"
	// ClaimProperty and ClaimedProperty mark a claim: the token of the
	// write that claimed the value and when.
	ClaimProperty   = "TkClaim"
	ClaimedProperty = "TkClaimed"
)

// ErrHeldTwice matches the error of a copy step that finds the value held
// by another entity that still holds it: two entities committed one
// unique value (a claim outlived its lease under a slow writer). It is a
// conflict of the data: do not retry, change one of the entities.
var ErrHeldTwice = errors.New("model: two entities hold one unique value")

// Options tune a Model; nil takes the defaults.
type Options struct {
	// Engine carries out the writes in other partitions and tables, and
	// runs every write of the entity's partition (Engine.Write). It is
	// required. Define registers the model's kind of step on it: every
	// process that works the engine's queue must Define the same models
	// on its engine.
	Engine *eventual.Engine
	// IndexTable holds the copies of the indexes declared Global; default
	// the entity's table. An index declared with In keeps its own.
	IndexTable string
	// ClaimLease is how long a claim of a unique value by a write that
	// has not committed keeps other entities off the value (default 1
	// minute). A writer slower than this can lose the value to another
	// entity; the copy step then reports ErrHeldTwice.
	ClaimLease time.Duration
	// Now is the clock of claims and of blob ages (default time.Now).
	Now func() time.Time
	// MaxBlobSize bounds the value of a Blob property (default
	// DefaultMaxBlobSize, at most MaxBlobSizeLimit): a larger value is
	// refused before anything is written.
	MaxBlobSize int64
	// BlobGrace is how old a blob no entity names must be before
	// SweepBlobs removes it (default DefaultBlobGrace). A write commits
	// within BlobGrace/2 of writing its blobs, or fails with
	// ErrBlobStale, so a sweep never removes a blob a write is about to
	// name while the sweeper's clock is within BlobGrace/2 of the
	// service's.
	BlobGrace time.Duration
	// ListSegmentUnits bounds a segment of a List: a segment whose ids
	// (joined by line breaks) would pass it is split in two by the write
	// that grows it (default and at most MaxListUnits). A write rewrites
	// one segment, so a smaller one makes writes cheaper and lists shorter
	// (a value's list spans at most MaxListSegments segments).
	ListSegmentUnits int
}

// Feature is one thing a declaration adds to its type: an index, a list, a log,
// a copy, a blob.
type Feature[T any] struct {
	kind   featureKind
	name   string
	value  func(*T) string
	global bool
	unique bool
	// a denormalized copy (CopyTo, CopyToEach): its tables, targets,
	// properties, renames (Rename) and, from Define, the target name of
	// each property (outs, beside props)
	tables  []string
	targets func(*T) []store.RowRef
	props   []string
	renames [][2]string
	outs    []string
	// the properties an index's copies hold (Project); nil: all
	proj []string
	// the table of a global index's copies (In; at Define, table)
	table string
	in    string
	hasIn bool
	// a property kept in a blob (Blob)
	container string
	bytes     func(*T) *[]byte
}

type featureKind int

const (
	featIndex featureKind = iota + 1
	featLog
	featCopy
	featBlob
	featList
)

// Unique declares a unique index within the entity's partition: two
// entities of one partition cannot hold one value; its copy is written in
// the same transaction as the entity. An empty value is not indexed.
func Unique[T any](name string, value func(*T) string) Feature[T] {
	return Feature[T]{kind: featIndex, name: name, value: value, unique: true}
}

// Index declares a non-unique index within the entity's partition.
func Index[T any](name string, value func(*T) string) Feature[T] {
	return Feature[T]{kind: featIndex, name: name, value: value}
}

// GlobalUnique declares an index unique across every partition, its
// copies in the index table, one partition per value, written by the
// engine; a value is claimed before the entity write.
func GlobalUnique[T any](name string, value func(*T) string) Feature[T] {
	return Feature[T]{kind: featIndex, name: name, value: value, unique: true, global: true}
}

// GlobalIndex declares a non-unique index across every partition, its
// copies in the index table, written by the engine.
func GlobalIndex[T any](name string, value func(*T) string) Feature[T] {
	return Feature[T]{kind: featIndex, name: name, value: value, global: true}
}

// Log declares a change log: every write appends a row in the entity's
// partition, in the same transaction; Model.Log reads it newest first.
func Log[T any]() Feature[T] { return Feature[T]{kind: featLog, name: "log"} }

// CopyTo declares a denormalized copy onto one row: the entity is the
// source of properties props held by the row target maps it to in table
// (a row of someone else's: the model never creates or deletes it). It is
// CopyToEach with one table and at most one target: a target of ("", "")
// means none, the entity is copied nowhere (an employee who manages no
// department). See CopyToEach for what the engine writes.
func CopyTo[T any](name, table string, target func(*T) (pk, rk string), props ...string) Feature[T] {
	var targets func(*T) []store.RowRef
	if target != nil {
		targets = func(v *T) []store.RowRef {
			pk, rk := target(v)
			if pk == "" && rk == "" {
				return nil
			}
			return []store.RowRef{{Table: table, PartitionKey: pk, RowKey: rk}}
		}
	}
	return CopyToEach(name, []string{table}, targets, props...)
}

// ErrOtherSource matches the error of a copy step whose target row holds
// the copy of another entity that still maps to it: a conflict of the
// data, never retried into success; change one of the entities.
var ErrOtherSource = errors.New("model: the target row holds another source's copy")

// Model is a declared entity type over one table.
type Model[T any] struct {
	st     store.Store
	table  string
	itable string
	eng    *eventual.Engine
	o      Options
	step   eventual.StepKind
	specs  []*Feature[T]
	byName map[string]*Feature[T]
	log    bool
	blobs  []*Feature[T] // Blob features, in declaration order
	lists  []*Feature[T] // List features, in declaration order
	ids    *keys.IDGenerator
}

var indexName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

// Define declares entity type T stored in table, with its features. It
// refuses, naming it, a type the mapper cannot encode, a missing engine,
// a bad or repeated index name and a bad table name, and registers the
// model's kind of step on the engine. It does no I/O.
func Define[T any](st store.Store, table string, opts *Options, features ...Feature[T]) (*Model[T], error) {
	if st == nil || (reflect.ValueOf(st).Kind() == reflect.Pointer && reflect.ValueOf(st).IsNil()) {
		return nil, refuse("the store is nil")
	}
	if err := store.ValidateTableName(table); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Engine == nil {
		return nil, refuse("Options.Engine is nil: the model writes through an eventual.Engine")
	}
	if o.IndexTable == "" {
		o.IndexTable = table
	}
	if err := store.ValidateTableName(o.IndexTable); err != nil {
		return nil, fmt.Errorf("model: Options.IndexTable: %w", err)
	}
	if o.ClaimLease < 0 {
		return nil, refuse("Options.ClaimLease %s is negative", o.ClaimLease)
	}
	if o.ClaimLease == 0 {
		o.ClaimLease = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := blobDefaults(&o); err != nil {
		return nil, err
	}
	if err := segmentDefaults(&o); err != nil {
		return nil, err
	}
	var zero T
	if _, err := mapper.Encode(&zero); err != nil {
		return nil, fmt.Errorf("model: %T: %w", zero, err)
	}
	m := &Model[T]{st: st, table: table, itable: o.IndexTable, eng: o.Engine, o: o,
		step: eventual.StepKind("model:" + table), byName: map[string]*Feature[T]{}}
	for i := range features {
		f := features[i]
		if err := checkProjection(&f); err != nil {
			return nil, err
		}
		if f.renames != nil && f.kind != featCopy {
			return nil, refuse("%s: Rename applies to a copy (CopyTo, CopyToEach) only", f.name)
		}
		if err := m.tableOf(&f); err != nil {
			return nil, err
		}
		switch f.kind {
		case featLog:
			if m.log {
				return nil, refuse("the log is declared twice")
			}
			m.log = true
		case featCopy:
			if err := m.addCopy(&f); err != nil {
				return nil, err
			}
		case featBlob:
			if err := m.addBlob(&f); err != nil {
				return nil, err
			}
		case featList:
			if err := m.addList(&f); err != nil {
				return nil, err
			}
		case featIndex:
			if !indexName.MatchString(f.name) {
				return nil, refuse("index name %q: 1 to 63 letters, digits or _, starting with a letter", f.name)
			}
			if f.value == nil {
				return nil, refuse("index %s has no value function", f.name)
			}
			if m.byName[f.name] != nil {
				return nil, refuse("index %s is declared twice", f.name)
			}
			m.byName[f.name] = &f
			m.specs = append(m.specs, &f)
		default:
			return nil, refuse("feature %d was not made by this package", i)
		}
	}
	if err := m.eng.Handle(m.step, eventual.StepHandler{Check: m.checkStep, Run: m.runStep}); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := m.handleBlobs(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m.register()
	return m, nil
}

// Table returns the entity's table.
func (m *Model[T]) Table() string { return m.table }

// entityKey is the RowKey of entity id.
func entityKey(id string) (string, error) { return keys.Join("e", id) }

// localKey is the RowKey of the copy of index f for value in the entity's
// partition.
func localKey[T any](f *Feature[T], value, id string) (string, error) {
	if f.unique {
		return keys.Join("u", f.name, value)
	}
	return keys.Join("i", f.name, value, id)
}

// at is where a copy in the index table lives.
type at struct{ pk, rk string }

// globalAt is where the copy of index f for value of entity (pk, id)
// lives in the index table.
func (m *Model[T]) globalAt(f *Feature[T], value, pk, id string) (at, error) {
	p, err := keys.Join("x", f.name, value)
	if err != nil {
		return at{}, err
	}
	if f.unique {
		return at{p, "u"}, nil
	}
	rk, err := keys.Join(m.table, pk, id)
	return at{p, rk}, err
}

// logKey is the RowKey of the log row of entity id at version v: newest
// first.
func logKey(id string, v int64) (string, error) {
	inv, err := keys.PadUint(uint64(math.MaxInt64-v), 19)
	if err != nil {
		return "", err
	}
	return keys.Join("l", id, inv)
}

// refuse builds a refusal of the model's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "model: "+format, args...)
	e.Source = store.SourceClient
	return e
}
