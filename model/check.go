package model

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Drift names what a finding of Check is.
type Drift string

// The kinds of drift Check finds.
const (
	// DriftBypassed: the entity row was written without the model (no
	// version, no digest, or properties that changed since the model
	// wrote them). The entity's other findings are not listed: Repair
	// adopts the row as the entity's state and derives every copy again.
	DriftBypassed Drift = "bypassed"
	// DriftDeleted: the entity row is gone but its log's newest entry is
	// not a delete: it was deleted without the model. Its copies are not
	// listed: Repair records the delete and removes them.
	DriftDeleted Drift = "deleted"
	// DriftMissing: a copy the entity maps to is not there (a global
	// copy that is only a claim, a CopyTo target that exists without the
	// entity's properties).
	DriftMissing Drift = "missing"
	// DriftBehind: a copy older than its entity, or holding other values.
	DriftBehind Drift = "behind"
	// DriftDangling: a copy or a claim of an entity that is gone or no
	// longer maps to it (a claim only once it is older than
	// Options.ClaimLease).
	DriftDangling Drift = "dangling"
	// DriftLog: the newest entry of the entity's log is not its state at
	// its version.
	DriftLog Drift = "log"
	// DriftBlob: the entity names a blob (Blob) that is missing, holds
	// another length than its reference records, or a reference that
	// cannot be read. Repair cannot mend it (the bytes are gone): it
	// reports it Failed with ErrBlobMissing; write the value again.
	DriftBlob Drift = "blob"
)

// Outcome is what Repair did about a finding.
type Outcome string

// The outcomes of a repair.
const (
	// Repaired: the conditional write that mends it applied, or found
	// nothing left to do (a newer write had mended it).
	Repaired Outcome = "repaired"
	// Skipped: the rows changed since the walk, or another finding of the
	// same entity was mended first; the next walk judges it again.
	Skipped Outcome = "skipped"
	// Failed: the repair was refused (Err says why: a unique value
	// another entity holds, a CopyTo target another source holds).
	Failed Outcome = "failed"
	// Unknown: the repair's answer was lost and could not be settled;
	// Repair does not send it again in the same run. The next Check
	// tells whether it applied.
	Unknown Outcome = "unknown"
)

// Finding is one row found out of step with its entity.
type Finding struct {
	// Drift is what was found.
	Drift Drift
	// Feature is the index, List or CopyTo name, "log" for the log, "" for the
	// entity row itself.
	Feature string
	// Row is the row found wrong, or where the missing one belongs.
	Row eventual.Ref
	// Entity is the entity the row belongs to (its row's keys).
	Entity eventual.Ref
	// Detail says what differs.
	Detail string
	// Pending is set when the entity's partition has an operation the
	// engine has not run yet, which may mend it.
	Pending bool
	// Outcome and Err are set by Repair.
	Outcome Outcome
	Err     error

	scope scope
	cv    int64 // the version of the row found (copies)
}

type scope int

const (
	inPartition scope = iota + 1
	inIndex
	inCopy
	inBlob
	inList
)

func (f Finding) String() string {
	s := fmt.Sprintf("%s %s row (%q, %q) of %s, entity %s: %s", f.Drift, f.Feature, f.Row.PartitionKey, f.Row.RowKey, f.Row.Table, f.Entity, f.Detail)
	if f.Pending {
		s += " (pending)"
	}
	if f.Outcome != "" {
		s += " -> " + string(f.Outcome)
		if f.Err != nil {
			s += ": " + f.Err.Error()
		}
	}
	return s
}

// Report is what Check or Repair found.
type Report struct {
	// Entities counts the entity rows walked, Rows every row read by
	// the walk's scans (of the last walk, for Repair).
	Entities, Rows int
	// Findings are the drift found: for Check, by its walk; for Repair,
	// everything it set out to mend, over its rounds, with the Outcome
	// of each.
	Findings []Finding
	// Pending are differences that an operation the engine has not run
	// yet explains (for Repair: those its last walk still saw).
	Pending []Finding
	// Left is, for Repair, the drift its last walk still found (empty
	// when that walk was clean).
	Left []Finding
	// Rounds counts Repair's walks (1 for Check).
	Rounds int
}

// Count returns how many findings of kind d the report holds.
func (r *Report) Count(d Drift) int {
	n := 0
	for _, f := range r.Findings {
		if f.Drift == d {
			n++
		}
	}
	return n
}

// Clean reports whether the walk found no drift (for Repair: whether its
// last walk found none); pending differences are not drift.
func (r *Report) Clean() bool {
	if r.Rounds > 1 || r.Left != nil {
		return len(r.Left) == 0
	}
	return len(r.Findings) == 0
}

// Outcomes counts Repair's findings by outcome.
func (r *Report) Outcomes() map[Outcome]int {
	out := map[Outcome]int{}
	for _, f := range r.Findings {
		if f.Outcome != "" {
			out[f.Outcome]++
		}
	}
	return out
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "entities %d, rows %d, rounds %d, findings %d", r.Entities, r.Rows, r.Rounds, len(r.Findings))
	for _, d := range []Drift{DriftBypassed, DriftDeleted, DriftMissing, DriftBehind, DriftDangling, DriftLog, DriftBlob} {
		if n := r.Count(d); n > 0 {
			fmt.Fprintf(&b, ", %s %d", d, n)
		}
	}
	fmt.Fprintf(&b, ", pending %d, left %d", len(r.Pending), len(r.Left))
	if o := r.Outcomes(); len(o) > 0 {
		fmt.Fprintf(&b, ", outcomes %v", o)
	}
	for _, f := range r.Findings {
		b.WriteString("\n  " + f.String())
	}
	for _, f := range r.Left {
		b.WriteString("\n  left: " + f.String())
	}
	return b.String()
}

// CheckOptions tune Check and Repair; nil walks everything.
type CheckOptions struct {
	// Partitions restricts the walk to the entities of these partitions
	// of the entity table, and to their copies elsewhere (nil: every
	// partition). A long walk can be split, or resumed, this way.
	Partitions []string
}

// maxRepairRounds bounds Repair's walks.
const maxRepairRounds = 4

// Check walks the model's rows and reports drift, read only: the entity
// table (every entity, its copies in its partition and its log), the
// index table's copies and claims of the model's global indexes, and the
// rows of each CopyTo table that hold a copy of the model's entities.
// Each candidate is read again before it is reported (the entity's
// partition as one consistent state, a copy and its entity by point
// reads), so a write running beside the walk is not taken for drift; a
// difference that an operation the engine has not run yet explains is
// reported in Pending, not as drift. The walk costs a scan of each of
// those tables and a few reads per candidate.
func (m *Model[T]) Check(ctx context.Context, opts *CheckOptions) (*Report, error) {
	w, err := m.newWalk(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	w.rep.Rounds = 1
	return w.rep, nil
}

// Repair walks as Check does and mends what it finds, then walks again,
// until a walk is clean (at most 4 walks); Report.Left is what the last
// walk still found. Every repair is a conditional write judged on fresh
// reads, so a model write running beside it is never undone:
//
//   - The rows of an entity's partition (a bypassed entity row, its
//     copies there, its log) are mended by one transaction of the
//     partition, through the engine's commit: the entity written again
//     over the ETag just read with its copies and a log entry ("repair",
//     or "update" when a row written without the model is adopted as the
//     entity's state, "delete" when the entity was deleted without it),
//     with the intent for its copies elsewhere. A model write that
//     commits first makes it start again on the new state.
//   - A copy in the index table or a CopyTo target is mended by the
//     engine's own guarded step at the entity's version: written over
//     nothing, over an older copy or over a row the entity no longer
//     maps to (If-Match the ETag read), never over a newer copy; removed
//     only when its entity does not hold it.
//
// Running it again after a stop finishes the work. A repair whose answer
// was lost (Unknown) is not sent again in the same run.
func (m *Model[T]) Repair(ctx context.Context, opts *CheckOptions) (*Report, error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	rep := &Report{}
	unknown := map[eventual.Ref]bool{}
	for round := 1; ; round++ {
		w, err := m.newWalk(ctx, opts)
		if err != nil {
			return nil, err
		}
		if err := w.run(ctx); err != nil {
			return rep, err
		}
		rep.Rounds, rep.Entities, rep.Rows = round, w.rep.Entities, w.rep.Rows
		rep.Left, rep.Pending = nonNil(w.rep.Findings), w.rep.Pending
		var todo []Finding
		for _, f := range append(slices.Clone(w.rep.Findings), w.rep.Pending...) {
			if !unknown[f.Entity] {
				todo = append(todo, f)
			}
		}
		if len(todo) == 0 || round == maxRepairRounds {
			return rep, nil
		}
		m.mend(ctx, todo, unknown)
		rep.Findings = append(rep.Findings, todo...)
		if err := ctx.Err(); err != nil {
			return rep, err
		}
	}
}

func nonNil(f []Finding) []Finding {
	if f == nil {
		return []Finding{}
	}
	return f
}

// entInfo is what the walk keeps of an entity to judge its copies
// elsewhere.
type entInfo struct {
	v       int64
	sum     string // digest of its properties
	props   map[string]any
	moving  bool
	globals map[string]at
	targets map[string]map[eventual.Ref]bool
	copied  map[string]map[string]any
}

// infoOf reads what the copies of the entity of row must hold; nil for a
// row written without the model.
func (m *Model[T]) infoOf(pk string, row *store.Entity) (*entInfo, error) {
	if moving(row) {
		return &entInfo{moving: true}, nil
	}
	if m.intact(row) != nil {
		return nil, nil
	}
	id := idOf(row.RowKey)
	props := own(row.Properties)
	v, err := decodeProps[T](pk, id, props, "")
	if err != nil {
		return nil, err
	}
	inf := &entInfo{v: eventual.VersionOf(row), sum: digest(props, nil), props: props,
		globals: map[string]at{}, targets: map[string]map[eventual.Ref]bool{}, copied: map[string]map[string]any{}}
	for _, f := range m.specs {
		switch {
		case f.kind == featCopy:
			ts, _ := m.targetsOf(f, v)
			if len(ts) == 0 {
				continue
			}
			inf.targets[f.name] = map[eventual.Ref]bool{}
			for _, t := range ts {
				inf.targets[f.name][t] = true
			}
			c := map[string]any{}
			for i, p := range f.props {
				c[f.outs[i]] = props[p]
			}
			inf.copied[f.name] = c
		case f.global:
			if val := f.value(v); val != "" {
				if a, err := m.globalAt(f, val, pk, id); err == nil {
					inf.globals[f.name] = a
				}
			}
		}
	}
	return inf, nil
}

// walk is one run of Check.
type walk[T any] struct {
	m       *Model[T]
	parts   []string        // nil: every partition
	only    map[string]bool // the same, as a set
	rep     *Report
	ents    map[eventual.Ref]*entInfo
	roots   map[eventual.Ref]bool // bypassed or deleted: their copies' drift is theirs
	pending map[string]bool       // partitions with an outbox row
}

func (m *Model[T]) newWalk(ctx context.Context, opts *CheckOptions) (*walk[T], error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	w := &walk[T]{m: m, rep: &Report{}, ents: map[eventual.Ref]*entInfo{}, roots: map[eventual.Ref]bool{}, pending: map[string]bool{}}
	if opts != nil && opts.Partitions != nil {
		if len(opts.Partitions) == 0 {
			return nil, refuse("CheckOptions.Partitions is empty: nil walks every partition")
		}
		w.only = map[string]bool{}
		for _, pk := range opts.Partitions {
			if err := store.ValidateKeys(pk, ""); err != nil {
				return nil, fmt.Errorf("model: CheckOptions.Partitions: partition %q: %w", pk, err)
			}
			if !w.only[pk] {
				w.only[pk] = true
				w.parts = append(w.parts, pk)
			}
		}
	}
	return w, nil
}

func (w *walk[T]) in(pk string) bool { return w.only == nil || w.only[pk] }

func (w *walk[T]) run(ctx context.Context) error {
	if err := w.entities(ctx); err != nil {
		return err
	}
	if err := w.indexes(ctx); err != nil {
		return err
	}
	for _, f := range w.m.specs {
		if f.kind == featCopy {
			if err := w.copies(ctx, f); err != nil {
				return err
			}
		}
	}
	sortFindings(w.rep.Findings)
	sortFindings(w.rep.Pending)
	return nil
}

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Row.Table, b.Row.Table), cmp.Compare(a.Row.PartitionKey, b.Row.PartitionKey),
			cmp.Compare(a.Row.RowKey, b.Row.RowKey), cmp.Compare(a.Drift, b.Drift))
	})
}

func (w *walk[T]) add(f Finding) {
	if f.Pending {
		w.rep.Pending = append(w.rep.Pending, f)
		return
	}
	w.rep.Findings = append(w.rep.Findings, f)
}

// isIndexRow reports whether a row of the index table is a copy or claim
// of a global index (partition Join("x", index, value)).
func isIndexRow(row *store.Entity) bool {
	if _, ok := row.Properties[SourceTableProperty]; !ok {
		return false
	}
	p, err := keys.Split(row.PartitionKey)
	return err == nil && len(p) == 3 && p[0] == "x"
}

// entities scans the entity table partition by partition.
func (w *walk[T]) entities(ctx context.Context) error {
	tbl := w.m.st.Table(w.m.table)
	here := w.m.indexRowsIn(w.m.table)
	var pk string
	var rows []store.Entity
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := w.partition(ctx, pk, rows)
		rows = nil
		return err
	}
	scan := func(q store.Query) error {
		for row, err := range store.All(ctx, tbl, q) {
			if err != nil {
				return fmt.Errorf("model: check: scan of %s: %w", w.m.table, err)
			}
			w.rep.Rows++
			if here && isIndexRow(&row) {
				continue
			}
			if row.PartitionKey != pk {
				if err := flush(); err != nil {
					return err
				}
				pk = row.PartitionKey
			}
			rows = append(rows, row)
		}
		return flush()
	}
	if w.parts == nil {
		return scan(store.Query{})
	}
	for _, p := range w.parts {
		if err := scan(store.Query{Filter: filter.PK.Eq(p).String()}); err != nil {
			return err
		}
	}
	return nil
}

// partState is what one entity has in its partition.
type partState struct {
	pk, id string
	ent    *store.Entity  // nil: no row at its key
	copies []store.Entity // rows of its partition indexes (TkID is its id)
	log    *store.Entity  // its log's newest row
	holder func(rk string) (string, error)
}

// group sorts a partition's rows into the entities they belong to.
func group(pk string, rows []store.Entity) (map[string]*partState, bool) {
	out := map[string]*partState{}
	pending := false
	get := func(id string) *partState {
		if out[id] == nil {
			out[id] = &partState{pk: pk, id: id}
		}
		return out[id]
	}
	for i := range rows {
		row := &rows[i]
		if partition.IsReserved(row.RowKey) {
			pending = pending || strings.HasPrefix(row.RowKey, partition.OutboxPrefix)
			continue
		}
		p, err := keys.Split(row.RowKey)
		if err != nil || len(p) < 2 {
			continue
		}
		switch p[0] {
		case "e":
			if len(p) == 2 {
				get(p[1]).ent = row
			}
		case "u", "i":
			if id, _ := row.Properties[IDProperty].(string); id != "" {
				s := get(id)
				s.copies = append(s.copies, *row)
			}
		case "l":
			// Newest first: the first row of an id is its newest.
			if s := get(p[1]); s.log == nil && len(p) >= 3 {
				s.log = row
			}
		}
	}
	return out, pending
}

// partition judges the entities of one partition from the scan, and
// reads again (one consistent read each) those that look out of step.
func (w *walk[T]) partition(ctx context.Context, pk string, rows []store.Entity) error {
	byRK := map[string]*store.Entity{}
	for i := range rows {
		byRK[rows[i].RowKey] = &rows[i]
	}
	states, pending := group(pk, rows)
	if pending {
		w.pending[pk] = true
	}
	ids := slices.Sorted(maps.Keys(states))
	for _, id := range ids {
		ps := states[id]
		ps.holder = func(rk string) (string, error) {
			if r := byRK[rk]; r != nil {
				h, _ := r.Properties[IDProperty].(string)
				return h, nil
			}
			return "", nil
		}
		fs, err := w.m.judgePart(ps)
		if err != nil {
			return err
		}
		if len(fs) > 0 {
			fresh, err := w.m.readPart(ctx, pk, id)
			if err != nil {
				return err
			}
			ps = fresh
			if fs, err = w.m.judgePart(ps); err != nil {
				return err
			}
		}
		ek, _ := entityKey(id)
		src := eventual.Ref{Table: w.m.table, PartitionKey: pk, RowKey: ek}
		for _, f := range fs {
			if f.Drift == DriftBypassed || f.Drift == DriftDeleted {
				w.roots[src] = true
			}
			w.add(f)
		}
		if ps.ent != nil {
			bf, err := w.m.blobFindings(ctx, pk, id, ps.ent)
			if err != nil {
				return err
			}
			for _, f := range bf {
				w.add(f)
			}
			w.rep.Entities++
			inf, err := w.m.infoOf(pk, ps.ent)
			if err != nil {
				return err
			}
			if inf != nil {
				w.ents[src] = inf
			}
		}
	}
	return w.checkLists(ctx, pk, rows)
}

// readPart reads what entity id has in partition pk as one consistent
// state: its row, its copies, its log's newest row.
func (m *Model[T]) readPart(ctx context.Context, pk, id string) (*partState, error) {
	ek, err := entityKey(id)
	if err != nil {
		return nil, refuse("id %q: %v", id, err)
	}
	tbl := m.st.Table(m.table)
	p, err := partition.New(tbl, pk, nil)
	if err != nil {
		return nil, err
	}
	snap, err := p.Read(ctx, &partition.ReadOptions{Where: filter.Or(filter.RK.Eq(ek), filter.Prop(IDProperty).Eq(id))})
	if err != nil {
		return nil, fmt.Errorf("model: check: entity (%q, %q): %w", pk, id, err)
	}
	states, _ := group(pk, snap.Rows)
	ps := states[id]
	if ps == nil {
		ps = &partState{pk: pk, id: id}
	}
	ps.holder = func(rk string) (string, error) {
		r, err := tbl.Get(ctx, pk, rk, nil)
		if store.EntityNotFound(err) {
			return "", nil
		}
		h, _ := r.Properties[IDProperty].(string)
		return h, err
	}
	return ps, nil
}

// judgePart finds the drift of one entity in its partition.
func (m *Model[T]) judgePart(ps *partState) ([]Finding, error) {
	ek, err := entityKey(ps.id)
	if err != nil {
		return nil, nil // not a key the model made
	}
	src := eventual.Ref{Table: m.table, PartitionKey: ps.pk, RowKey: ek}
	mk := func(d Drift, feat, rk, detail string, args ...any) Finding {
		return Finding{Drift: d, Feature: feat, Row: eventual.Ref{Table: m.table, PartitionKey: ps.pk, RowKey: rk},
			Entity: src, Detail: fmt.Sprintf(detail, args...), scope: inPartition}
	}
	ent := ps.ent
	if ent != nil && moving(ent) {
		return nil, nil // in flight: its copies left with it
	}
	if ent != nil {
		if err := m.intact(ent); err != nil {
			var be *BypassError
			errors.As(err, &be)
			return []Finding{mk(DriftBypassed, "", ek, "%s", be.Reason)}, nil
		}
	}
	if ent == nil {
		if m.log && ps.log != nil {
			if op, _ := ps.log.Properties[OpProperty].(string); op != "delete" {
				return []Finding{mk(DriftDeleted, "", ek, "the entity row is gone, its log's newest entry is %q at version %d", op, eventual.VersionOf(ps.log))}, nil
			}
		}
		var out []Finding
		for _, c := range ps.copies {
			out = append(out, mk(DriftDangling, featureOf(c.RowKey), c.RowKey, "entity %q does not exist", ps.id))
		}
		return out, nil
	}
	props := own(ent.Properties)
	v, err := decodeProps[T](ps.pk, ps.id, props, "")
	if err != nil {
		return nil, err
	}
	ev, sum := eventual.VersionOf(ent), digest(props, nil)
	want := map[string]string{} // RowKey -> index
	sums := map[string]string{} // RowKey -> the copy's digest
	for _, f := range m.specs {
		if f.global {
			continue
		}
		if val := f.value(v); val != "" {
			if k, err := localKey(f, val, ps.id); err == nil {
				want[k], sums[k] = f.name, copySum(f, props, sum)
			}
		}
	}
	var out []Finding
	seen := map[string]bool{}
	for _, c := range ps.copies {
		name, ok := want[c.RowKey]
		switch cv := eventual.VersionOf(&c); {
		case !ok:
			out = append(out, mk(DriftDangling, featureOf(c.RowKey), c.RowKey, "entity %q no longer holds the value", ps.id))
		case cv != ev || digest(own(c.Properties), nil) != sums[c.RowKey]:
			out = append(out, mk(DriftBehind, name, c.RowKey, "the copy is at version %d, the entity at %d", cv, ev))
		}
		seen[c.RowKey] = true
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if seen[k] {
			continue
		}
		detail := "no copy"
		h, err := ps.holder(k)
		if err != nil {
			return nil, err
		}
		if h != "" {
			detail = fmt.Sprintf("the value's row is entity %q's", h)
		}
		out = append(out, mk(DriftMissing, want[k], k, "%s", detail))
	}
	if m.log {
		lk, _ := logKey(ps.id, ev)
		l := ps.log
		switch {
		case l == nil:
			out = append(out, mk(DriftLog, "log", lk, "no log entry"))
		case eventual.VersionOf(l) != ev || digest(own(l.Properties), nil) != sum:
			out = append(out, mk(DriftLog, "log", l.RowKey, "the newest entry is at version %d, the entity at %d", eventual.VersionOf(l), ev))
		default:
			if op, _ := l.Properties[OpProperty].(string); op == "delete" {
				out = append(out, mk(DriftLog, "log", l.RowKey, "the newest entry is a delete"))
			}
		}
	}
	return out, nil
}

// featureOf names the index of a partition copy's RowKey.
func featureOf(rk string) string {
	if p, err := keys.Split(rk); err == nil && len(p) >= 2 {
		return p[1]
	}
	return ""
}

// indexes walks the index table's rows of the model's global indexes.
func (w *walk[T]) indexes(ctx context.Context) error {
	m := w.m
	var global bool
	for _, f := range m.specs {
		global = global || f.kind == featIndex && f.global
	}
	if !global {
		return nil
	}
	rng, err := keys.PrefixOf("x")
	if err != nil {
		return err
	}
	c := filter.PK.InRange(rng)
	if err := c.Err(); err != nil {
		return fmt.Errorf("model: check: %w", err)
	}
	seen := map[at]eventual.Ref{}
	for _, t := range m.globalTables() {
		for row, err := range store.All(ctx, m.st.Table(t), store.Query{Filter: c.String()}) {
			if err != nil {
				return fmt.Errorf("model: check: scan of %s: %w", t, err)
			}
			w.rep.Rows++
			f := m.indexOf(&row)
			o := owner(&row)
			if f == nil || !strings.EqualFold(f.table, t) || o.Table != m.table || !w.in(o.PartitionKey) {
				continue
			}
			a := at{row.PartitionKey, row.RowKey}
			seen[a] = o
			if fd := m.judgeIndex(f, a, o, &row, w.ents[o], w.roots[o]); fd != nil {
				if err := w.confirmIndex(ctx, f, a, o); err != nil {
					return err
				}
			}
		}
	}
	for _, o := range sortedRefs(w.ents) {
		inf := w.ents[o]
		for _, f := range m.specs {
			a, ok := inf.globals[f.name]
			if !ok || seen[a] == o {
				continue
			}
			if err := w.confirmIndex(ctx, f, a, o); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedRefs(m map[eventual.Ref]*entInfo) []eventual.Ref {
	return slices.SortedFunc(maps.Keys(m), compareRefs)
}

func compareRefs(a, b eventual.Ref) int {
	return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.PartitionKey, b.PartitionKey), cmp.Compare(a.RowKey, b.RowKey))
}

// indexOf is the global index of m a row of the index table belongs to.
func (m *Model[T]) indexOf(row *store.Entity) *Feature[T] {
	if !isIndexRow(row) {
		return nil
	}
	p, _ := keys.Split(row.PartitionKey)
	f := m.byName[p[1]]
	if f == nil || f.kind != featIndex || !f.global {
		return nil
	}
	return f
}

// judgeIndex judges the row at a (nil: none) of global index f for
// entity o, whose state is inf (nil: gone or written without the model;
// root: its own finding covers it).
func (m *Model[T]) judgeIndex(f *Feature[T], a at, o eventual.Ref, row *store.Entity, inf *entInfo, root bool) *Finding {
	if root || inf != nil && inf.moving {
		return nil
	}
	mk := func(d Drift, cv int64, detail string, args ...any) *Finding {
		return &Finding{Drift: d, Feature: f.name, Row: eventual.Ref{Table: f.table, PartitionKey: a.pk, RowKey: a.rk},
			Entity: o, Detail: fmt.Sprintf(detail, args...), scope: inIndex, cv: cv}
	}
	maps := inf != nil && inf.globals[f.name] == a
	if row == nil {
		if maps {
			return mk(DriftMissing, 0, "no copy")
		}
		return nil
	}
	if ro := owner(row); ro != o {
		if maps {
			return mk(DriftMissing, 0, "the value's row is %s's", ro)
		}
		return nil
	}
	cv := eventual.VersionOf(row)
	switch {
	case cv == 0 && maps:
		return mk(DriftMissing, 0, "only the claim of a write is there, no copy")
	case cv == 0 && m.o.Now().Sub(claimedAt(row)) >= m.o.ClaimLease:
		return mk(DriftDangling, 0, "a claim older than the lease, of an entity that does not hold the value")
	case cv == 0:
		return nil // a write in progress
	case !maps:
		return mk(DriftDangling, cv, "the entity is gone or no longer holds the value")
	case cv < inf.v || cv == inf.v && digest(own(row.Properties), nil) != copySum(f, inf.props, inf.sum):
		return mk(DriftBehind, cv, "the copy is at version %d, the entity at %d", cv, inf.v)
	}
	return nil
}

// confirmIndex reads the row at a and its entity o again and adds what
// they still show.
func (w *walk[T]) confirmIndex(ctx context.Context, f *Feature[T], a at, o eventual.Ref) error {
	m := w.m
	var row *store.Entity
	r, err := m.st.Table(f.table).Get(ctx, a.pk, a.rk, nil)
	switch {
	case err == nil:
		row = &r
	case !store.EntityNotFound(err):
		return err
	}
	inf, root, err := w.fresh(ctx, o)
	if err != nil {
		return err
	}
	if fd := m.judgeIndex(f, a, o, row, inf, root); fd != nil {
		if fd.Pending, err = w.pendingAt(ctx, o.PartitionKey); err != nil {
			return err
		}
		w.add(*fd)
	}
	return nil
}

// fresh reads entity o again: what its copies must hold, or root when
// its own finding covers them.
func (w *walk[T]) fresh(ctx context.Context, o eventual.Ref) (*entInfo, bool, error) {
	if w.roots[o] {
		return nil, true, nil
	}
	row, found, err := o.Read(ctx, w.m.st)
	if err != nil || !found {
		return nil, false, err
	}
	inf, err := w.m.infoOf(o.PartitionKey, &row)
	return inf, inf == nil, err
}

// pendingAt reports whether partition pk holds an operation not run yet.
func (w *walk[T]) pendingAt(ctx context.Context, pk string) (bool, error) {
	ob, err := partition.NewOutbox(w.m.st.Table(w.m.table), nil)
	if err != nil {
		return false, err
	}
	rows, err := ob.Pending(ctx, pk)
	return len(rows) > 0, err
}

// copies walks the rows of copy f's tables that hold a copy of the
// model's entities.
func (w *walk[T]) copies(ctx context.Context, f *Feature[T]) error {
	m := w.m
	_, srcP := copyProps(f)
	c := filter.Prop(srcP).Gt("")
	seen := map[eventual.Ref]eventual.Ref{}
	for _, tbl := range f.tables {
		for row, err := range store.All(ctx, m.st.Table(tbl), store.Query{Filter: c.String()}) {
			if err != nil {
				return fmt.Errorf("model: check: scan of %s: %w", tbl, err)
			}
			w.rep.Rows++
			s, _ := row.Properties[srcP].(string)
			o, err := parseRef(s)
			if err != nil || o.Table != m.table || !w.in(o.PartitionKey) {
				continue
			}
			a := eventual.Ref{Table: tbl, PartitionKey: row.PartitionKey, RowKey: row.RowKey}
			seen[a] = o
			if fd := m.judgeCopy(f, a, o, &row, w.ents[o], w.roots[o]); fd != nil {
				if err := w.confirmCopy(ctx, f, a, o); err != nil {
					return err
				}
			}
		}
	}
	for _, o := range sortedRefs(w.ents) {
		ts := w.ents[o].targets[f.name]
		for _, a := range slices.SortedFunc(maps.Keys(ts), compareRefs) {
			if seen[a] == o {
				continue
			}
			if err := w.confirmCopy(ctx, f, a, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdsCopy reports whether target row holds copy f of src: its source
// and at least one copied property.
func holdsCopy[T any](f *Feature[T], row *store.Entity, src eventual.Ref) bool {
	_, srcP := copyProps(f)
	if s, _ := row.Properties[srcP].(string); s != srcString(src) {
		return false
	}
	for _, p := range f.outs {
		if _, ok := row.Properties[p]; ok {
			return true
		}
	}
	return false
}

// judgeCopy judges target row a (nil: none) of copy f for entity o.
func (m *Model[T]) judgeCopy(f *Feature[T], a eventual.Ref, o eventual.Ref, row *store.Entity, inf *entInfo, root bool) *Finding {
	if root || inf != nil && inf.moving || row == nil {
		return nil // the model never creates a target row
	}
	verP, srcP := copyProps(f)
	cv, _ := row.Properties[verP].(int64)
	mk := func(d Drift, detail string, args ...any) *Finding {
		return &Finding{Drift: d, Feature: f.name, Row: a,
			Entity: o, Detail: fmt.Sprintf(detail, args...), scope: inCopy, cv: cv}
	}
	maps := inf != nil && inf.targets[f.name][a]
	holds := holdsCopy(f, row, o)
	if !maps {
		if holds {
			return mk(DriftDangling, "the entity is gone or no longer maps to this row")
		}
		return nil
	}
	if s, _ := row.Properties[srcP].(string); s != srcString(o) && s != "" {
		return mk(DriftMissing, "the row holds the copy of %s", s)
	}
	if !holds {
		return mk(DriftMissing, "no copy")
	}
	got := map[string]any{}
	for _, p := range f.outs {
		got[p] = row.Properties[p]
	}
	if cv < inf.v || digest(got, nil) != digest(inf.copied[f.name], nil) {
		return mk(DriftBehind, "the copy is at version %d, the entity at %d", cv, inf.v)
	}
	return nil
}

func (w *walk[T]) confirmCopy(ctx context.Context, f *Feature[T], a eventual.Ref, o eventual.Ref) error {
	m := w.m
	r, err := m.st.Table(a.Table).Get(ctx, a.PartitionKey, a.RowKey, nil)
	if store.EntityNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	inf, root, err := w.fresh(ctx, o)
	if err != nil {
		return err
	}
	if fd := m.judgeCopy(f, a, o, &r, inf, root); fd != nil {
		if fd.Pending, err = w.pendingAt(ctx, o.PartitionKey); err != nil {
			return err
		}
		w.add(*fd)
	}
	return nil
}

// errNothing ends a repair transaction that finds nothing to mend.
var errNothing = errors.New("model: nothing to mend")

// mend repairs the findings of one walk, recording each outcome; an
// entity whose repair is unknown joins unknown.
func (m *Model[T]) mend(ctx context.Context, todo []Finding, unknown map[eventual.Ref]bool) {
	done := map[eventual.Ref]Outcome{}
	listed := map[eventual.Ref]Outcome{} // list rows mended, whole
	var errs = map[eventual.Ref]error{}
	for i := range todo {
		f := &todo[i]
		if f.scope != inPartition {
			continue
		}
		if _, ok := done[f.Entity]; !ok {
			err := m.mendPart(ctx, f.Entity)
			done[f.Entity], errs[f.Entity] = outcomeOf(err), err
			if done[f.Entity] == Unknown {
				unknown[f.Entity] = true
			}
		}
		f.Outcome, f.Err = done[f.Entity], errs[f.Entity]
	}
	for i := range todo {
		f := &todo[i]
		if f.scope == inPartition {
			continue
		}
		if _, ok := done[f.Entity]; ok && f.scope != inList {
			// Written again just now: its copies are judged on the next walk.
			f.Outcome = Skipped
			continue
		}
		var err error
		switch f.scope {
		case inIndex:
			err = m.mendIndex(ctx, f)
		case inBlob:
			err = fmt.Errorf("%w: Repair cannot restore a blob's bytes: write the value again", ErrBlobMissing)
		case inList:
			if listed[f.Row] != "" {
				f.Outcome = listed[f.Row] // the row was written again just now
				continue
			}
			err = m.mendList(ctx, f)
		default:
			err = m.mendCopy(ctx, f)
		}
		f.Outcome, f.Err = outcomeOf(err), err
		if f.scope == inList {
			listed[f.Row] = f.Outcome
		}
		if f.Outcome == Unknown {
			unknown[f.Entity] = true
		}
	}
}

func outcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Repaired
	case errors.Is(err, errNothing), errors.Is(err, partition.ErrChanged), errors.Is(err, partition.ErrConflict),
		errors.Is(err, ErrMoving), errors.Is(err, store.ErrPreconditionFailed):
		return Skipped
	case errors.Is(err, store.ErrUnknownOutcome):
		return Unknown
	}
	return Failed
}

// mendPart mends the rows of entity src in its partition in one
// transaction through the engine, planned on a consistent read made
// inside the transaction's attempt.
func (m *Model[T]) mendPart(ctx context.Context, src eventual.Ref) error {
	pk, ek, id := src.PartitionKey, src.RowKey, idOf(src.RowKey)
	token, err := newToken()
	if err != nil {
		return err
	}
	var w txWrite
	_, err = m.eng.Write(ctx, m.table, pk, func(tx *eventual.Tx) error {
		w = txWrite{labels: map[string][2]string{}}
		return m.planRepair(ctx, tx, &w, token, pk, id, ek)
	})
	if err != nil {
		if !errors.Is(err, store.ErrUnknownOutcome) {
			m.release(ctx, w.claims)
		}
		return m.named(ctx, pk, err, w.labels)
	}
	return nil
}

// planRepair plans the repair of entity id of partition pk: an entity
// row written again (adopted when written without the model) with every
// copy it maps to in the partition and a log entry, the copies it does
// not map to removed, the intent for its copies elsewhere; or, for an
// entity gone, the removal of its copies and a "delete" log entry.
func (m *Model[T]) planRepair(ctx context.Context, tx *eventual.Tx, w *txWrite, token, pk, id, ek string) error {
	ps, err := m.readPart(ctx, pk, id)
	if err != nil {
		return err
	}
	fs, err := m.judgePart(ps)
	if err != nil {
		return err
	}
	if len(fs) == 0 {
		return errNothing
	}
	if ps.ent == nil {
		n := len(ps.copies)
		for i, c := range ps.copies {
			if err := tx.Delete(fmt.Sprintf("copy %d", i), c.RowKey, c.ETag); err != nil {
				return err
			}
		}
		if m.log && ps.log != nil && ps.log.Properties[OpProperty] != "delete" {
			lk, err := logKey(id, tx.Version())
			if err != nil {
				return err
			}
			if err := tx.Insert("log", store.Entity{RowKey: lk, Properties: map[string]any{OpProperty: "delete", IDProperty: id}}); err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			return errNothing
		}
		return nil
	}
	bypassed := m.intact(ps.ent) != nil
	props := own(ps.ent.Properties)
	now, err := decodeProps[T](pk, id, props, "")
	if err != nil {
		return err
	}
	ent := store.Entity{PartitionKey: pk, RowKey: ek, Properties: withRefs(props, blobRefs(ps.ent))}
	m.stampSum(ent.Properties)
	if err := tx.Update("entity", ent, store.Replace, ps.ent.ETag); err != nil {
		return err
	}
	mine := map[string]store.ETag{}
	for _, c := range ps.copies {
		mine[c.RowKey] = c.ETag
	}
	wanted := map[string]bool{}
	for _, f := range m.specs {
		if f.global {
			continue
		}
		val := f.value(now)
		if val == "" {
			continue
		}
		k, err := localKey(f, val, id)
		if err != nil {
			return refuse("index %s: value %q: %v", f.name, val, err)
		}
		label := "index " + f.name
		w.labels[label] = [2]string{f.name, val}
		c := store.Entity{RowKey: k, Properties: carried(f, props)}
		c.Properties[IDProperty] = id
		m.stampCopy(c.Properties)
		if etag, ok := mine[k]; ok {
			err = tx.Update(label, c, store.Replace, etag)
		} else {
			err = tx.Insert(label, c)
		}
		if err != nil {
			return err
		}
		wanted[k] = true
	}
	for i, c := range ps.copies {
		if !wanted[c.RowKey] {
			if err := tx.Delete(fmt.Sprintf("old copy %d", i), c.RowKey, c.ETag); err != nil {
				return err
			}
		}
	}
	if m.log {
		op := "repair"
		if bypassed {
			op = "update"
			if ps.log == nil {
				op = "insert"
			}
		}
		lk, err := logKey(id, tx.Version())
		if err != nil {
			return err
		}
		lp := maps.Clone(props)
		lp[OpProperty], lp[IDProperty] = op, id
		if err := tx.Insert("log", store.Entity{RowKey: lk, Properties: lp}); err != nil {
			return err
		}
	}
	// Lists: the entity joins those of its values (a list naming it
	// under a value it no longer holds is a finding of its own).
	if err := m.planLists(ctx, tx, pk, id, nil, now); err != nil {
		return err
	}
	old := now
	if bypassed {
		old = nil // claim every global value: another entity may hold one
	}
	return m.planGlobal(ctx, tx, w, token, pk, id, ek, old, now, props)
}

// mendIndex mends a finding of a global index with the engine's guarded
// steps, at the entity's version as read now.
func (m *Model[T]) mendIndex(ctx context.Context, fd *Finding) error {
	f := m.byName[fd.Feature]
	a := at{fd.Row.PartitionKey, fd.Row.RowKey}
	o := fd.Entity
	if fd.Drift == DriftDangling {
		if fd.cv > 0 {
			return m.del(ctx, f, a, o, fd.cv)
		}
		return m.dropStaleClaim(ctx, f, a, o)
	}
	row, found, err := o.Read(ctx, m.st)
	if err != nil || !found || moving(&row) {
		return err
	}
	if err := m.intact(&row); err != nil {
		return fmt.Errorf("%w: %w", errNothing, err)
	}
	ev := eventual.VersionOf(&row)
	want := store.Entity{PartitionKey: a.pk, RowKey: a.rk, Properties: carried(f, own(row.Properties))}
	m.stampOwner(want.Properties, o)
	tbl := m.st.Table(f.table)
	cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
	if err != nil && !store.EntityNotFound(err) {
		return err
	}
	if err == nil && owner(&cur) == o && eventual.VersionOf(&cur) == ev {
		// A copy at the entity's version holding other values: written
		// over without the model. Write it again over the ETag read.
		if _, _, holds, err := m.current(ctx, f, o, a); err != nil || !holds {
			return err
		}
		want.Properties[eventual.VersionProperty] = ev
		_, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		return err
	}
	return m.putCopy(ctx, f, want, o, ev, "")
}

// dropStaleClaim removes a bare claim older than the lease whose entity
// does not hold the value (If-Match the ETag read).
func (m *Model[T]) dropStaleClaim(ctx context.Context, f *Feature[T], a at, o eventual.Ref) error {
	tbl := m.st.Table(f.table)
	cur, err := tbl.Get(ctx, a.pk, a.rk, nil)
	if store.EntityNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if owner(&cur) != o || eventual.VersionOf(&cur) != 0 || m.o.Now().Sub(claimedAt(&cur)) < m.o.ClaimLease {
		return errNothing
	}
	if _, _, holds, err := m.current(ctx, f, o, a); err != nil || holds {
		return err
	}
	err = tbl.Delete(ctx, a.pk, a.rk, cur.ETag)
	if store.EntityNotFound(err) {
		return nil
	}
	return err
}

// mendCopy mends a finding of a CopyTo target with the engine's guarded
// steps, at the entity's version as read now.
func (m *Model[T]) mendCopy(ctx context.Context, fd *Finding) error {
	f := m.byName[fd.Feature]
	a := fd.Row
	o := fd.Entity
	if fd.Drift == DriftDangling {
		return m.copyDel(ctx, f, a, o, fd.cv)
	}
	row, found, err := o.Read(ctx, m.st)
	if err != nil || !found || moving(&row) {
		return err
	}
	if err := m.intact(&row); err != nil {
		return fmt.Errorf("%w: %w", errNothing, err)
	}
	ev := eventual.VersionOf(&row)
	props := own(row.Properties)
	want := store.Entity{PartitionKey: a.PartitionKey, RowKey: a.RowKey, Properties: map[string]any{}}
	for i, p := range f.props {
		want.Properties[f.outs[i]] = props[p]
	}
	verP, srcP := copyProps(f)
	tbl := m.st.Table(a.Table)
	cur, err := tbl.Get(ctx, a.PartitionKey, a.RowKey, nil)
	if store.EntityNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	s, _ := cur.Properties[srcP].(string)
	if cv, _ := cur.Properties[verP].(int64); s == srcString(o) && cv >= ev {
		if cv > ev {
			return errNothing
		}
		// The copy at the entity's version holding other values, or
		// none: merge them again over the ETag read, if the entity
		// still maps here.
		if ok, err := m.mapsTo(ctx, f, o, a); err != nil || !ok {
			return err
		}
		want.Properties[verP], want.Properties[srcP] = ev, s
		_, err := tbl.Update(ctx, want, store.Merge, cur.ETag)
		return err
	}
	return m.copyPut(ctx, f, a.Table, want, o, ev)
}
