package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

const wantOutput = `inserted Sales/000123
read Ada Lovelace, age 36, salary 185000, hired 2021-03-01
updated with its ETag; a stale ETag is refused: UpdateConditionNotSatisfied
transaction inserted 6 employees
  Sales/000124 Employee 124 (24)
  Sales/000125 Employee 125 (25)
  Sales/000126 Employee 126 (26)
deleted; reading it again: not found = true
`

func TestQuickstartOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(3)), "Quickstart", wantOutput, run)
}

func TestQuickstartOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "Quickstart")
	exampletest.Run(t, st, table, wantOutput, run)
}

func TestQuickstartFailsCleanlyOnAnExistingTable(t *testing.T) {
	st := memstore.New()
	if err := st.CreateTable(context.Background(), "Taken"); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), &bytes.Buffer{}, st, "Taken")
	if store.Code(err) != store.CodeTableAlreadyExists {
		t.Fatalf("run on an existing table: %v, want TableAlreadyExists", err)
	}
}

// TestQuickstartPrintsItsBackend runs the program itself: with
// TABLEKIT_AZURITE_CONN set (as make azurite prints it) and no flag it
// runs on Azurite and says so; with nothing set, on memstore.
func TestQuickstartPrintsItsBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the program")
	}
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"memstore", []string{"TABLEKIT_CONN=", "TABLEKIT_AZURITE_CONN="}, "backend: memstore"},
	}
	if conn := os.Getenv(azuritetest.ConnEnv); conn != "" {
		cases = append(cases, struct {
			name string
			env  []string
			want string
		}{"azurite", []string{"TABLEKIT_CONN=", "TABLEKIT_AZURITE_CONN=" + conn}, "backend: Azurite"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("go", "run", ".", "-table", fmt.Sprintf("Quick%d", time.Now().UnixNano()%1_000_000_000))
			cmd.Env = append(os.Environ(), c.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go run: %v\n%s", err, out)
			}
			if !strings.HasPrefix(string(out), c.want) || !strings.Contains(string(out), "deleted; reading it again: not found = true") {
				t.Fatalf("output:\n%s\nwant it to start with %q and run to the end", out, c.want)
			}
		})
	}
}
