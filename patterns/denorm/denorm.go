package denorm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Properties a target row carries per relation, besides the copied ones.
const (
	// SourcePropertyPrefix + the relation's name holds the source the
	// target's copy came from: keys.Join(PartitionKey, RowKey).
	SourcePropertyPrefix = "TkDnSrc_"
	// VersionPropertyPrefix + the relation's name holds the source
	// version the copy was made from (or removed at).
	VersionPropertyPrefix = "TkDnVer_"
)

// SourceProperty is the property of a target naming the source of
// relation rel.
func SourceProperty(rel string) string { return SourcePropertyPrefix + rel }

// VersionProperty is the property of a target holding the source version
// of relation rel.
func VersionProperty(rel string) string { return VersionPropertyPrefix + rel }

// ErrOtherSource matches an *OtherSourceError: a write (or a worker step)
// that would give a target a second source under one relation. It is a
// permanent conflict of the data, never a race: it matches neither
// partition.ErrConflict nor store.ErrTransient. Do not retry: change the
// data (one of the sources stops mapping to the target).
var ErrOtherSource = errors.New("denorm: the target has another source")

// Ref names a source entity: its keys in the source table. It is
// store.Key, tablekit's one key-pair type.
type Ref = store.Key

// Target names a target row. Table "" is the source's table. It is
// store.RowRef, tablekit's one table-qualified reference.
type Target = store.RowRef

// OtherSourceError reports a target that another source still maps to
// under the same relation. Nothing was written for the target. Do not
// retry: change the data. It matches ErrOtherSource and, through Err,
// store.ErrAlreadyExists; never partition.ErrConflict,
// partition.ErrDuplicate or store.ErrTransient.
type OtherSourceError struct {
	Relation string
	Target   Target
	// Holder is the source whose copy the target holds; Claimant the one
	// refused.
	Holder, Claimant Ref
	// Err is the package's refusal of the target: Code
	// EntityAlreadyExists, Status 409, Source store.SourceClient.
	Err *store.Error
}

// otherSource is the refusal of target t of relation rel, which holder
// still maps to, for claimant.
func otherSource(rel string, t Target, holder, claimant Ref) *OtherSourceError {
	se := store.Errorf(store.CodeEntityAlreadyExists, 409, "denorm: target %s holds another source's copy", t)
	se.Source = store.SourceClient
	return &OtherSourceError{Relation: rel, Target: t, Holder: holder, Claimant: claimant, Err: se}
}

// Error names the relation, the target and both sources.
func (e *OtherSourceError) Error() string {
	return fmt.Sprintf("denorm: relation %s: target %s holds the copy of %s, which still maps to it; %s maps to it too: do not retry, change one of them",
		e.Relation, e.Target, e.Holder, e.Claimant)
}

// Unwrap returns the refusal.
func (e *OtherSourceError) Unwrap() error { return e.Err }

// Is matches ErrOtherSource.
func (e *OtherSourceError) Is(target error) bool { return target == ErrOtherSource }

// field is one copied property.
type field struct{ from, to string }

// Rel declares one relation of source type S: the targets a source maps
// to and the properties copied into them.
type Rel[S any] struct {
	name    string
	targets func(*S) []Target
	fields  []field
}

// Copy declares relation name: targets returns the rows a source's
// properties are copied into (none for a source that maps to nothing).
// Add the properties with Field.
func Copy[S any](name string, targets func(*S) []Target) Rel[S] {
	return Rel[S]{name: name, targets: targets}
}

// Field copies the source property from into the target property to.
func (r Rel[S]) Field(from, to string) Rel[S] {
	r.fields = append(append([]field(nil), r.fields...), field{from: from, to: to})
	return r
}

// Source is a table of source entities S whose writes carry their
// denormalized properties to the targets they map to. It is safe for
// concurrent use. Build the same Source (same relations) on the engine of
// every process that runs its workers: New registers the worker's step
// handler on the engine.
type Source[S any] struct {
	eng    *eventual.Engine
	st     store.Store
	name   string
	repo   *mapper.Repository[S]
	rels   []Rel[S]
	prefix string
	kind   eventual.StepKind
}

// New returns the source table name of the engine's store for S and
// registers its step handler on eng. S must declare a kind with a RowKey
// prefix (mapper.Kind): the source partitions also hold the engine's
// rows. It fails, naming the value, for a relation name that is empty,
// repeated or not letters, digits and underscores, a relation without
// fields or targets, a field naming a property S lacks, a target
// property the service refuses or one two fields write, and a second
// Source of the same table on one engine.
func New[S any](eng *eventual.Engine, table string, rels ...Rel[S]) (*Source[S], error) {
	if eng == nil {
		return nil, refuse("the engine is nil")
	}
	if err := store.ValidateTableName(table); err != nil {
		return nil, err
	}
	props, err := mapper.PropertyNames[S]()
	if err != nil {
		return nil, err
	}
	kind := mapper.KindOf[S]()
	if kind == nil || kind.Prefix == "" {
		var zero S
		return nil, refuse("%T declares no RowKey prefix: declare one with TableKind (mapper.Kind{Prefix: ...}) so that reads of its entities never meet the engine's rows beside them", zero)
	}
	if len(rels) == 0 {
		return nil, refuse("no relation declared")
	}
	seen := map[string]bool{}
	written := map[string]string{}
	for _, r := range rels {
		if !naming.Valid(r.name) {
			return nil, refuse("relation name %q must be 1 to 32 letters, digits and underscores", r.name)
		}
		if seen[r.name] {
			return nil, refuse("relation %q is declared twice", r.name)
		}
		seen[r.name] = true
		if r.targets == nil {
			return nil, refuse("relation %q has no target function", r.name)
		}
		if len(r.fields) == 0 {
			return nil, refuse("relation %q copies no field: add them with Field", r.name)
		}
		for _, f := range r.fields {
			if !slices.Contains(props, f.from) {
				return nil, refuse("relation %q copies %q, which is not a property of the type (properties: %s)", r.name, f.from, strings.Join(props, ", "))
			}
			if err := store.ValidatePropertyName(f.to); err != nil {
				return nil, fmt.Errorf("denorm: relation %q: target property %q: %w", r.name, f.to, err)
			}
			if store.ReservedProperty(f.to) {
				return nil, refuse("relation %q: target property %q starts with Tk, which tablekit keeps for its own properties", r.name, f.to)
			}
			if other, dup := written[f.to]; dup {
				return nil, refuse("relation %q: target property %q is written by %s already", r.name, f.to, other)
			}
			written[f.to] = fmt.Sprintf("relation %q (field %q)", r.name, f.from)
		}
	}
	d := &Source[S]{eng: eng, st: eng.Store(), name: table, repo: mapper.NewRepository[S](eng.Store(), table),
		rels: append([]Rel[S](nil), rels...), prefix: kind.Prefix, kind: eventual.StepKind("denorm:" + table)}
	if err := eng.Handle(d.kind, eventual.StepHandler{Check: d.checkStep, Run: d.runStep}); err != nil {
		return nil, fmt.Errorf("denorm: table %s: %w", table, err)
	}
	return d, nil
}

// Repository returns the typed repository of the sources, for reads
// (write through the Source so the targets follow).
func (d *Source[S]) Repository() *mapper.Repository[S] { return d.repo }

// rel returns the relation named name.
func (d *Source[S]) rel(name string) (*Rel[S], error) {
	for i := range d.rels {
		if d.rels[i].name == name {
			return &d.rels[i], nil
		}
	}
	return nil, refuse("no relation %q", name)
}

// targetsOf returns the targets of v under r, each checked, with the
// source's table filled in.
func (d *Source[S]) targetsOf(r *Rel[S], v *S, self Ref) ([]Target, error) {
	if v == nil {
		return nil, nil
	}
	ts := r.targets(v)
	out := make([]Target, 0, len(ts))
	seen := map[Target]bool{}
	for _, t := range ts {
		if t.Table == "" {
			t.Table = d.name
		}
		if err := store.ValidateTableName(t.Table); err != nil {
			return nil, fmt.Errorf("denorm: relation %s: target %s: %w", r.name, t, err)
		}
		if err := store.ValidateKeys(t.PartitionKey, t.RowKey); err != nil {
			return nil, fmt.Errorf("denorm: relation %s: target (%q, %q) of %s (keys up to %d UTF-16 units, no / \\ # ?): %w",
				r.name, naming.Cut(t.PartitionKey), naming.Cut(t.RowKey), t.Table, store.MaxKeyUnits, err)
		}
		if strings.EqualFold(t.Table, d.name) && t.PartitionKey == self.PartitionKey && t.RowKey == self.RowKey {
			return nil, refuse("relation %s: source %s maps to itself", r.name, self)
		}
		k := Target{Table: strings.ToLower(t.Table), PartitionKey: t.PartitionKey, RowKey: t.RowKey}
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// mapsTo reports whether v maps to target t under r.
func (d *Source[S]) mapsTo(r *Rel[S], v *S, t Target) bool {
	for _, x := range r.targets(v) {
		if x.Table == "" {
			x.Table = d.name
		}
		if strings.EqualFold(x.Table, t.Table) && x.PartitionKey == t.PartitionKey && x.RowKey == t.RowKey {
			return true
		}
	}
	return false
}

// refuse builds a refusal of tablekit's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "denorm: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// sourceKey is the value of a target's SourceProperty for src.
func sourceKey(src Ref) string {
	k, err := keys.Join(src.PartitionKey, src.RowKey)
	if err != nil {
		return src.PartitionKey + "\x00" + src.RowKey // never a valid key: matches nothing
	}
	return k
}

// sourceOf reads a target's source under rel ("" and false for none).
func sourceOf(e *store.Entity, rel string) (Ref, bool) {
	s, _ := e.Properties[SourceProperty(rel)].(string)
	if s == "" {
		return Ref{}, false
	}
	parts, err := keys.Split(s)
	if err != nil || len(parts) != 2 {
		return Ref{}, false
	}
	return Ref{PartitionKey: parts[0], RowKey: parts[1]}, true
}

// versionOf reads a target's version under rel.
func versionOf(e *store.Entity, rel string) int64 {
	switch v := e.Properties[VersionProperty(rel)].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	}
	return 0
}
