package model

import (
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

// ListProperty holds the ids of a list row: the ids of the entities of
// the partition holding the row's value, in id order, one per line (a
// RowKey holds no control character, so no id holds a line break).
const ListProperty = "TkIDs"

// MaxListUnits bounds a segment of a list: its ids, joined by line
// breaks, fill one string property, at most 32,767 UTF-16 units (the
// service's limit of a string property is 64 KiB). A value's list spans
// up to MaxListSegments segments; Options.ListSegmentUnits sets a
// smaller segment.
const MaxListUnits = 32_767

// List declares an index entity in the entity's partition: for each
// value, the ids of the partition's entities that hold it, in segments
// (rows Join("n", name, value, bound), each of at most
// Options.ListSegmentUnits UTF-16 units of ids, at most MaxListSegments
// of them), written in the same transaction as the entity, so the list
// and the entities never disagree. A write reads the value's segments
// (one range query) and rewrites only the one it changes (two when it
// splits); ListIDs reads a list with one range query; ListOf reads the
// entities it names. An empty value is not listed. Writers of one value
// contend on its segments (through the partition's fence). A list row
// written before segments, Join("n", name, value), is read as the
// value's first segment and rewritten in place.
func List[T any](name string, value func(*T) string) Feature[T] {
	return Feature[T]{kind: featList, name: name, value: value}
}

// addList checks and records a List feature at Define.
func (m *Model[T]) addList(f *Feature[T]) error {
	if !indexName.MatchString(f.name) {
		return refuse("list name %q: 1 to 63 letters, digits or _, starting with a letter", f.name)
	}
	if f.value == nil {
		return refuse("list %s has no value function", f.name)
	}
	if m.byName[f.name] != nil || slices.ContainsFunc(m.lists, func(l *Feature[T]) bool { return l.name == f.name }) {
		return refuse("%s is declared twice", f.name)
	}
	m.lists = append(m.lists, f)
	return nil
}

// list returns the List feature name.
func (m *Model[T]) list(name string) (*Feature[T], error) {
	for _, f := range m.lists {
		if f.name == name {
			return f, nil
		}
	}
	return nil, refuse("no list named %q is declared", name)
}

// listKey is the RowKey of the row of list f for value.
func listKey[T any](f *Feature[T], value string) (string, error) {
	k, err := keys.Join("n", f.name, value)
	if err != nil {
		return "", refuse("list %s: value %q: %v", f.name, value, err)
	}
	return k, nil
}

// idsOf reads the ids a list row holds.
func idsOf(row *store.Entity) []string {
	s, _ := row.Properties[ListProperty].(string)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// planLists adds to tx the changes of the lists entity id of partition pk
// leaves (the values of old) and joins (those of now); nil old or now for
// none. Each list row is read in the attempt and rewritten whole: every
// write of the model in the partition goes through its fence, so the row
// read is the row the transaction replaces.
func (m *Model[T]) planLists(ctx context.Context, tx *eventual.Tx, pk, id string, old, now *T) error {
	for _, f := range m.lists {
		var was, is string
		if old != nil {
			was = f.value(old)
		}
		if now != nil {
			is = f.value(now)
		}
		if was == is {
			continue
		}
		if was != "" {
			if err := m.editList(ctx, tx, f, pk, was, id, false); err != nil {
				return err
			}
		}
		if is != "" {
			if err := m.editList(ctx, tx, f, pk, is, id, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// editList adds id to (or removes it from) the list f of value.
func (m *Model[T]) editList(ctx context.Context, tx *eventual.Tx, f *Feature[T], pk, value, id string, add bool) error {
	if _, err := listKey(f, value); err != nil {
		if !add {
			return nil // a stored value made a valid key when it was written
		}
		return err
	}
	return m.editSegments(ctx, tx, f, pk, value, id, add)
}

// listsFit checks that entity id, as v, can join the lists of its values
// in partition pk: what a move checks before it writes anything, since
// its arrival there would be refused (a list past MaxListSegments, a
// value that makes no key) with the entity in flight. One range query
// per list with a value.
func (m *Model[T]) listsFit(ctx context.Context, pk, id string, v *T) error {
	for _, f := range m.lists {
		val := f.value(v)
		if val == "" {
			continue
		}
		if _, err := listKey(f, val); err != nil {
			return err
		}
		if _, _, err := m.planSegments(ctx, f, pk, val, id, true); err != nil {
			return err
		}
	}
	return nil
}

// ListIDs returns the ids of the entities of partition pk that hold value
// in list name, in id order: one range query of the value's segments. No
// entity holding it is an empty list, not an error.
func (m *Model[T]) ListIDs(ctx context.Context, name, pk, value string) ([]string, error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	f, err := m.list(name)
	if err != nil {
		return nil, err
	}
	k, err := listKey(f, value)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateKeys(pk, k); err != nil {
		return nil, fmt.Errorf("model: list %s: %w", name, err)
	}
	segs, err := m.segmentsOf(ctx, f, pk, value)
	if err != nil {
		return nil, err
	}
	return unionOf(segs), nil
}

// listReads bounds the point reads ListOf (and GetHolding by default)
// has in flight at once.
const listReads = 8

// ListOf returns the entities of partition pk that hold value in list
// name, in id order: the list row, then each entity it names (up to 8
// point reads at once), each with its ETag. An entity that a write moved
// away from the value (or deleted) between the two reads is left out,
// never returned holding another value.
func (m *Model[T]) ListOf(ctx context.Context, name, pk, value string) ([]*T, error) {
	ids, err := m.ListIDs(ctx, name, pk, value)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	ks := make([]store.Key, len(ids))
	for i, id := range ids {
		ks[i] = store.Key{PartitionKey: pk, RowKey: id}
	}
	return m.GetHolding(ctx, name, value, ks, listReads)
}

// listRange is the range of RowKeys of the list rows of a partition.
func listRange() (keys.Range, error) { return keys.PrefixOf("n") }

// entityRange is the range of RowKeys of the entity rows of a partition.
func entityRange() (keys.Range, error) { return keys.PrefixOf("e") }

// holdersIn reads partition pk's entity rows and returns what holders
// makes of them.
func (m *Model[T]) holdersIn(ctx context.Context, pk string) (map[string]map[string][]string, error) {
	rng, err := entityRange()
	if err != nil {
		return nil, err
	}
	var rows []store.Entity
	c := filter.PK.Eq(pk).And(filter.RK.InRange(rng))
	for row, err := range store.All(ctx, m.st.Table(m.table), store.Query{Filter: c.String()}) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return m.holders(pk, rows)
}

// holders returns, for each list, each value and the ids of the
// entities among rows (rows of partition pk) holding it. Entities in
// flight (moving) and rows the model did not write are left out: their
// lists are judged once they arrived or were repaired. Rows of other
// kinds are skipped.
func (m *Model[T]) holders(pk string, rows []store.Entity) (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	for i := range rows {
		row := &rows[i]
		id := idOf(row.RowKey)
		if id == "" || moving(row) || m.intact(row) != nil {
			continue
		}
		v, err := decodeProps[T](pk, id, own(row.Properties), "")
		if err != nil {
			return nil, err
		}
		m.addHolder(out, id, v)
	}
	return out, nil
}

// addHolder records the values entity id (as v) holds in each list.
func (m *Model[T]) addHolder(out map[string]map[string][]string, id string, v *T) {
	for _, f := range m.lists {
		val := f.value(v)
		if val == "" {
			continue
		}
		if out[f.name] == nil {
			out[f.name] = map[string][]string{}
		}
		out[f.name][val] = append(out[f.name][val], id)
	}
}

// listsIn returns the segments among a partition's rows: list name ->
// value -> segments, in bound order.
func (m *Model[T]) listsIn(rows []store.Entity) map[string]map[string][]segment {
	out := map[string]map[string][]segment{}
	for i := range rows {
		p, err := keys.Split(rows[i].RowKey)
		if err != nil || len(p) < 3 || len(p) > 4 || p[0] != "n" {
			continue
		}
		f, err := m.list(p[1])
		if err != nil {
			continue
		}
		s, _ := segmentOf(f, p[2], &rows[i])
		if out[p[1]] == nil {
			out[p[1]] = map[string][]segment{}
		}
		out[p[1]][p[2]] = append(out[p[1]][p[2]], s)
	}
	for _, vs := range out {
		for _, segs := range vs {
			sortSegments(segs)
		}
	}
	return out
}

// judgeLists compares the lists a partition holds (have) with those its
// entities give (want): an id no segment names is missing; an id a
// segment names that does not hold the value (or is gone), that an
// earlier segment names too, or that lies outside the segment's range
// of ids (from its bound to the next one's) dangles, and so does a
// segment that names no id.
func (m *Model[T]) judgeLists(pk string, have map[string]map[string][]segment, want map[string]map[string][]string) []Finding {
	var out []Finding
	for _, f := range m.lists {
		values := map[string]bool{}
		for v := range have[f.name] {
			values[v] = true
		}
		for v := range want[f.name] {
			values[v] = true
		}
		for _, v := range slices.Sorted(maps.Keys(values)) {
			first, err := segmentKey(f, v, "")
			if err != nil {
				continue
			}
			segs, w := have[f.name][v], slices.Sorted(slices.Values(want[f.name][v]))
			add := func(d Drift, rk, id, detail string, args ...any) {
				fd := Finding{Drift: d, Feature: f.name, Row: eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: rk},
					Detail: fmt.Sprintf("list %s of value %q "+detail, append([]any{f.name, v}, args...)...), scope: inList}
				if id != "" {
					ek, _ := entityKey(id)
					fd.Entity = eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: ek}
				}
				out = append(out, fd)
			}
			named := map[string]string{} // id -> the segment naming it first
			for j, s := range segs {
				if len(s.ids) == 0 {
					add(DriftDangling, s.key, "", "has a segment (bound %q) that names no id", s.bound)
				}
				for _, id := range s.ids {
					other, twice := named[id]
					if !twice {
						named[id] = s.bound
					}
					switch _, in := slices.BinarySearch(w, id); {
					case !in:
						add(DriftDangling, s.key, id, "names entity %q, which does not hold it", id)
					case twice:
						add(DriftDangling, s.key, id, "names entity %q in two segments (bounds %q and %q)", id, other, s.bound)
					case id < s.bound || j+1 < len(segs) && id >= segs[j+1].bound:
						// A write finds an id's segment by the bounds.
						add(DriftDangling, s.key, id, "names entity %q in the segment of bound %q, outside its range", id, s.bound)
					}
				}
			}
			for _, id := range w {
				if _, in := named[id]; !in {
					rk := first
					if len(segs) > 0 {
						rk = segs[route(segs, id)].key
					}
					add(DriftMissing, rk, id, "does not name entity %q, which holds it", id)
				}
			}
		}
	}
	return out
}

// checkLists judges the lists of partition pk from the walk's scan, and
// when it finds drift, again from one consistent read of the partition's
// entity and list rows, which is what it reports.
func (w *walk[T]) checkLists(ctx context.Context, pk string, rows []store.Entity) error {
	m := w.m
	if len(m.lists) == 0 {
		return nil
	}
	want, err := m.holders(pk, rows)
	if err != nil {
		return err
	}
	if len(m.judgeLists(pk, m.listsIn(rows), want)) == 0 {
		return nil
	}
	fs, err := m.readLists(ctx, pk)
	if err != nil {
		return err
	}
	for _, f := range fs {
		// A bypassed or deleted entity's findings are its own: Repair
		// writes it again (joining its lists), and the next walk judges
		// what its lists still name.
		if !w.roots[f.Entity] {
			w.add(f)
		}
	}
	return nil
}

// readLists judges the lists of partition pk on one consistent read of
// its entity and list rows.
func (m *Model[T]) readLists(ctx context.Context, pk string) ([]Finding, error) {
	p, err := partition.New(m.st.Table(m.table), pk, nil)
	if err != nil {
		return nil, err
	}
	er, err := entityRange()
	if err != nil {
		return nil, err
	}
	lr, err := listRange()
	if err != nil {
		return nil, err
	}
	snap, err := p.Read(ctx, &partition.ReadOptions{Where: filter.Or(filter.RK.InRange(er), filter.RK.InRange(lr))})
	if err != nil {
		return nil, fmt.Errorf("model: check: lists of partition %q: %w", pk, err)
	}
	want, err := m.holders(pk, snap.Rows)
	if err != nil {
		return nil, err
	}
	return m.judgeLists(pk, m.listsIn(snap.Rows), want), nil
}

// mendList writes the list of a finding's value again from the entities
// of its partition, read in the transaction's attempt (the partition's
// fence makes the read and the write one step): their ids packed into
// segments (packSegments), each segment row that differs written, each
// row no longer wanted (an empty segment, a duplicate, a row of the
// format before segments) deleted, all in one transaction.
func (m *Model[T]) mendList(ctx context.Context, fd *Finding) error {
	p, err := keys.Split(fd.Row.RowKey)
	if err != nil || len(p) < 3 || len(p) > 4 || p[0] != "n" {
		return refuse("list row %q: not a key the model made", fd.Row.RowKey)
	}
	f, err := m.list(p[1])
	if err != nil {
		return err
	}
	pk, value := fd.Row.PartitionKey, p[2]
	_, err = m.eng.Write(ctx, m.table, pk, func(tx *eventual.Tx) error {
		holders, err := m.holdersIn(ctx, pk)
		if err != nil {
			return err
		}
		want, err := packSegments(f, value, slices.Sorted(slices.Values(holders[f.name][value])), m.o.ListSegmentUnits)
		if err != nil {
			return err
		}
		have, err := m.segmentsOf(ctx, f, pk, value)
		if err != nil {
			return err
		}
		stored := map[string][]string{}
		for _, s := range have {
			stored[s.key] = s.ids
		}
		label := "list " + f.name
		changed := false
		for _, s := range want {
			ids, ok := stored[s.key]
			delete(stored, s.key)
			if ok && slices.Equal(ids, s.ids) {
				continue
			}
			changed = true
			if err := putSegment(tx, label, s.key, s.ids); err != nil {
				return err
			}
		}
		for _, s := range have {
			if _, left := stored[s.key]; left {
				changed = true
				if err := tx.Delete(label, s.key, store.ETagAny); err != nil {
					return err
				}
			}
		}
		if !changed {
			return errNothing
		}
		return nil
	})
	if errors.Is(err, errNothing) {
		return nil // as it should be: mended by the entity's repair, or a write since
	}
	return err
}
