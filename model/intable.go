package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// In puts the copies and claims of a global index (GlobalUnique,
// GlobalIndex) in table instead of Options.IndexTable: an index whose
// rows have a table of their own (created by the caller, as every table
// the model writes), so its load, its scans (Check, ReapClaims, the
// range lookups) and its storage are apart from the other indexes'. The
// rows are the same (partition Join("x", index, value)); only their
// table changes. Define refuses a bad table name (naming it) and In on
// any feature that is not a global index. Moving an index to another
// table leaves its old rows where they were: Check reports the new
// table's rows missing and Repair writes them; remove the old ones
// yourself.
func (f Feature[T]) In(table string) Feature[T] {
	f.in, f.hasIn = table, true
	return f
}

// tableOf sets the table of a global index's rows at Define (In, or
// Options.IndexTable), and refuses In on any other feature.
func (m *Model[T]) tableOf(f *Feature[T]) error {
	if f.kind == featIndex && f.global {
		f.table = m.itable
		if !f.hasIn {
			return nil
		}
		if err := store.ValidateTableName(f.in); err != nil {
			return fmt.Errorf("model: index %s: In(%q): %w", f.name, f.in, err)
		}
		f.table = f.in
		return nil
	}
	if !f.hasIn {
		return nil
	}
	what := "index " + f.name + " is in the entity's partition"
	switch f.kind {
	case featCopy:
		what = "copy " + f.name + " names its table in CopyTo"
	case featLog:
		what = "the log is in the entity's partition"
	case featBlob:
		what = "blob " + f.name + " is not an index"
	case featList:
		what = "list " + f.name + " is in the entity's partition"
	}
	return refuse("In(%q): %s; In is for a GlobalUnique or GlobalIndex only", f.in, what)
}

// globalTables lists the tables of the model's global indexes, each
// once (table names are case-insensitive), in declaration order.
func (m *Model[T]) globalTables() []string {
	var out []string
	for _, f := range m.specs {
		if f.kind != featIndex || !f.global {
			continue
		}
		seen := false
		for _, t := range out {
			seen = seen || strings.EqualFold(t, f.table)
		}
		if !seen {
			out = append(out, f.table)
		}
	}
	return out
}

// indexRowsIn reports whether a global index of the model keeps its
// rows in table.
func (m *Model[T]) indexRowsIn(table string) bool {
	for _, t := range m.globalTables() {
		if strings.EqualFold(t, table) {
			return true
		}
	}
	return false
}

// IndexInfo describes an index of a model (Model.Indexes).
type IndexInfo struct {
	// Name is the index's name.
	Name string
	// Unique is set for Unique and GlobalUnique.
	Unique bool
	// Global is set for GlobalUnique and GlobalIndex: the copies live in
	// Table, one partition per value, written by the engine; otherwise in
	// the entity's partition, in its transaction.
	Global bool
	// Table holds the copies: the entity's table for an index of the
	// partition; In's table, or Options.IndexTable, for a global one.
	Table string
	// Projection lists the properties the copies hold (Project); nil
	// when they hold every property.
	Projection []string
}

// Indexes describes the model's indexes, in declaration order: what a
// view over the model checks it reads (patterns/xindex reads the global
// ones).
func (m *Model[T]) Indexes() []IndexInfo {
	var out []IndexInfo
	for _, f := range m.specs {
		if f.kind != featIndex {
			continue
		}
		i := IndexInfo{Name: f.name, Unique: f.unique, Global: f.global, Table: m.table, Projection: slices.Clone(f.proj)}
		if f.global {
			i.Table = f.table
		}
		out = append(out, i)
	}
	return out
}
