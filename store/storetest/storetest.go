// Package storetest is the conformance suite every tablekit backend must
// pass: one named subtest per rule of the Azure Table service (the
// reference table in docs/limits.md) and per behaviour of the contract,
// each asserting the service's exact error code and HTTP status.
//
// A backend runs it from a test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
//	}
//
// The suite is safe against a shared server: every subtest creates its own
// uniquely named table, queue or container and deletes it when it ends.
// Subtests run in parallel.
package storetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Harness describes a backend to the suite.
type Harness struct {
	// New returns a store for one subtest. It may return the same store
	// every time (a server shared by the whole run) or a fresh one; the
	// suite never assumes the store is empty.
	New func(t *testing.T) store.Store

	// NewDeleting, when set, returns a store on which a deleted table's
	// name stays unusable (TableBeingDeleted) for at least a few seconds,
	// as on Azure. When nil, the TableBeingDeleted subtest accepts either
	// an immediate re-create or TableBeingDeleted, since both are what the
	// service may answer depending on how fast it reclaims the table.
	NewDeleting func(t *testing.T) store.Store

	// ServerKeyUnits, when set, is the longest key the backend's server
	// stores when it is shorter than the service's store.MaxKeyUnits: the
	// Azurite emulator stores keys of at most 512 UTF-16 units and answers
	// InvalidInput (400) beyond. The key-length subtest then proves that
	// edge exactly instead of the service's: keys of ServerKeyUnits are
	// stored, longer ones up to store.MaxKeyUnits get the server's
	// InvalidInput, and longer still get KeyValueTooLarge as on Azure. Zero
	// means the server stores every key the service does.
	ServerKeyUnits int

	// Faults, when set, returns a store whose every request passes through
	// sched first, which may refuse it, or let it be applied and lose its
	// answer (see Fault). The fault tests run only when it is set: each
	// write kind under each fault, and FaultRuns randomized schedules.
	Faults func(t *testing.T, sched Schedule) store.Store
	// FaultRuns is how many randomized fault schedules run; 0 means 200.
	FaultRuns int

	// ServerReplacesBlobType, when set, says the backend's server lets a
	// Put replace an append blob and a CreateAppend replace a block blob,
	// as Azurite does; Azure refuses both with InvalidBlobType (409). The
	// subtest then proves the server's behaviour instead of Azure's.
	ServerReplacesBlobType bool
	// SkipBlockCountLimit skips the subtest that fills an append blob with
	// its 50,000 blocks, one request each, for a backend where that takes
	// too long. The limit is then proved by the backends that run it and
	// by the backend's own tests.
	SkipBlockCountLimit bool
}

// Run runs the whole suite against the stores newStore returns.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	RunWith(t, Harness{New: newStore})
}

// RunWith runs the whole suite against the backend h describes.
func RunWith(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("storetest: Harness.New is nil")
	}
	s := &suite{h: h, names: newNamer(time.Now().UnixNano())}
	groups := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"Tables", s.tables},
		{"Keys", s.keys},
		{"Properties", s.properties},
		{"Values", s.values},
		{"Writes", s.writes},
		{"Concurrency", s.concurrency},
		{"Batch", s.batches},
		{"Queries", s.queries},
		{"Filters", s.filters},
		{"Paging", s.paging},
		{"TypedQueries", s.typedQueries},
		{"Queues", s.queues},
		{"Blobs", s.blobs},
		{"AppendBlobs", s.appendBlobs},
		{"Faults", s.faultsTests},
	}
	for _, g := range groups {
		t.Run(g.name, g.run)
	}
}

// suite carries the harness and the name source through the subtests.
type suite struct {
	h     Harness
	names *namer
}

// run starts one parallel subtest.
func (s *suite) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		f(t)
	})
}

// namer hands out names no other run is likely to use: a random run tag
// and a counter, in lower case letters and digits so that the same name is
// valid for a table, a queue and a container.
type namer struct {
	mu  sync.Mutex
	tag string
	n   int
}

func newNamer(seed int64) *namer {
	r := rand.New(rand.NewPCG(uint64(seed), 0x7461626c656b6974))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return &namer{tag: string(b)}
}

// next returns a new name starting with "tk": 3 to 63 letters and digits.
func (n *namer) next() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n++
	return "tk" + n.tag + "n" + strconv.Itoa(n.n)
}

// newTable makes a store and a table of its own for one subtest, deleted
// when the subtest ends.
func (s *suite) newTable(t *testing.T) (store.Store, store.Table) {
	t.Helper()
	st := s.h.New(t)
	name := s.names.next()
	if err := st.CreateTable(t.Context(), name); err != nil {
		t.Fatalf("CreateTable(%q): %v", name, err)
	}
	s.dropTableLater(t, st, name)
	return st, st.Table(name)
}

// dropTableLater deletes a table when t ends; a table the test deleted
// itself is fine.
func (s *suite) dropTableLater(t *testing.T, st store.Store, name string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := st.DeleteTable(ctx, name); err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("cleanup: DeleteTable(%q): %v", name, err)
		}
	})
}
