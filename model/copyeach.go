package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// MaxCopyTargets bounds the targets one entity maps one copy to. Each
// target is a step of the write's operation (a merge into every target
// the entity maps to, a removal from every one it left: up to twice the
// bound per copy), carried in the outbox row and the queue message (an
// operation over a message's 56 KiB goes to the engine's Container, and
// is refused without one), and run by the worker one after the other (2
// to 4 requests each). A write mapping more is refused before anything
// is written, naming the count and the limit. For more targets, or
// targets that are not rows of someone else's, keep the data in one place
// and read it from there.
const MaxCopyTargets = 100

// CopyToEach declares a denormalized copy onto several rows: the entity
// is the source of properties props held by every row targets maps it to
// (none, one or up to MaxCopyTargets, each a row of someone else's: the
// model never creates or deletes one), each in one of tables (declared,
// so that Check scans them; a target in another table is refused). The
// engine merges the properties into every target the entity maps to on
// every write, with the entity's version (TkDn_<name>_V) and its keys
// (TkDn_<name>_Src), and removes them from every target the entity no
// longer maps to (deleted, or mapping elsewhere), all from the one
// operation of the write, under the entity's version. A target that does
// not exist when the step runs gets nothing. A target row another source
// still maps to fails its step with ErrOtherSource. Rename stores a
// property under another name on the targets.
//
// Costs: per write, nothing more for the writer (steps of the write's
// one outbox row); for the worker, per target mapped a read and a merge
// (2 more reads where it held no copy of the entity), per target left a
// read of the target, a read of the entity and a replace.
func CopyToEach[T any](name string, tables []string, targets func(*T) []store.RowRef, props ...string) Feature[T] {
	return Feature[T]{kind: featCopy, name: name, tables: slices.Clone(tables), targets: targets,
		props: slices.Clone(props), global: true}
}

// Rename stores property from of the entity, one of the copy's
// properties, as property to on its targets (the department's
// ManagerName for the manager's Name). Define refuses a rename of a
// property the copy does not copy, a target name the service refuses,
// one starting with store.ReservedPrefix, one two properties of the copy
// (or of two copies sharing a table) would write, and a Rename of a
// feature that is not a copy. An encrypted property renamed needs the
// target table's encryption to encrypt the new name: a write that would
// store it in plain text is refused (encryption.CheckCopy).
func (f Feature[T]) Rename(from, to string) Feature[T] {
	f.renames = append(slices.Clone(f.renames), [2]string{from, to})
	return f
}

// addCopy checks copy f and adds it to the model.
func (m *Model[T]) addCopy(f *Feature[T]) error {
	if !indexName.MatchString(f.name) || f.targets == nil || len(f.props) == 0 || len(f.tables) == 0 {
		return refuse("copy %q needs a name (1 to 63 letters, digits or _), a table, a target function and properties", f.name)
	}
	if m.byName[f.name] != nil {
		return refuse("%s is declared twice", f.name)
	}
	var tables []string
	for _, t := range f.tables {
		if err := store.ValidateTableName(t); err != nil {
			return fmt.Errorf("model: copy %s: %w", f.name, err)
		}
		if !slices.ContainsFunc(tables, func(s string) bool { return strings.EqualFold(s, t) }) {
			tables = append(tables, t)
		}
	}
	f.tables = tables
	names, err := mapper.PropertyNames[T]()
	if err != nil {
		return fmt.Errorf("model: copy %s: %w", f.name, err)
	}
	outs := slices.Clone(f.props)
	for i, p := range f.props {
		if !slices.Contains(names, p) {
			return refuse("copy %s: %q is not a property of the type (properties: %s)", f.name, p, strings.Join(names, ", "))
		}
		if slices.Index(f.props, p) != i {
			return refuse("copy %s: property %q is listed twice", f.name, p)
		}
	}
	renamed := map[string]bool{}
	for _, r := range f.renames {
		i := slices.Index(f.props, r[0])
		if i < 0 {
			return refuse("copy %s: Rename(%q, %q): %q is not one of the copy's properties (%s)", f.name, r[0], r[1], r[0], strings.Join(f.props, ", "))
		}
		if renamed[r[0]] {
			return refuse("copy %s: %q is renamed twice", f.name, r[0])
		}
		renamed[r[0]] = true
		if err := store.ValidatePropertyName(r[1]); err != nil {
			return fmt.Errorf("model: copy %s: Rename(%q, %q): %w", f.name, r[0], r[1], err)
		}
		if store.ReservedProperty(r[1]) {
			return refuse("copy %s: Rename(%q, %q): names starting with %s are the model's own", f.name, r[0], r[1], store.ReservedPrefix)
		}
		outs[i] = r[1]
	}
	for i, o := range outs {
		if j := slices.Index(outs, o); j != i {
			return refuse("copy %s: %q and %q would both be stored as %q on the targets", f.name, f.props[j], f.props[i], o)
		}
	}
	for _, g := range m.specs {
		if g.kind != featCopy || !sharesTable(g.tables, f.tables) {
			continue
		}
		for i, o := range outs {
			if slices.Contains(g.outs, o) {
				return refuse("copy %s: %q would be stored as %q, which copy %s also writes in the same table", f.name, f.props[i], o, g.name)
			}
		}
	}
	f.outs = outs
	m.byName[f.name] = f
	m.specs = append(m.specs, f)
	return nil
}

func sharesTable(a, b []string) bool {
	for _, t := range a {
		if slices.ContainsFunc(b, func(s string) bool { return strings.EqualFold(s, t) }) {
			return true
		}
	}
	return false
}

// tableOf returns the declared spelling of table t of copy f, "" when f
// does not declare it.
func tableOf[T any](f *Feature[T], t string) string {
	for _, s := range f.tables {
		if strings.EqualFold(s, t) {
			return s
		}
	}
	return ""
}

// targetsOf returns the targets copy f maps v to, deduplicated, their
// tables spelled as declared, and the first one refused: a table the copy
// does not declare, keys the service refuses, a row of the model's own,
// more than MaxCopyTargets. The targets returned are the valid ones (a
// stored state read back makes keys that were valid when written).
func (m *Model[T]) targetsOf(f *Feature[T], v *T) ([]eventual.Ref, error) {
	var out []eventual.Ref
	var first error
	bad := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, t := range f.targets(v) {
		if t.PartitionKey == "" && t.RowKey == "" {
			continue
		}
		tbl := tableOf(f, t.Table)
		if tbl == "" {
			bad(refuse("copy %s: target %s: table %q is not one of the copy's tables (%s)", f.name, t, t.Table, strings.Join(f.tables, ", ")))
			continue
		}
		if err := store.ValidateKeys(t.PartitionKey, t.RowKey); err != nil {
			bad(fmt.Errorf("model: copy %s: target %s: %w", f.name, t, err))
			continue
		}
		r := eventual.Ref{Table: tbl, PartitionKey: t.PartitionKey, RowKey: t.RowKey}
		if m.ownRow(r) {
			bad(refuse("copy %s: target %s is a row the model keeps for itself", f.name, t))
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) > MaxCopyTargets {
		bad(refuse("copy %s: the entity maps to %d targets, more than MaxCopyTargets (%d)", f.name, len(out), MaxCopyTargets))
	}
	return out, first
}

// ownRow reports whether r is a row the model or the engine writes: in
// the entity table or the index table, a compound RowKey (an entity, a
// copy, a log row, a list, a receipt), the partition's own rows, or a
// global copy's partition; in the table of a global index declared In
// one, a global copy's partition.
func (m *Model[T]) ownRow(r eventual.Ref) bool {
	if !strings.EqualFold(r.Table, m.table) && !strings.EqualFold(r.Table, m.itable) {
		p, err := keys.Split(r.PartitionKey)
		return err == nil && len(p) > 1 && p[0] == "x" && m.indexRowsIn(r.Table)
	}
	if partition.IsReserved(r.RowKey) {
		return true
	}
	if p, err := keys.Split(r.RowKey); err == nil && len(p) > 1 {
		return true
	}
	p, err := keys.Split(r.PartitionKey)
	return err == nil && len(p) > 1 && p[0] == "x"
}

// checkEncrypted refuses a copy that would store a property the
// entity's table encrypts in plain text on target table tbl: a renamed
// one needs tbl to encrypt the new name (encryption.CheckCopy).
func (m *Model[T]) checkEncrypted(f *Feature[T], tbl string) error {
	src := m.st.Table(m.table)
	if encryption.CodecOf(src) == nil {
		return nil
	}
	dst := m.st.Table(tbl)
	for i, p := range f.props {
		if err := encryption.CheckCopy(src, dst, p, f.outs[i]); err != nil {
			return fmt.Errorf("model: copy %s: %w", f.name, err)
		}
	}
	return nil
}

// Copied is what a target row holds of a copy (CopyAt).
type Copied[T any] struct {
	// Target is the row read.
	Target store.RowRef
	// PartitionKey and ID are the keys of the entity the copy names.
	PartitionKey, ID string
	// Version is the entity's version the copy was made from.
	Version int64
	// Properties are the copied properties as the target holds them,
	// under their names on the target (Rename).
	Properties map[string]any
	// Entity is the entity as stored now, with its ETag, while it still
	// maps the copy to Target; nil when it is gone or maps elsewhere
	// (the copy is dangling until the engine or Repair removes it).
	Entity *T
	// Behind reports that Entity is at a newer version than the copy:
	// the engine has not run its latest write yet.
	Behind bool
}

// CopyAt reads the copy name (a CopyTo or CopyToEach of this model) that
// row target holds: the copied properties, the entity they came from and
// its version then, and the entity as stored now when it still maps to
// the row. A row that holds no copy of the model (none, or one removed)
// is an error matching store.ErrNotFound, as is a missing row. Two point
// reads (one when the row holds no copy).
func (m *Model[T]) CopyAt(ctx context.Context, name string, target store.RowRef) (*Copied[T], error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	f := m.byName[name]
	if f == nil || f.kind != featCopy {
		return nil, refuse("no copy named %q is declared (a CopyTo or CopyToEach of this model)", name)
	}
	tbl := tableOf(f, target.Table)
	if tbl == "" {
		return nil, refuse("copy %s: table %q is not one of its tables (%s)", name, target.Table, strings.Join(f.tables, ", "))
	}
	if err := store.ValidateKeys(target.PartitionKey, target.RowKey); err != nil {
		return nil, fmt.Errorf("model: copy %s: %w", name, err)
	}
	pk, rk := target.PartitionKey, target.RowKey
	a := eventual.Ref{Table: tbl, PartitionKey: pk, RowKey: rk}
	row, err := m.st.Table(tbl).Get(ctx, pk, rk, nil)
	if err != nil {
		return nil, err
	}
	verP, srcP := copyProps(f)
	s, _ := row.Properties[srcP].(string)
	if s == "" {
		return nil, notFound("row (%q, %q) of %s holds no copy %s", pk, rk, tbl, name)
	}
	src, err := parseRef(s)
	if err != nil {
		return nil, fmt.Errorf("%w: row (%q, %q) of %s: %s %q: %w", ErrBypassed, pk, rk, tbl, srcP, s, err)
	}
	if !strings.EqualFold(src.Table, m.table) {
		return nil, notFound("row (%q, %q) of %s holds the copy %s of an entity of %s, not of %s", pk, rk, tbl, name, src.Table, m.table)
	}
	id := idOf(src.RowKey)
	if id == "" {
		return nil, notFound("row (%q, %q) of %s: its copy %s names %s, not an entity", pk, rk, tbl, name, s)
	}
	if !holdsCopy(f, &row, src) {
		return nil, notFound("row (%q, %q) of %s holds no copy %s (entity (%q, %q) left it)", pk, rk, tbl, name, src.PartitionKey, id)
	}
	c := &Copied[T]{Target: a, PartitionKey: src.PartitionKey, ID: id, Properties: map[string]any{}}
	c.Version, _ = row.Properties[verP].(int64)
	for _, o := range f.outs {
		if v, ok := row.Properties[o]; ok {
			c.Properties[o] = v
		}
	}
	v, erow, err := m.get(ctx, src.PartitionKey, id)
	if store.EntityNotFound(err) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	ts, _ := m.targetsOf(f, v)
	if slices.Contains(ts, a) {
		c.Entity = v
		c.Behind = eventual.VersionOf(&erow) > c.Version
	}
	return c, nil
}

// CopyNames returns the names of the copies (CopyTo, CopyToEach) the model
// declares, in declaration order.
func (m *Model[T]) CopyNames() []string {
	var out []string
	for _, f := range m.specs {
		if f.kind == featCopy {
			out = append(out, f.name)
		}
	}
	return out
}

// TargetsOf returns the rows copy name maps v to, checked as a write
// checks them (their tables spelled as the copy declares them): an error
// matching store.ErrInvalidInput for a target a write would refuse. No
// I/O.
func (m *Model[T]) TargetsOf(name string, v *T) ([]store.RowRef, error) {
	f := m.byName[name]
	if f == nil || f.kind != featCopy {
		return nil, refuse("no copy named %q is declared (a CopyTo or CopyToEach of this model)", name)
	}
	if v == nil {
		return nil, refuse("nil %T", v)
	}
	return m.targetsOf(f, v)
}

// RefreshCopies writes the copies of entity (pk, id) again into every
// target it maps to, now, with the engine's own guarded step at the
// entity's version: a target created after the entity's last write gets
// the copy, a target holding it at that version or a newer one is left
// as it is, and one another entity still maps to fails with
// ErrOtherSource (the other targets are still written; the errors are
// joined). It removes nothing: Repair removes a copy the entity no longer
// maps to, and mends one written past the model. A missing entity is an
// error matching store.ErrNotFound, one in flight (Move) ErrMoving (the
// move carries its copies). Costs: 1 point read of the entity, then per
// target a read and a merge (2 more reads where it held no copy of the
// entity).
func (m *Model[T]) RefreshCopies(ctx context.Context, pk, id string) error {
	v, row, err := m.get(ctx, pk, id)
	if err != nil {
		return err
	}
	if moving(&row) {
		return fmt.Errorf("%w: entity (%q, %q) of %s", ErrMoving, pk, id, m.table)
	}
	ev := eventual.VersionOf(&row)
	props := own(row.Properties)
	src := eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: row.RowKey}
	var errs []error
	for _, f := range m.specs {
		if f.kind != featCopy {
			continue
		}
		ts, err := m.targetsOf(f, v)
		if err != nil {
			errs = append(errs, err)
		}
		checked := map[string]bool{}
		for _, t := range ts {
			if !checked[t.Table] {
				if err := m.checkEncrypted(f, t.Table); err != nil {
					return err
				}
				checked[t.Table] = true
			}
			want := store.Entity{PartitionKey: t.PartitionKey, RowKey: t.RowKey, Properties: map[string]any{}}
			for i, p := range f.props {
				want.Properties[f.outs[i]] = props[p]
			}
			if err := m.copyPut(ctx, f, t.Table, want, src, ev); err != nil {
				errs = append(errs, fmt.Errorf("model: copy %s: target %s: %w", f.name, t, err))
			}
		}
	}
	return errors.Join(errs...)
}
