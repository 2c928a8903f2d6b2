package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/storetest"
)

// mutantEnv names the broken backend TestMutant runs the suite against.
const mutantEnv = "STORETEST_MUTANT"

// TestSuiteCatchesBrokenBackends proves the suite fails, naming the right
// rule, when a backend breaks that rule: each case runs one group of the
// suite against a memstore with one deliberate defect, in a child process
// (a failing suite must not fail this test).
func TestSuiteCatchesBrokenBackends(t *testing.T) {
	cases := []struct {
		mutant, group, wantFail string
	}{
		{"replace-as-merge", "Writes", "Writes/MergeKeeps_ReplaceRemoves"},
		{"drop-page-tail", "Paging", "Paging/Scan2500/Top300_PagesCapped"},
		{"wrong-conflict-code", "Writes", "Writes/InsertExisting_EntityAlreadyExists"},
		{"non-atomic-batch", "Batch", "Batch/Atomic_FailingActionIndex"},
		{"typed-as-loose", "Filters", "Filters/Semantics/Int32VersusInt64Literal_NoMatch"},
		{"ignore-if-match", "Concurrency", "Concurrency/SameETag_ExactlyOneWins"},
	}
	for _, c := range cases {
		t.Run(c.mutant, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutant$/^"+c.group+"$", "-test.v")
			cmd.Env = append(os.Environ(), mutantEnv+"="+c.mutant)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed against mutant %s:\n%s", c.mutant, tail(out))
			}
			if !strings.Contains(string(out), "--- FAIL: TestMutant/"+c.wantFail) {
				t.Errorf("mutant %s did not fail %s:\n%s", c.mutant, c.wantFail, tail(out))
			}
		})
	}
}

func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// TestMutant is the child process of TestSuiteCatchesBrokenBackends; it
// does nothing unless STORETEST_MUTANT names a defect.
func TestMutant(t *testing.T) {
	kind := os.Getenv(mutantEnv)
	if kind == "" {
		return
	}
	storetest.Run(t, func(t *testing.T) store.Store { return mutantStore{memstore.New(), kind} })
}

type mutantStore struct {
	store.Store
	kind string
}

// Table returns the mutant table, with the typed lane when memstore's
// table has it (it does), mutated alike: a mutant changes requests and
// answers, which storetest's interception kit does not do, so it keeps
// the lane by hand.
func (m mutantStore) Table(name string) store.Table {
	t := mutantTable{m.Store.Table(name), m.kind}
	if tt, ok := driver.Typed(t.Table); ok {
		return mutantTypedTable{t, tt}
	}
	return t
}

type mutantTable struct {
	store.Table
	kind string
}

func (m mutantTable) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	switch m.kind {
	case "replace-as-merge":
		mode = store.Merge
	case "ignore-if-match":
		ifMatch = store.ETagAny
	}
	return m.Table.Update(ctx, e, mode, ifMatch)
}

func (m mutantTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	tag, err := m.Table.Insert(ctx, e)
	if m.kind == "wrong-conflict-code" && store.Code(err) == store.CodeEntityAlreadyExists {
		err = store.Errorf("Conflict", 409, "entity exists")
	}
	return tag, err
}

func (m mutantTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if m.kind == "typed-as-loose" {
		q.Filter = strings.ReplaceAll(q.Filter, "5L", "5")
	}
	p, err := m.Table.Query(ctx, q)
	if m.kind == "drop-page-tail" && p.Continuation != "" && len(p.Entities) > 1 {
		p.Entities = p.Entities[:len(p.Entities)-1]
	}
	return p, err
}

func (m mutantTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	if m.kind != "non-atomic-batch" {
		return m.Table.Transact(ctx, actions)
	}
	var out []store.ActionResult
	for i, a := range actions {
		res, err := m.Table.Transact(ctx, []store.Action{a})
		if err != nil {
			return nil, store.WithIndex(err, i)
		}
		out = append(out, res...)
	}
	return out, nil
}

// mutantTypedTable is a mutantTable over a table with the typed lane,
// whose typed requests carry the same defects as far as they can (a typed
// page is handed over entity by entity, so drop-page-tail leaves it
// whole).
type mutantTypedTable struct {
	mutantTable
	tt store.TypedTable
}

func (m mutantTypedTable) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	switch {
	case m.kind == "replace-as-merge" && a.Kind == store.ActionUpdateReplace:
		a.Kind = store.ActionUpdateMerge
	case m.kind == "ignore-if-match" && (a.Kind == store.ActionUpdateMerge || a.Kind == store.ActionUpdateReplace):
		a.IfMatch = store.ETagAny
	}
	tag, err := m.tt.Write(ctx, a)
	if m.kind == "wrong-conflict-code" && a.Kind == store.ActionInsert && store.Code(err) == store.CodeEntityAlreadyExists {
		err = store.Errorf("Conflict", 409, "entity exists")
	}
	return tag, err
}

func (m mutantTypedTable) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, r store.EntityReader) error {
	return m.tt.GetInto(ctx, pk, rk, opts, r)
}

func (m mutantTypedTable) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	if m.kind == "typed-as-loose" {
		q.Filter = strings.ReplaceAll(q.Filter, "5L", "5")
	}
	return m.tt.QueryInto(ctx, q, next)
}
