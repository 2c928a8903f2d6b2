package memstore

import (
	"context"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Transact implements store.Table: the actions are checked as a whole
// first, then applied to a private overlay; only when every action
// succeeds does the overlay replace the stored records, so a failure
// leaves no trace. All actions of one transaction share one Timestamp.
func (h *tableHandle) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	if err := store.ValidateTransaction(actions); err != nil {
		return nil, err
	}
	// A Timestamp property is accepted and ignored, as the service ignores it.
	actions = driver.WithoutIgnoredActions(actions)
	// Actions with a Source (store.TypedTable) are written through
	// store.WriteSource, which checks every rule as it packs them; the
	// body's size is checked here, with what they wrote.
	var packs []*packer
	defer func() {
		for _, p := range packs {
			if p != nil {
				p.release()
			}
		}
	}()
	for i := range actions {
		if actions[i].Source != nil {
			var err error
			if actions, packs, err = packSources(actions); err != nil {
				return nil, err
			}
			break
		}
	}
	return h.send(ctx, OpTransact, actions, func(t *table) ([]store.ActionResult, error) {
		return h.applyAll(t, actions, packs)
	})
}

// packSources packs the properties of the inserts and replaces with a
// Source (packs[i]; nil for the other actions), turns merges with a
// Source into Entity form (a copy of actions), and checks the body's size.
func packSources(actions []store.Action) ([]store.Action, []*packer, error) {
	packs := make([]*packer, len(actions))
	copied := false
	size := 0
	for i := range actions {
		a := &actions[i]
		switch {
		case a.Source == nil:
			size += store.ActionWireSize(a)
		case mergeKind(a.Kind):
			if !copied {
				actions, copied = append([]store.Action(nil), actions...), true
				a = &actions[i]
			}
			m, err := a.WithProperties()
			if err != nil {
				return nil, packs, store.WithIndex(err, i)
			}
			*a = m
			size += store.ActionWireSize(a)
		default:
			p := packers.Get().(*packer)
			packs[i] = p
			wire, err := store.WriteSourceSized(a.Entity.PartitionKey, a.Entity.RowKey, a.Source, true, p)
			if err != nil {
				return nil, packs, store.WithIndex(err, i)
			}
			size += store.ActionFraming(a) + wire
		}
	}
	return actions, packs, store.CheckTransactionBytes(size)
}

// applyAll applies a checked transaction under the table's lock, all or
// nothing. packs[i], when set, holds action i's packed properties.
func (h *tableHandle) applyAll(t *table, actions []store.Action, packs []*packer) ([]store.ActionResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := h.s.tick().UnixNano()
	next := make([]record, len(actions))
	remove := make([]bool, len(actions))
	for i := range actions {
		a := &actions[i]
		var p *packer
		if packs != nil {
			p = packs[i]
		}
		// ValidateTransaction guarantees each RowKey appears once, so the
		// current record of every action is the stored one.
		cur := t.get(a.Entity.PartitionKey, a.Entity.RowKey)
		r, rm, err := apply(h.name, cur, a, p, ts)
		if err != nil {
			return nil, store.WithIndex(err, i)
		}
		next[i], remove[i] = r, rm
	}
	results := make([]store.ActionResult, len(actions))
	etag := etagAt(ts) // every row of the transaction shares its write time
	for i := range actions {
		if remove[i] {
			t.remove(actions[i].Entity.PartitionKey, actions[i].Entity.RowKey)
			continue
		}
		t.put(next[i])
		results[i].ETag = etag
	}
	return results, nil
}
