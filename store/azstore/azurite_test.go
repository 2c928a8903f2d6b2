package azstore

import (
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// azuriteConn returns the connection string of the Azurite that
// scripts/with-azurite.sh started (azuritetest.Conn says when it skips).
func azuriteConn(tb testing.TB) string { return azuritetest.Conn(tb) }

var (
	sharedOnce  sync.Once
	sharedStore *Store
	sharedErr   error
)

// newAzuriteStore returns one Store on the test Azurite, shared by the
// whole package run.
func newAzuriteStore(tb testing.TB) store.Store {
	return azuriteStore(tb)
}

func azuriteStore(tb testing.TB) *Store {
	tb.Helper()
	conn := azuriteConn(tb)
	sharedOnce.Do(func() { sharedStore, sharedErr = NewFromConnectionString(conn, &Options{Services: allServices()}) })
	if sharedErr != nil {
		tb.Fatalf("NewFromConnectionString: %v", sharedErr)
	}
	return sharedStore
}

// allServices are the queue and blob services, for tests that use them.
func allServices() []Service { return []Service{azqueues.Service(), azblobs.Service()} }
