package series

import (
	"fmt"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// segment is one entity of a series as read.
type segment struct {
	idx   int
	rk    string
	etag  store.ETag // "" for a segment not yet stored
	props map[string]any
}

// state is a series as read: its segments in order, where each slot is,
// and the state of its head (segment 0) that the next write commits on.
type state struct {
	fence partition.Fence
	segs  []*segment  // in index order
	where map[int]int // slot -> segment index
	dup   []int       // slots found in two segments
}

// add records a segment read from the store (they come in key order).
func (st *state) add(seg *segment, slots map[string]int) {
	st.segs = append(st.segs, seg)
	for name, v := range seg.props {
		i, ok := slots[name]
		if !ok || v == nil {
			continue
		}
		if _, seen := st.where[i]; seen {
			st.dup = append(st.dup, i)
		}
		st.where[i] = seg.idx
	}
}

// check refuses a state no sequence of writes of this package produces.
func (st *state) check() error {
	if len(st.dup) > 0 {
		return fmt.Errorf("series: slot %d is stored in two entities: the series was written by other means", st.dup[0])
	}
	if len(st.segs) > 0 && st.head() == nil {
		return fmt.Errorf("series: entity %q exists without the series' first entity: the series was written by other means", st.segs[0].rk)
	}
	return nil
}

// head returns segment 0, or nil for a series never written.
func (st *state) head() *segment {
	if len(st.segs) > 0 && st.segs[0].idx == 0 {
		return st.segs[0]
	}
	return nil
}

// seg returns segment k, or nil.
func (st *state) seg(k int) *segment {
	for _, s := range st.segs {
		if s.idx == k {
			return s
		}
	}
	return nil
}

// value returns the value of slot i.
func (st *state) value(i int, names []string) any {
	k, ok := st.where[i]
	if !ok {
		return nil
	}
	return st.seg(k).props[names[i]]
}

// snapshot assembles the values in slot order.
func (st *state) snapshot(names []string) Snapshot {
	sn := Snapshot{Values: make([]any, len(names)), Version: st.fence.Version, Segments: len(st.segs)}
	for i := range st.where {
		sn.Values[i] = st.value(i, names)
	}
	return sn
}
