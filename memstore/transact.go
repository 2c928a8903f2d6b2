package memstore

import (
	"context"

	"github.com/tablekit/tablekit/store"
)

// Transact implements store.Table: the actions are checked as a whole
// first, then applied to a private overlay; only when every action
// succeeds does the overlay replace the stored records, so a failure
// leaves no trace. All actions of one transaction share one Timestamp.
func (h *tableHandle) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	if err := store.ValidateTransaction(actions); err != nil {
		return nil, err
	}
	// Actions with a Source (store.TypedTable) are written through
	// store.WriteSource, which checks every rule again as it collects them.
	collected, err := store.WithAllProperties(actions)
	if err != nil {
		return nil, err
	}
	if &collected[0] != &actions[0] {
		// The size of what the sources wrote.
		if err := store.ValidateTransaction(collected); err != nil {
			return nil, err
		}
		actions = collected
	}
	return h.send(ctx, OpTransact, actions, func(t *table) ([]store.ActionResult, error) {
		return h.applyAll(t, actions)
	})
}

// applyAll applies a checked transaction under the table's lock, all or
// nothing.
func (h *tableHandle) applyAll(t *table, actions []store.Action) ([]store.ActionResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := h.s.tick().UnixNano()
	next := make([]record, len(actions))
	remove := make([]bool, len(actions))
	for i := range actions {
		a := &actions[i]
		// ValidateTransaction guarantees each RowKey appears once, so the
		// current record of every action is the stored one.
		cur := t.get(a.Entity.PartitionKey, a.Entity.RowKey)
		r, rm, err := apply(h.name, cur, a, ts)
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
