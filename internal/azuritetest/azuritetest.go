// Package azuritetest finds the Azurite emulator that make test starts, for
// the tests of every package that run against it.
package azuritetest

import (
	"os"
	"testing"
)

// Environment variables scripts/with-azurite.sh sets.
const (
	// ConnEnv holds the started Azurite's connection string.
	ConnEnv = "TABLEKIT_AZURITE_CONN"
	// RequireEnv, when set, turns a missing Azurite into a failure, so
	// make test never skips an Azurite test.
	RequireEnv = "TABLEKIT_REQUIRE_AZURITE"
)

// Conn returns the connection string of the Azurite that make test
// started. Without one the test skips with a message naming the variable
// and make test, unless RequireEnv is set: then it fails.
func Conn(tb testing.TB) string {
	tb.Helper()
	conn := os.Getenv(ConnEnv)
	if conn == "" {
		if os.Getenv(RequireEnv) != "" {
			tb.Fatalf("%s is set but %s is empty: run the tests with `make test`, which starts Azurite", RequireEnv, ConnEnv)
		}
		tb.Skipf("Azurite tests need %s; run them with `make test`, which starts Azurite", ConnEnv)
	}
	return conn
}
