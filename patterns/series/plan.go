package series

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// change is one slot's new value; nil clears the slot.
type change struct {
	slot int
	v    any
}

// draft is one segment as a write will leave it.
type draft struct {
	idx     int
	rk      string
	etag    store.ETag
	isNew   bool
	props   map[string]any // every property after the write
	set     map[string]any // the properties the write changes, for a merge
	removed bool           // a property goes away: the entity is replaced
	touched bool
}

// planner places a write's changes in the series' segments.
type planner struct {
	s      *Series
	st     *state
	drafts map[int]*draft
	where  map[int]int
}

// plan places changes in the series' segments and adds the writes to tx,
// a transaction on the head (segment 0): segment 0's slots go on the head
// row itself (Txn.SetHead, which replaces it with them when any of them
// changes; otherwise the commit merges only the head's own two
// properties and keeps them), the other segments are rows of the
// transaction, conditional on the ETags read. The head takes part in every
// write, so two writes based on the same read can never both apply. It
// fails, before anything is sent, when a value has no room or the
// transaction would be refused.
func (s *Series) plan(tx *partition.Txn, st *state, changes []change) error {
	p := &planner{s: s, st: st, drafts: map[int]*draft{}, where: maps.Clone(st.where)}
	for _, c := range changes {
		if err := p.apply(c); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.drafts)) {
		d := p.drafts[k]
		if !d.touched {
			continue
		}
		var err error
		if k == 0 {
			err = tx.SetHead(d.props)
		} else {
			err = tx.Add("segment "+d.rk, d.action())
		}
		if err != nil {
			return fmt.Errorf("series: write to %s refused before sending: %w", s.describe(), err)
		}
	}
	return nil
}

// draft returns the draft of segment k, starting it from the read state.
func (p *planner) draft(k int) *draft {
	if d, ok := p.drafts[k]; ok {
		return d
	}
	d := &draft{idx: k, set: map[string]any{}}
	if seg := p.st.seg(k); seg != nil {
		d.rk, d.etag, d.props = seg.rk, seg.etag, maps.Clone(seg.props)
		if k == 0 {
			for name := range headReserve {
				delete(d.props, name) // the head's own: the commit writes them
			}
		}
	} else {
		d.rk, _ = segmentKey(p.s.id, k) // New checked the longest key
		d.isNew, d.props = true, map[string]any{}
	}
	p.drafts[k] = d
	return d
}

// apply places one change.
func (p *planner) apply(c change) error {
	name := p.s.names[c.slot]
	cur, has := p.where[c.slot]
	if has {
		d := p.draft(cur)
		if c.v != nil {
			d.props[name] = c.v
			if p.fits(d) {
				d.set[name], d.touched = c.v, true
				return nil
			}
		}
		// Cleared, or grown past its entity's room: it leaves this entity.
		delete(d.props, name)
		delete(d.set, name)
		d.removed, d.touched = true, true
		delete(p.where, c.slot)
	}
	if c.v == nil {
		return nil
	}
	for k := range p.s.opts.maxSegments {
		if has && k == cur {
			continue
		}
		d := p.draft(k)
		d.props[name] = c.v
		if p.fits(d) {
			d.set[name], d.touched = c.v, true
			p.where[c.slot] = k
			return nil
		}
		delete(d.props, name)
		if d.isNew && !d.touched {
			break // not even an empty entity holds it
		}
	}
	size, wire := valueSize(name, c.v)
	return fmt.Errorf("%w: slot %d (property %s, %d bytes by the service's size formula, about %d as JSON) of series %s: no entity has room within the limits of %d properties and %d bytes per entity (by the size formula and as JSON) and %d entities per series",
		ErrNoRoom, c.slot, name, size, wire, p.s.describe(), store.MaxCustomProperties, store.MaxEntitySize, p.s.opts.maxSegments)
}

// fits reports whether a draft is within the service's entity limits,
// 252 properties and 1 MiB by the size formula, and within 1 MiB of JSON
// body by the store's estimate (store.EstimateWireSize), so that a
// replace of it is never refused: Azurite refuses a replace whose body
// passes 1 MiB, and base64 makes binary values a third larger there. The
// head is replaced whenever one of its slots changes, any other segment
// when a slot leaves it. Segment 0 keeps room for the head's own two
// properties at their longest.
func (p *planner) fits(d *draft) bool {
	n := len(d.props)
	if d.idx == 0 {
		for name, v := range headReserve {
			d.props[name] = v
		}
		defer func() {
			for name := range headReserve {
				delete(d.props, name)
			}
		}()
		n += len(headReserve)
	}
	if n > store.MaxCustomProperties {
		return false
	}
	e := store.Entity{PartitionKey: p.s.pk, RowKey: d.rk, Properties: d.props}
	return store.EntitySize(&e) <= store.MaxEntitySize && store.EstimateWireSize(&e) <= store.MaxEntitySize
}

// action is the write of a touched draft of a segment after the first:
// an insert of a new one, a delete of one left empty, a replace of one a
// property leaves, a merge of the properties set otherwise; conditional
// on the ETag read (the head fences them too).
func (d *draft) action() store.Action {
	e := store.Entity{RowKey: d.rk}
	switch {
	case d.isNew:
		e.Properties = d.props
		return store.Action{Kind: store.ActionInsert, Entity: e}
	case len(d.props) == 0:
		return store.Action{Kind: store.ActionDelete, Entity: e, IfMatch: d.etag}
	case d.removed:
		e.Properties = d.props
		return store.Action{Kind: store.ActionUpdateReplace, Entity: e, IfMatch: d.etag}
	}
	e.Properties = d.set
	return store.Action{Kind: store.ActionUpdateMerge, Entity: e, IfMatch: d.etag}
}

// valueSize is one property's share of an entity by the service's
// formula and of its JSON body by the store's estimate.
func valueSize(name string, v any) (size, wire int) {
	e, empty := store.Entity{Properties: map[string]any{name: v}}, store.Entity{}
	return store.EntitySize(&e) - store.EntitySize(&empty), store.EstimateWireSize(&e) - store.EstimateWireSize(&empty)
}
