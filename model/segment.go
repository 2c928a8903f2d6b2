package model

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// MaxListSegments bounds the rows (segments) of one value's list. A
// write changes at most two segments of a value (the one its id joins,
// split in two when it fills), but Repair rewrites a value's list whole,
// in one transaction of the partition: at most 100 rows and a 4 MiB
// body. 32 segments of MaxListUnits each (about 33 KB of JSON when the
// ids are ASCII) keep that transaction under both limits, old and new
// segments together; ids outside ASCII take 6 bytes a UTF-16 unit on the
// wire, so a list of them is bounded by its bytes first
// (listWireBudget). A write that would split a value's list into more
// segments, or make its segments' rows pass that budget, is refused
// before anything is written, naming the count and the limit.
const MaxListSegments = 32

// segment is one row of a value's list: the ids from its bound up to the
// next segment's bound (the first segment also takes the ids below its
// own bound).
type segment struct {
	key   string // the row's RowKey
	bound string // "" for the first segment, and for a row written before segments
	ids   []string
}

// segmentKey is the RowKey of the segment of list f for value whose
// bound is bound.
func segmentKey[T any](f *Feature[T], value, bound string) (string, error) {
	k, err := keys.Join("n", f.name, value, bound)
	if err != nil {
		return "", refuse("list %s: value %q: %v", f.name, value, err)
	}
	return k, nil
}

// valueRange is the range of the RowKeys of the segments of list f for
// value: Join("n", list, value, bound) for each bound, and the row of
// the format before segments, Join("n", list, value), just below them.
func valueRange[T any](f *Feature[T], value string) (keys.Range, error) {
	k, err := listKey(f, value)
	if err != nil {
		return keys.Range{}, err
	}
	r, err := keys.PrefixOf("n", f.name, value)
	if err != nil {
		return keys.Range{}, refuse("list %s: value %q: %v", f.name, value, err)
	}
	r.Lower = k
	return r, nil
}

// segmentOf reads a list row of list f as a segment; ok is false for a
// row of another list or value, or not a list row.
func segmentOf[T any](f *Feature[T], value string, row *store.Entity) (segment, bool) {
	p, err := keys.Split(row.RowKey)
	if err != nil || len(p) < 3 || len(p) > 4 || p[0] != "n" || p[1] != f.name || p[2] != value {
		return segment{}, false
	}
	s := segment{key: row.RowKey, ids: idsOf(row)}
	if len(p) == 4 {
		s.bound = p[3]
	}
	return s, true
}

// sortSegments orders segments by bound, a row of the old format first.
func sortSegments(segs []segment) {
	slices.SortFunc(segs, func(a, b segment) int {
		if c := strings.Compare(a.bound, b.bound); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}

// segmentsOf reads the segments of list f for value in partition pk, in
// bound order: one range query.
func (m *Model[T]) segmentsOf(ctx context.Context, f *Feature[T], pk, value string) ([]segment, error) {
	rng, err := valueRange(f, value)
	if err != nil {
		return nil, err
	}
	c := filter.PK.Eq(pk).And(filter.RK.InRange(rng))
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("model: list %s: %w", f.name, err)
	}
	var segs []segment
	for row, err := range store.All(ctx, m.st.Table(m.table), store.Query{Filter: c.String()}) {
		if err != nil {
			return nil, err
		}
		if s, ok := segmentOf(f, value, &row); ok {
			segs = append(segs, s)
		}
	}
	sortSegments(segs)
	return segs, nil
}

// unionOf returns the ids of segments, sorted, each once.
func unionOf(segs []segment) []string {
	var ids []string
	for _, s := range segs {
		ids = append(ids, s.ids...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// route returns the index of the segment id belongs in: the last whose
// bound is at most id, or the first.
func route(segs []segment, id string) int {
	i := 0
	for j, s := range segs {
		if s.bound <= id {
			i = j
		}
	}
	return i
}

// listUnits is the UTF-16 units of ids joined by line breaks.
func listUnits(ids []string) int {
	n := max(len(ids)-1, 0)
	for _, id := range ids {
		n += keys.UTF16Len(id)
	}
	return n
}

// separator returns the shortest prefix of hi (cut between characters)
// that sorts above lo: a bound between the two halves of a split.
func separator(lo, hi string) string {
	for i := range hi {
		if i > 0 && hi[:i] > lo {
			return hi[:i]
		}
	}
	return hi
}

// editSegments adds id to (or removes it from) the list f of value in
// partition pk: it reads the value's segments and rewrites only the one
// the id is in (or joins), split in two when it passes
// Options.ListSegmentUnits, deleted when it empties.
func (m *Model[T]) editSegments(ctx context.Context, tx *eventual.Tx, f *Feature[T], pk, value, id string, add bool) error {
	puts, dels, err := m.planSegments(ctx, f, pk, value, id, add)
	if err != nil {
		return err
	}
	label := "list " + f.name
	for _, k := range dels {
		if err := tx.Delete(label, k, store.ETagAny); err != nil {
			return err
		}
	}
	for _, r := range puts {
		if err := putSegment(tx, label, r.key, r.ids); err != nil {
			return err
		}
	}
	return nil
}

// planSegments returns the segment rows editSegments writes (puts) and
// deletes (dels), or its refusal (a list past MaxListSegments), reading
// the value's segments.
func (m *Model[T]) planSegments(ctx context.Context, f *Feature[T], pk, value, id string, add bool) (puts []segment, dels []string, err error) {
	segs, err := m.segmentsOf(ctx, f, pk, value)
	if err != nil {
		return nil, nil, err
	}
	if len(segs) == 0 {
		if !add {
			return nil, nil, nil
		}
		k, err := segmentKey(f, value, "")
		if err != nil {
			return nil, nil, err
		}
		return []segment{{key: k, ids: []string{id}}}, nil, nil
	}
	for _, s := range segs {
		// An id one segment holds is removed from it wherever it is (a
		// list Repair has not mended yet may hold it out of its range).
		if _, in := slices.BinarySearch(s.ids, id); in {
			if add {
				return nil, nil, nil
			}
			ids := slices.DeleteFunc(slices.Clone(s.ids), func(x string) bool { return x == id })
			if len(ids) == 0 {
				return nil, []string{s.key}, nil
			}
			return []segment{{key: s.key, ids: ids}}, nil, nil
		}
	}
	if !add {
		return nil, nil, nil
	}
	i := route(segs, id)
	s := segs[i]
	key, old := s.key, ""
	if id < s.bound {
		// An id below every bound (the segment of bound "" was emptied
		// and deleted): the first segment moves to bound "", so that
		// every segment holds only the ids from its bound to the next.
		if key, err = segmentKey(f, value, ""); err != nil {
			return nil, nil, err
		}
		old, s.bound = s.key, ""
	}
	at, _ := slices.BinarySearch(s.ids, id)
	ids := slices.Insert(slices.Clone(s.ids), at, id)
	rows := []segment{{key: key, ids: ids}}
	if len(ids) > 1 && listUnits(ids) > m.o.ListSegmentUnits {
		if len(segs)+1 > MaxListSegments {
			return nil, nil, refuse("list %s of partition %q: value %q would list %d ids in %d segments: the limit is %d segments (MaxListSegments) of %d UTF-16 units (Options.ListSegmentUnits)",
				f.name, pk, value, len(unionOf(segs))+1, len(segs)+1, MaxListSegments, m.o.ListSegmentUnits)
		}
		lo, hi := ids[:len(ids)/2], ids[len(ids)/2:]
		if i == len(segs)-1 && at == len(s.ids) {
			// An id past the last one (ids made in time order): the full
			// segment stays full and the id starts the next, so such a
			// list fills its segments instead of leaving each half empty.
			lo, hi = ids[:at], ids[at:]
		}
		// The lower half keeps the row; the upper half starts a segment
		// at a bound between the two, above the segment's own (its ids
		// are all at or above it) and below the next segment's.
		bound := separator(lo[len(lo)-1], hi[0])
		k, err := segmentKey(f, value, bound)
		if err != nil {
			return nil, nil, err
		}
		taken := false
		for j, x := range segs {
			taken = taken || j != i && x.key == k
		}
		if bound <= s.bound || taken {
			return nil, nil, refuse("list %s of partition %q: value %q: its segments do not hold their ranges of ids (written past the model?): run Check and Repair",
				f.name, pk, value)
		}
		rows = []segment{{key: key, ids: lo}, {key: k, ids: hi}}
	}
	// Repair rewrites the value's segments in one transaction: their
	// bytes on the wire (6 a UTF-16 unit outside ASCII) must fit it, not
	// only their count.
	n := 0
	for j, x := range segs {
		if j != i {
			n += segmentWire(pk, x.key, x.ids)
		}
	}
	for _, r := range rows {
		n += segmentWire(pk, r.key, r.ids)
	}
	if n > listWireBudget {
		return nil, nil, refuse("list %s of partition %q: value %q would list %d ids in about %d bytes of its segments' rows: the limit is %d bytes, what Repair's one transaction of them holds (ids outside ASCII take 6 bytes a UTF-16 unit)",
			f.name, pk, value, len(unionOf(segs))+1, n, listWireBudget)
	}
	for _, r := range rows {
		if r.key == old {
			old = "" // written again: not deleted
		}
	}
	if old != "" {
		dels = []string{old}
	}
	return rows, dels, nil
}

// listWireBudget bounds the bytes a value's segment rows take in a
// transaction's body (store.ActionWireSize), so that Repair's one
// transaction rewriting them all stays under the service's 4 MiB
// (store.MaxBatchBytes) with its deletes, the fence and the framing.
const listWireBudget = store.MaxBatchBytes - 256<<10

// segmentWire is the bytes the segment row k of partition pk holding
// ids takes in a transaction's body.
func segmentWire(pk, k string, ids []string) int {
	return store.ActionWireSize(&store.Action{Kind: store.ActionUpsertReplace,
		Entity: store.Entity{PartitionKey: pk, RowKey: k, Properties: map[string]any{ListProperty: strings.Join(ids, "\n")}}})
}

// putSegment adds to tx the segment row k holding ids.
func putSegment(tx *eventual.Tx, label, k string, ids []string) error {
	return tx.Upsert(label, store.Entity{RowKey: k, Properties: map[string]any{ListProperty: strings.Join(ids, "\n")}}, store.Replace)
}

// packSegments lays ids (sorted) out in segments as Repair writes them:
// each filled up to units, the first at bound "", each next at a bound
// between its first id and the id before it.
func packSegments[T any](f *Feature[T], value string, ids []string, units int) ([]segment, error) {
	var out []segment
	for start := 0; start < len(ids); {
		end := start + 1
		n := keys.UTF16Len(ids[start])
		for end < len(ids) && n+1+keys.UTF16Len(ids[end]) <= units {
			n += 1 + keys.UTF16Len(ids[end])
			end++
		}
		bound := ""
		if start > 0 {
			bound = separator(ids[start-1], ids[start])
		}
		k, err := segmentKey(f, value, bound)
		if err != nil {
			return nil, err
		}
		out = append(out, segment{key: k, bound: bound, ids: ids[start:end]})
		start = end
	}
	if len(out) > MaxListSegments {
		return nil, refuse("list %s: value %q: its %d ids take %d segments: the limit is %d (MaxListSegments)",
			f.name, value, len(ids), len(out), MaxListSegments)
	}
	return out, nil
}

// segmentDefaults checks and completes Options.ListSegmentUnits.
func segmentDefaults(o *Options) error {
	if o.ListSegmentUnits < 0 || o.ListSegmentUnits > MaxListUnits {
		return refuse("Options.ListSegmentUnits %d: want 0 (the default, %d) to %d UTF-16 units", o.ListSegmentUnits, MaxListUnits, MaxListUnits)
	}
	if o.ListSegmentUnits == 0 {
		o.ListSegmentUnits = MaxListUnits
	}
	return nil
}
