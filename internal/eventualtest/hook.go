package eventualtest

import (
	"context"
	"sync"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
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

// Table wraps the table; it keeps the typed lane of the store's tables.
func (s *HookStore) Table(name string) store.Table {
	return storetest.WrapTable(s.Store.Table(name), s.intercept)
}

// hook fires before an insert or an update, in either lane (Insert,
// Update, or a typed Write of those kinds).
func (s *HookStore) intercept(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	switch c.Op {
	case "Table.Insert", "Table.Update", "Table.Write":
		switch c.Action.Kind {
		case store.ActionInsert, store.ActionUpdateMerge, store.ActionUpdateReplace:
			if e, err := c.Entity(); err == nil {
				s.fire(e)
			}
		}
	}
	return do(ctx)
}

// fire runs the hook, outside the lock, if it is armed and e is its row.
func (s *HookStore) fire(e store.Entity) {
	s.mu.Lock()
	h := s.hook
	if h != nil && s.when(e) {
		s.hook = nil
	} else {
		h = nil
	}
	s.mu.Unlock()
	if h != nil {
		h()
	}
}
