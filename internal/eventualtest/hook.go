package eventualtest

import (
	"context"
	"sync"

	"github.com/tablekit/tablekit/store"
)

// HookStore wraps a store and runs a hook once, just before the first
// table insert or update of a row its predicate accepts: a moment chosen
// inside a worker's step, where a test makes another write and its step
// run first.
type HookStore struct {
	store.Store
	mu   sync.Mutex
	when func(e store.Entity) bool
	hook func()
}

// Arm sets the predicate and the hook, replacing any that has not run.
func (s *HookStore) Arm(when func(e store.Entity) bool, hook func()) {
	s.mu.Lock()
	s.when, s.hook = when, hook
	s.mu.Unlock()
}

// Table wraps the table.
func (s *HookStore) Table(name string) store.Table {
	return &hookTable{Table: s.Store.Table(name), s: s}
}

type hookTable struct {
	store.Table
	s *HookStore
}

// fire runs the hook, outside the lock, if it is armed and e is its row.
func (t *hookTable) fire(e store.Entity) {
	t.s.mu.Lock()
	h := t.s.hook
	if h != nil && t.s.when(e) {
		t.s.hook = nil
	} else {
		h = nil
	}
	t.s.mu.Unlock()
	if h != nil {
		h()
	}
}

func (t *hookTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	t.fire(e)
	return t.Table.Insert(ctx, e)
}

func (t *hookTable) Update(ctx context.Context, e store.Entity, m store.UpdateMode, im store.ETag) (store.ETag, error) {
	t.fire(e)
	return t.Table.Update(ctx, e, m, im)
}
