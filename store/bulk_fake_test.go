package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tablekit/tablekit/store"
)

// fakeTable is a store.Table whose Transact checks each transaction with
// the service's rules, records it, and fails it when the test says so.
// Only Transact is used by the bulk writer; the other methods fail.
type fakeTable struct {
	// fail, when set, decides whether call n (from 0) fails; it runs
	// before the transaction is recorded as applied.
	fail func(n int, actions []store.Action) error
	// enter, when set, runs at the start of every call, outside the lock.
	enter func(actions []store.Action)

	mu       sync.Mutex
	calls    [][]store.Action // every transaction received, in arrival order
	applied  [][]store.Action // the transactions that succeeded
	inFlight map[string]int   // transactions running per partition
	rowsIn   map[string]int   // transactions running per entity (pk + "\x00" + rk)
	running  int
	maxRun   int  // most transactions running at once
	overlap  bool // two transactions of one partition ran at once
	rowClash bool // two transactions writing one entity ran at once
	versions int
}

var _ store.Table = (*fakeTable)(nil)

func (f *fakeTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	if err := store.ValidateTransaction(actions); err != nil {
		return nil, fmt.Errorf("fake service refused the transaction the writer built: %w", err)
	}
	pk := actions[0].Entity.PartitionKey
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, append([]store.Action(nil), actions...))
	if f.inFlight == nil {
		f.inFlight = map[string]int{}
	}
	f.inFlight[pk]++
	if f.inFlight[pk] > 1 {
		f.overlap = true
	}
	if f.rowsIn == nil {
		f.rowsIn = map[string]int{}
	}
	for _, a := range actions {
		k := pk + "\x00" + a.Entity.RowKey
		f.rowsIn[k]++
		if f.rowsIn[k] > 1 {
			f.rowClash = true
		}
	}
	f.running++
	f.maxRun = max(f.maxRun, f.running)
	f.mu.Unlock()

	if f.enter != nil {
		f.enter(actions)
	}
	var err error
	if f.fail != nil {
		err = f.fail(n, actions)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight[pk]--
	for _, a := range actions {
		f.rowsIn[pk+"\x00"+a.Entity.RowKey]--
	}
	f.running--
	if err != nil {
		return nil, err
	}
	f.applied = append(f.applied, actions)
	out := make([]store.ActionResult, len(actions))
	for i, a := range actions {
		if a.Kind != store.ActionDelete {
			f.versions++
			out[i].ETag = etagFor(a.Entity.PartitionKey, a.Entity.RowKey, f.versions)
		}
	}
	return out, nil
}

// etagFor names the version an ETag came from, so a test can check that
// each outcome got the ETag of its own write.
func etagFor(pk, rk string, version int) store.ETag {
	return store.ETag(fmt.Sprintf(`W/"%s|%s|%d"`, pk, rk, version))
}

var errUnused = errors.New("fakeTable: only Transact is implemented")

func (f *fakeTable) Name() string { return "Fake" }
func (f *fakeTable) Get(context.Context, string, string, *store.GetOptions) (store.Entity, error) {
	return store.Entity{}, errUnused
}
func (f *fakeTable) Insert(context.Context, store.Entity) (store.ETag, error) { return "", errUnused }
func (f *fakeTable) Update(context.Context, store.Entity, store.UpdateMode, store.ETag) (store.ETag, error) {
	return "", errUnused
}
func (f *fakeTable) Upsert(context.Context, store.Entity, store.UpdateMode) (store.ETag, error) {
	return "", errUnused
}
func (f *fakeTable) Delete(context.Context, string, string, store.ETag) error { return errUnused }
func (f *fakeTable) Query(context.Context, store.Query) (store.Page, error) {
	return store.Page{}, errUnused
}

// failAt makes a transaction fail like the service does when its action k
// breaks a rule: the action's error positioned at k.
func failAt(k int, code string, status int) error {
	return store.WithIndex(store.Errorf(code, status, "action %d refused by the fake", k), k)
}

func insert(pk, rk string, props map[string]any) store.Action {
	return store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: rk, Properties: props}}
}
