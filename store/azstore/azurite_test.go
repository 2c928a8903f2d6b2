package azstore

import (
	"os"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// azuriteConn returns the connection string of the Azurite that
// scripts/with-azurite.sh started. Without one the test skips, unless
// TABLEKIT_REQUIRE_AZURITE is set (make test sets it): then it fails, so
// make test never skips an Azurite test.
func azuriteConn(tb testing.TB) string {
	tb.Helper()
	conn := os.Getenv("TABLEKIT_AZURITE_CONN")
	if conn == "" {
		if os.Getenv("TABLEKIT_REQUIRE_AZURITE") != "" {
			tb.Fatal("TABLEKIT_REQUIRE_AZURITE is set but TABLEKIT_AZURITE_CONN is empty: run the tests with `make test`, which starts Azurite")
		}
		tb.Skip("Azurite tests need TABLEKIT_AZURITE_CONN; run them with `make test`, which starts Azurite")
	}
	return conn
}

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
