package series

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/keys"
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

// plan turns changes into the actions of one entity group transaction.
// The head always takes part: its version goes up and the write's token
// is recorded, so every write changes the head's ETag and two writes
// based on the same read can never both apply. It fails, before anything
// is sent, when a value has no room or the transaction would be refused.
func (s *Series) plan(st *state, changes []change, token string) ([]store.Action, error) {
	p := &planner{s: s, st: st, drafts: map[int]*draft{}, where: maps.Clone(st.where)}
	head := p.draft(0)
	writes := append([]string{token}, st.writes()...)
	head.props[propVersion] = st.version() + 1
	head.props[propWrites] = strings.Join(writes[:min(len(writes), keepWrites)], " ")
	head.set[propVersion], head.set[propWrites] = head.props[propVersion], head.props[propWrites]
	head.touched = true
	for _, c := range changes {
		if err := p.apply(c); err != nil {
			return nil, err
		}
	}
	actions := p.actions()
	if err := store.ValidateTransaction(actions); err != nil {
		return nil, fmt.Errorf("series: write to %s refused before sending: %w", s.describe(), err)
	}
	return actions, nil
}

// draft returns the draft of segment k, starting it from the read state.
func (p *planner) draft(k int) *draft {
	if d, ok := p.drafts[k]; ok {
		return d
	}
	d := &draft{idx: k, set: map[string]any{}}
	if seg := p.st.seg(k); seg != nil {
		d.rk, d.etag, d.props = seg.rk, seg.etag, maps.Clone(seg.props)
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
	return fmt.Errorf("%w: slot %d (property %s, %d bytes by the service's size formula) of series %s: no entity has room within the limits of %d properties and %d bytes per entity and %d entities per series",
		ErrNoRoom, c.slot, name, valueSize(name, c.v), p.s.describe(), store.MaxCustomProperties, store.MaxEntitySize, p.s.opts.maxSegments)
}

// fits reports whether a draft is within the service's entity limits. The
// head keeps room for the longest list of write tokens.
func (p *planner) fits(d *draft) bool {
	if len(d.props) > store.MaxCustomProperties {
		return false
	}
	e := store.Entity{PartitionKey: p.s.pk, RowKey: d.rk, Properties: d.props}
	size := store.EntitySize(&e)
	if d.idx == 0 {
		w, _ := d.props[propWrites].(string)
		size += 2 * (maxWritesUnits - keys.UTF16Len(w))
	}
	return size <= store.MaxEntitySize
}

// actions lists the writes of the touched drafts in key order.
func (p *planner) actions() []store.Action {
	var out []store.Action
	for _, k := range slices.Sorted(maps.Keys(p.drafts)) {
		d := p.drafts[k]
		if !d.touched {
			continue
		}
		e := store.Entity{PartitionKey: p.s.pk, RowKey: d.rk}
		switch {
		case d.isNew:
			e.Properties = d.props
			out = append(out, store.Action{Kind: store.ActionInsert, Entity: e})
		case k != 0 && len(d.props) == 0:
			out = append(out, store.Action{Kind: store.ActionDelete, Entity: e, IfMatch: d.etag})
		case d.removed:
			e.Properties = d.props
			out = append(out, store.Action{Kind: store.ActionUpdateReplace, Entity: e, IfMatch: d.etag})
		default:
			e.Properties = d.set
			out = append(out, store.Action{Kind: store.ActionUpdateMerge, Entity: e, IfMatch: d.etag})
		}
	}
	return out
}

// valueSize is one property's share of an entity by the service's formula.
func valueSize(name string, v any) int {
	e := store.Entity{Properties: map[string]any{name: v}}
	return store.EntitySize(&e) - store.EntitySize(&store.Entity{})
}
