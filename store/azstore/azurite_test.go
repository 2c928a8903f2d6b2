package azstore

import (
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/store"
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
	sharedOnce.Do(func() { sharedStore, sharedErr = NewFromConnectionString(conn, nil) })
	if sharedErr != nil {
		tb.Fatalf("NewFromConnectionString: %v", sharedErr)
	}
	return sharedStore
}
