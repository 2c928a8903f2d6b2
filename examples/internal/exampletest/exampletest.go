// Package exampletest runs an example program's walkthrough in the
// example's own tests, on memstore and on the Azurite of the test run,
// and compares what it prints with what the example's documentation
// shows.
package exampletest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/store"
)

// Walk is an example's walkthrough: it works in table on st, prints to
// w, and removes the table before it returns.
type Walk func(ctx context.Context, w io.Writer, st store.Store, table string) error

// Run runs walk on st in table and fails the test unless walk printed
// exactly want and left no table of that name behind.
func Run(t *testing.T, st store.Store, table, want string, walk Walk) {
	t.Helper()
	var out bytes.Buffer
	if err := walk(t.Context(), &out, st, table); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	// The walkthrough cleans up after itself.
	page, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: table})
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range page.Tables {
		if strings.EqualFold(ti.Name, table) {
			t.Fatalf("table %s was left behind", ti.Name)
		}
	}
}

// Azurite opens the Azurite of the test run as the example opens its
// backend (the test skips, or fails under make test, when there is none)
// and returns it with a table name made of base and a number unique to
// the run.
func Azurite(t *testing.T, base string) (store.Store, string) {
	t.Helper()
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	return st, fmt.Sprintf("%s%d", base, time.Now().UnixNano()%1_000_000_000)
}
