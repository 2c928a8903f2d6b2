// Package backendtest runs one test body on every backend: a fresh
// memstore, and Azurite through azstore when make test started it (the
// skip and require rules of internal/azuritetest apply). Packages built on
// store (the mapper, the patterns) use it so that every test of theirs
// proves the same behaviour on the reference engine and on the emulator.
package backendtest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Backend is one store under test.
type Backend struct {
	// Name is "memstore" or "azurite".
	Name string
	// Store is the backend's store.
	Store store.Store
}

// seq makes table names unique within the process; the start time makes
// them unique across runs against one long-lived Azurite.
var seq atomic.Int64

var runID = fmt.Sprintf("%06d", time.Now().UnixNano()%1_000_000)

// NewTable creates a table with a fresh name starting with prefix (letters
// and digits only) and deletes it when the test ends. It returns the name.
func (b Backend) NewTable(tb testing.TB, prefix string) string {
	tb.Helper()
	name := fmt.Sprintf("%s%s%d", prefix, runID, seq.Add(1))
	if len(name) > store.MaxTableNameLen {
		tb.Fatalf("table name %q is longer than %d characters: shorten the prefix", name, store.MaxTableNameLen)
	}
	if err := b.Store.CreateTable(context.Background(), name); err != nil {
		tb.Fatalf("create table %s on %s: %v", name, b.Name, err)
	}
	tb.Cleanup(func() { _ = b.Store.DeleteTable(context.Background(), name) })
	return name
}

// Memstore returns a fresh memstore backend.
func Memstore(opts ...memstore.Option) Backend {
	return Backend{Name: "memstore", Store: memstore.New(opts...)}
}

// Azurite returns the Azurite backend, or skips (fails under make test)
// when Azurite is not running.
func Azurite(tb testing.TB) Backend {
	tb.Helper()
	st, err := azstore.NewFromConnectionString(azuritetest.Conn(tb), &azstore.Options{
		Services: []azstore.Service{azqueues.Service(), azblobs.Service()},
	})
	if err != nil {
		tb.Fatalf("azstore: %v", err)
	}
	return Backend{Name: "azurite", Store: st}
}

// Run runs body as a subtest on memstore and on Azurite. The Azurite
// subtest skips with azuritetest's message when Azurite is not running.
func Run(t *testing.T, body func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("memstore", func(t *testing.T) { body(t, Memstore()) })
	t.Run("azurite", func(t *testing.T) { body(t, Azurite(t)) })
}

// Short reports whether the backend is slow enough (a real emulator over
// HTTP) that randomized tests should run fewer cases on it.
func (b Backend) Short() bool { return !strings.EqualFold(b.Name, "memstore") }
