package model_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestInRefused: Define refuses a bad table name for In, naming it, and
// In on every feature that is not a global index.
func TestInRefused(t *testing.T) {
	st := memstore.New()
	eng, err := eventual.New(st, "inqueue", nil)
	if err != nil {
		t.Fatal(err)
	}
	email := func(e *Employee) string { return e.Email }
	cases := map[string]struct {
		f    model.Feature[Employee]
		want string
	}{
		"bad table":    {model.GlobalUnique("email", email).In("no-dash"), `"no-dash"`},
		"short table":  {model.GlobalIndex("email", email).In("ab"), `"ab"`},
		"unique":       {model.Unique("email", email).In("Idx"), "in the entity's partition"},
		"index":        {model.Index("email", email).In("Idx"), "in the entity's partition"},
		"log":          {model.Log[Employee]().In("Idx"), "the log"},
		"copy":         {model.CopyTo("card", "Cards", func(e *Employee) (string, string) { return "cards", e.ID }, "Email").In("Idx"), "copy card"},
		"list":         {model.List("family", email).In("Idx"), "list family"},
		"empty in":     {model.GlobalUnique("email", email).In(""), `""`},
		"reserved tbl": {model.GlobalUnique("email", email).In("Tables"), "Tables"},
	}
	for name, c := range cases {
		_, err := model.Define(st, "Staff", &model.Options{Engine: eng}, c.f)
		if !errors.Is(err, store.ErrInvalidInput) && store.Code(err) != store.CodeInvalidResourceName && store.Code(err) != store.CodeOutOfRangeInput {
			t.Errorf("%s: %v, want a refusal of the input", name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v does not name %s", name, err, c.want)
		}
	}
	m, err := model.Define(st, "Staff", &model.Options{Engine: eng, IndexTable: "Idx"},
		model.GlobalUnique("email", email).In("Emails"), model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }),
		model.Unique("badge", func(e *Employee) string { return e.Badge }))
	if err != nil {
		t.Fatal(err)
	}
	want := []model.IndexInfo{{Name: "email", Unique: true, Global: true, Table: "Emails"},
		{Name: "lastname", Global: true, Table: "Idx"}, {Name: "badge", Unique: true, Table: "Staff"}}
	if got := m.Indexes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Indexes: %+v, want %+v", got, want)
	}
}

// TestInTables: with each global index in a table of its own, every
// write, a Move and Repair keep the rows there (none in the entity
// table), the lookups read them there, and Check walks those tables.
func TestInTables(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGUnique, fGIndex, fTables})
		ann := &Employee{Dept: "Sales", ID: "ann", Email: "ann@x.com", LastName: "Jones"}
		bob := &Employee{Dept: "Sales", ID: "bob", Email: "bob@x.com", LastName: "Jones"}
		for _, v := range []*Employee{ann, bob} {
			if err := f.m.Insert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		// Read-your-writes through the claims, in the index tables.
		if got, err := f.m.Find(ctx, "email", "ann@x.com"); err != nil || got.ID != "ann" {
			t.Fatalf("Find before the engine ran: %v, %v", got, err)
		}
		if all, err := f.m.FindAll(ctx, "lastname", "Jones"); err != nil || len(all) != 2 {
			t.Fatalf("FindAll before the engine ran: %v, %v", all, err)
		}
		f.drain(t)
		bob.Email, bob.LastName = "robert@x.com", "Smith"
		if err := f.m.Update(ctx, bob, store.Replace); err != nil {
			t.Fatal(err)
		}
		if err := f.m.Move(ctx, "Sales", "ann", f.m, "Ops", ""); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if r := f.verify(t); r.bad() || r.claimsLeft != 0 {
			t.Fatalf("after update and move: %s", r)
		}
		if got, err := f.m.Find(ctx, "email", "ann@x.com"); err != nil || got.Dept != "Ops" {
			t.Fatalf("Find after the move: %v, %v", got, err)
		}
		rep, err := f.m.Check(ctx, nil)
		if err != nil || len(rep.Findings)+len(rep.Pending) != 0 {
			t.Fatalf("Check of a clean model: %v, %v", rep, err)
		}
		// Drift in each index table: Check names the row in its table,
		// Repair mends it there.
		ek := mustJoin("e", "ann")
		emailAt := mustJoin("x", "email", "ann@x.com")
		if err := f.raw().Table(f.itables[0]).Delete(ctx, emailAt, "u", store.ETagAny); err != nil {
			t.Fatal(err)
		}
		ghost := store.Entity{PartitionKey: mustJoin("x", "lastname", "Ghost"), RowKey: mustJoin(f.table, "Ops", "ann"),
			Properties: map[string]any{model.SourceTableProperty: f.table, model.SourcePartitionProperty: "Ops",
				model.SourceRowProperty: ek, eventual.VersionProperty: int64(1), "LastName": "Ghost"}}
		if _, err := f.raw().Table(f.itables[1]).Insert(ctx, ghost); err != nil {
			t.Fatal(err)
		}
		rep, err = f.m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, fd := range rep.Findings {
			got[fd.Feature] = string(fd.Drift) + " " + fd.Row.Table
		}
		want := map[string]string{"email": "missing " + f.itables[0], "lastname": "dangling " + f.itables[1]}
		if len(got) != 2 || got["email"] != want["email"] || got["lastname"] != want["lastname"] {
			t.Fatalf("Check found %v, want %v", rep.Findings, want)
		}
		if _, err := f.m.Repair(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if r := f.verify(t); r.bad() || r.claimsLeft != 0 {
			t.Fatalf("after Repair: %s", r)
		}
		if rep, err := f.m.Check(ctx, nil); err != nil || len(rep.Findings) != 0 {
			t.Fatalf("Check after Repair: %v, %v", rep, err)
		}
	})
}

// TestCrashInTables runs the crash schedules of TestCrashPairs on both
// global indexes, each in a table of its own (three schedules on
// Azurite, where one schedule of eight writes meets few crashes).
func TestCrashInTables(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		schedules, writes := 4, 16
		if !e.Fake() {
			schedules, writes = 3, 8
		}
		crashSchedules(t, e, []string{fGUnique, fGIndex, fTables}, schedules, writes, false)
	})
}

// TestProofSeededFaultsInTables runs TestProofSeededFaults' writers and
// faults on both global indexes, each in a table of its own, then lets
// the claims' lease pass and reaps: every entity holds a state its
// writes may have left, every copy agrees with it, whatever claims the
// faults left (answers lost, writes that did not commit) are gone, and
// Check finds nothing.
func TestProofSeededFaultsInTables(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		fs := prooftest.New(7, 0.15)
		f := newFixture(t, e, nil, []string{fGUnique, fGIndex, fTables})
		clean := f.st
		f.st = storetest.WrapStore(f.st, fs.HookOn("Table.", "Queue."))
		f.o.WriteAttempts = 64
		f.restart(t)
		writes := 24
		if !e.Fake() {
			writes = 8
		}
		fc := runFaulted(t, f, 3, writes)
		f.st = clean
		f.restart(t)
		rep, _ := settleFaulted(t, f, fc)
		if fs.Total() == 0 {
			t.Fatal("no fault was injected")
		}
		if e.Fake() {
			e.Pass(2 * time.Minute)
		} else {
			f.skew.Add(int64(2 * time.Minute))
		}
		n, err := f.m.ReapClaims(ctx)
		if err != nil {
			t.Fatal(err)
		}
		after := f.verify(t)
		if after.bad() || after.claimsLeft != 0 || n != rep.claimsLeft {
			t.Fatalf("reaped %d of %d claims: %s", n, rep.claimsLeft, after)
		}
		if c, err := f.m.Check(ctx, nil); err != nil || len(c.Findings)+len(c.Pending) != 0 {
			t.Fatalf("Check after the reap: %v, %v", c, err)
		}
		t.Logf("%s: faults injected %d %v, %s: lost 0, duplicated 0, older-over-newer 0; claims left by the faults %d, reaped %d", e.B.Name, fs.Total(), fs.Counts(), fc, rep.claimsLeft, n)
	})
}
