// Package index keeps secondary indexes of a mapped type inside the
// entity's own partition: the design guide's intra-partition secondary
// index pattern. Table storage indexes (PartitionKey, RowKey) only; to find
// an employee by email as fast as by id, every write stores the entity and
// a copy of it (or of some of its properties) under a RowKey made of the
// index name and the value, in one entity group transaction, so the
// copies can never drift from the entity.
//
//	staff, err := index.New[Employee](st, "Employees",
//		index.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
//		index.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).
//			Project("FirstName", "LastName"))
//	err = staff.Insert(ctx, &e)                            // entity and copies, one transaction
//	e, err := staff.Find(ctx, "Sales", "email", "ann@x")   // one point read
//	for e, err := range staff.FindAll(ctx, "Sales", "lastname", "Jones") { ... }
//
// Each entity has a head row of its own (a partition.Head at HeadKey of
// its RowKey) that every write of the entity goes through, in the same
// transaction as the entity and its copies: the head's commit loop reads
// it, builds the transaction and commits it conditional on the head, so
// two writers of one entity never interleave, and a write whose answer
// was lost is resolved exactly by the head. Two entities that claim one
// unique value cannot both commit (the second insert of the copy fails).
// No partition-wide fence is needed, which keeps a write to one
// transaction of the entity's rows only. docs/patterns/index.md has the
// costs and the failure cases.
package index

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// RefProperty is the property of a copy holding the RowKey of the entity
// it copies.
const RefProperty = "TkRef"

// Spec declares one secondary index of T.
type Spec[T any] struct {
	name    string
	value   func(*T) string
	unique  bool
	project []string
}

// Unique declares an index whose values identify one entity of a
// partition (an email address): a second entity with the same value is
// refused with a *partition.DuplicateError naming the index and the value.
func Unique[T any](name string, value func(*T) string) Spec[T] {
	return Spec[T]{name: name, value: value, unique: true}
}

// NonUnique declares an index whose values many entities share (a last
// name): each entity has its own copy, keyed by the value and the
// entity's RowKey.
func NonUnique[T any](name string, value func(*T) string) Spec[T] {
	return Spec[T]{name: name, value: value}
}

// Project makes the index's copies hold only these properties (and the
// keys): smaller rows, and a lookup that needs the rest reads the entity
// too. Without it a copy holds every property.
func (s Spec[T]) Project(props ...string) Spec[T] {
	s.project = append([]string(nil), props...)
	return s
}

// Table is a table of T whose entities carry secondary indexes. It is
// safe for concurrent use.
type Table[T any] struct {
	table  store.Table
	repo   *mapper.Repository[T]
	specs  []Spec[T]
	prefix string // T's RowKey prefix
	heads  *partition.Options
}

// New returns the indexed table name of st for T. T must declare a kind
// with a RowKey prefix (mapper.Kind): the index copies share the
// entity's partition, and the prefix is what keeps a query of T from
// reading them. It fails, naming the value, for an index name that is
// empty, repeated or not letters, digits and underscores, a name whose
// copies would sort inside T's prefix, a projection naming a property T
// lacks, or a nil value function.
func New[T any](st store.Store, table string, specs ...Spec[T]) (*Table[T], error) {
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
		return nil, refuse("%T declares no RowKey prefix: declare one with TableKind (mapper.Kind{Prefix: ...}) so that queries of its entities never read the index copies beside them", zero)
	}
	if len(specs) == 0 {
		return nil, refuse("no index declared")
	}
	if 2+2*len(specs) > store.MaxBatchActions {
		return nil, refuse("%d indexes: a write of one entity would take %d actions (its head, the entity, a delete and an insert per index), over the transaction's %d",
			len(specs), 2+2*len(specs), store.MaxBatchActions)
	}
	if strings.HasPrefix(kind.Prefix, headMark) {
		var zero T
		return nil, refuse("%T's RowKey prefix %q starts with %q, which marks the entities' head rows: choose another", zero, kind.Prefix, headMark)
	}
	seen := map[string]bool{}
	for _, s := range specs {
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
		copyPrefix, _ := keys.Join(s.name)
		if strings.HasPrefix(copyPrefix, kind.Prefix) || strings.HasPrefix(kind.Prefix, copyPrefix) {
			return nil, refuse("index %q: its copies' RowKeys (%q...) would overlap the entities' prefix %q", s.name, copyPrefix, kind.Prefix)
		}
		for _, p := range s.project {
			if !slices.Contains(props, p) {
				return nil, refuse("index %q projects %q, which is not a property of the type (properties: %s)", s.name, p, strings.Join(props, ", "))
			}
		}
	}
	heads := &partition.Options{NewID: keys.NewIDGenerator(nil, nil).New}
	return &Table[T]{table: st.Table(table), repo: mapper.NewRepository[T](st, table), specs: specs, prefix: kind.Prefix, heads: heads}, nil
}

// refuseFor builds a refusal with its cause.
func refuseFor(cause error, format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "index: "+format, args...)
	e.Source = store.SourceClient
	e.Err = cause
	return e
}

// refuse builds a refusal of tablekit's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "index: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// Repository returns the typed repository of the entities (reads of
// them; write through the Table so the copies follow).
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

// copyKey is the RowKey of the copy of an entity (RowKey rk) whose index
// value is v.
func (s *Spec[T]) copyKey(v, rk string) (string, error) {
	if s.unique {
		return keys.Join(s.name, v)
	}
	return keys.Join(s.name, v, rk)
}

// copies returns the index copies of entity e (from value v), in the
// order the indexes were declared, with their keys. An empty value is not
// indexed.
func (x *Table[T]) copies(v *T, e *store.Entity) ([]copyKey[T], []store.Entity, error) {
	keys, err := x.copyKeys(v, e.PartitionKey, e.RowKey)
	if err != nil {
		return nil, nil, err
	}
	out := make([]store.Entity, 0, len(keys))
	for _, k := range keys {
		s := k.spec
		var c store.Entity
		if s.project == nil {
			c = store.Entity{PartitionKey: e.PartitionKey, RowKey: k.rk, Properties: make(map[string]any, len(e.Properties)+1)}
			for k, pv := range e.Properties {
				c.Properties[k] = pv
			}
		} else {
			c = store.Entity{PartitionKey: e.PartitionKey, RowKey: k.rk, Properties: make(map[string]any, len(s.project)+1)}
			for _, p := range s.project {
				if pv, ok := e.Properties[p]; ok {
					c.Properties[p] = pv
				}
			}
		}
		c.Properties[RefProperty] = e.RowKey
		out = append(out, c)
	}
	return keys, out, nil
}

// copyKey is the RowKey of v's copy in one index.
type copyKey[T any] struct {
	spec *Spec[T]
	rk   string
}

// copyKeys returns the RowKeys of v's copies (none for an index whose
// value is empty), for the entity with keys pk and rk, refusing a value
// that cannot make a RowKey.
func (x *Table[T]) copyKeys(v *T, pk, rk string) ([]copyKey[T], error) {
	out := make([]copyKey[T], 0, len(x.specs))
	for i := range x.specs {
		s := &x.specs[i]
		val := s.value(v)
		if val == "" {
			continue
		}
		crk, err := s.copyKey(val, rk)
		if err != nil {
			return nil, refuseFor(err, "index %s: value %q cannot make the copy's RowKey (the limit is %d UTF-16 units)", s.name, naming.Cut(val), store.MaxKeyUnits)
		}
		if err := store.ValidateKeys(pk, crk); err != nil {
			return nil, fmt.Errorf("index %s: value %q makes the copy's RowKey %d UTF-16 units long (the limit is %d): %w",
				s.name, naming.Cut(val), keys.UTF16Len(crk), store.MaxKeyUnits, err)
		}
		out = append(out, copyKey[T]{s, crk})
	}
	return out, nil
}

// decodeCopy turns a copy back into a T: the entity's RowKey, the copy's
// properties. A value read from a copy carries no ETag (the copy's is not
// the entity's): read the entity to update it.
func (x *Table[T]) decodeCopy(c store.Entity) (T, error) {
	var v T
	ref, _ := c.Properties[RefProperty].(string)
	if ref == "" {
		return v, fmt.Errorf("index: row (%q, %q) is not an index copy: it has no %s", c.PartitionKey, c.RowKey, RefProperty)
	}
	// The copy was just read: its map is ours to change.
	delete(c.Properties, RefProperty)
	c.RowKey, c.ETag = ref, ""
	err := mapper.Decode(c, &v)
	return v, err
}

// readThrough decodes a copy, or reads the entity when the copy is a
// projection.
func (x *Table[T]) readThrough(ctx context.Context, s *Spec[T], c store.Entity) (T, error) {
	if s.project == nil {
		return x.decodeCopy(c)
	}
	ref, _ := c.Properties[RefProperty].(string)
	return x.repo.Get(ctx, c.PartitionKey, ref)
}

// Get reads the entity with keys (pk, rk), with its ETag.
func (x *Table[T]) Get(ctx context.Context, pk, rk string) (T, error) { return x.repo.Get(ctx, pk, rk) }

// Find reads the entity of partition pk whose unique index holds value:
// one point read of its copy (two when the index projects, to read the
// entity). A missing value is an error matching store.ErrNotFound. The
// value comes from the copy and carries no ETag unless the index
// projects (then it is the entity, read with its ETag).
func (x *Table[T]) Find(ctx context.Context, pk, index, value string) (T, error) {
	var zero T
	s, err := x.spec(index)
	if err != nil {
		return zero, err
	}
	if !s.unique {
		return zero, refuse("index %q is not unique: use FindAll", index)
	}
	rk, err := s.copyKey(value, "")
	if err != nil {
		return zero, fmt.Errorf("index %s: value %q: %w", index, naming.Cut(value), err)
	}
	if tt, ok := driver.Typed(x.table); ok && s.project == nil {
		// The full copy, read straight into a T.
		f := new(found[T])
		finish, err := x.readCopy(f)
		if err != nil {
			return zero, err
		}
		if err := tt.GetInto(ctx, pk, rk, nil, &f.r); err != nil {
			return zero, fmt.Errorf("index %s: value %q in partition %q: %w", index, naming.Cut(value), pk, err)
		}
		if err := f.r.end(pk, rk, finish); err != nil {
			return zero, err
		}
		return f.v, nil
	}
	// The read checks the keys (the partition's and the copy's, which
	// the value makes) as any read does.
	c, err := x.table.Get(ctx, pk, rk, nil)
	if err != nil {
		return zero, fmt.Errorf("index %s: value %q in partition %q: %w", index, naming.Cut(value), pk, err)
	}
	return x.readThrough(ctx, s, c)
}

// FindAll returns every entity of partition pk whose index holds value,
// in the order of their RowKeys: one range query of the copies.
func (x *Table[T]) FindAll(ctx context.Context, pk, index, value string) iter.Seq2[T, error] {
	return x.scan(ctx, pk, index, func(s *Spec[T]) (keys.Range, error) {
		if s.unique {
			rk, err := s.copyKey(value, "")
			return keys.Range{Lower: rk, Upper: rk, HasUpper: true, UpperIncluded: true}, err
		}
		return keys.PrefixOf(s.name, value)
	})
}

// Range returns the entities of partition pk whose index value lies in
// [from, to), in value order ("" as to: no upper bound).
func (x *Table[T]) Range(ctx context.Context, pk, index, from, to string) iter.Seq2[T, error] {
	return x.scan(ctx, pk, index, func(s *Spec[T]) (keys.Range, error) {
		lo, err := keys.Join(s.name, from)
		if err != nil {
			return keys.Range{}, err
		}
		if to == "" {
			end, err := keys.PrefixOf(s.name)
			return keys.Range{Lower: lo, Upper: end.Upper, HasUpper: end.HasUpper}, err
		}
		hi, err := keys.Join(s.name, to)
		return keys.Range{Lower: lo, Upper: hi, HasUpper: true}, err
	})
}

// Prefix returns the entities of partition pk whose index value starts
// with prefix, in value order.
func (x *Table[T]) Prefix(ctx context.Context, pk, index, prefix string) iter.Seq2[T, error] {
	return x.scan(ctx, pk, index, func(s *Spec[T]) (keys.Range, error) {
		joined, err := keys.Join(s.name, prefix)
		if err != nil {
			return keys.Range{}, err
		}
		// Escaping is a character-by-character map, so the copies of the
		// values starting with prefix are the keys starting with the
		// escaped pair, minus the separator's trailing space when the
		// prefix is empty.
		if prefix == "" {
			return keys.PrefixOf(s.name)
		}
		return keys.PrefixRange(joined), nil
	})
}

// scan reads the copies of one index in a key range.
func (x *Table[T]) scan(ctx context.Context, pk, index string, rangeOf func(*Spec[T]) (keys.Range, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		s, err := x.spec(index)
		if err != nil {
			yield(zero, err)
			return
		}
		rng, err := rangeOf(s)
		if err != nil {
			yield(zero, fmt.Errorf("index %s: %w", index, err))
			return
		}
		c := filter.PK.Eq(pk).And(filter.RK.InRange(rng))
		if err := c.Err(); err != nil {
			yield(zero, fmt.Errorf("index %s: %w", index, err))
			return
		}
		for e, err := range store.All(ctx, x.table, store.Query{Filter: c.String()}) {
			if err != nil {
				yield(zero, err)
				return
			}
			v, err := x.readThrough(ctx, s, e)
			if !yield(v, err) {
				return
			}
		}
	}
}

// splitKey splits a copy's RowKey into index name, value (and entity
// RowKey).
func splitKey(rk string) ([]string, error) { return keys.Split(rk) }
