package model_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// Manager is copied onto the departments it manages and the team it
// leads: rows of two other tables.
type Manager struct {
	Unit    string     `table:",pk"`
	ID      string     `table:",rk"`
	ETag    store.ETag `table:",etag"`
	Name    string     `table:",encrypt"`
	Phone   string
	Manages string // departments, comma-separated
	Leads   string
}

// managerTargets maps a manager to its departments and its team.
func managerTargets(depts, teams string) func(m *Manager) []store.RowRef {
	return func(m *Manager) []store.RowRef {
		var out []store.RowRef
		for d := range strings.SplitSeq(m.Manages, ",") {
			if d != "" {
				out = append(out, store.RowRef{Table: depts, PartitionKey: "dept", RowKey: d})
			}
		}
		if m.Leads != "" {
			out = append(out, store.RowRef{Table: teams, PartitionKey: m.Unit, RowKey: m.Leads})
		}
		return out
	}
}

func managerCopy(depts, teams string) model.Feature[Manager] {
	return model.CopyToEach("manager", []string{depts, teams}, managerTargets(depts, teams), "Name", "Phone").
		Rename("Name", "ManagerName")
}

// TestCopyToEach: a manager's name (renamed ManagerName) and phone land
// on every department it manages and on its team (two tables); a write
// that changes the set removes them from the department left, keeping
// its own properties and the version; CopyAt reads each copy (behind
// before the engine ran); Check finds a copy missing, one behind and one
// dangling across the targets and Repair mends them; a target another
// manager holds fails its repair with ErrOtherSource; a delete removes
// every copy.
func TestCopyToEach(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		staff, depts, teams := e.B.NewTable(t, "cestaff"), e.B.NewTable(t, "cedepts"), e.B.NewTable(t, "ceteams")
		st := e.B.Store
		o := e.Opts("copyeach")
		eng := eventualtest.NewEngine(t, st, o)
		m, err := model.Define(st, staff, &model.Options{Engine: eng, Now: e.Now}, managerCopy(depts, teams))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"Sales", "Ops", "Eng"} {
			if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: d, Properties: map[string]any{"Budget": int64(7)}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Table(teams).Insert(ctx, store.Entity{PartitionKey: "u1", RowKey: "east", Properties: map[string]any{"Region": "East"}}); err != nil {
			t.Fatal(err)
		}
		drain := func() { eventualtest.Drain(t, e, &eng, o, st, staff) }
		row := func(table, pk, rk string) map[string]any {
			t.Helper()
			r, err := st.Table(table).Get(ctx, pk, rk, nil)
			if err != nil {
				t.Fatal(err)
			}
			return r.Properties
		}
		at := func(rk string) store.RowRef { return store.RowRef{Table: depts, PartitionKey: "dept", RowKey: rk} }

		don := &Manager{Unit: "u1", ID: "d1", Name: "Don", Phone: "555", Manages: "Sales,Ops", Leads: "east"}
		if err := m.Insert(ctx, don); err != nil {
			t.Fatal(err)
		}
		drain()
		for _, p := range []map[string]any{row(depts, "dept", "Sales"), row(depts, "dept", "Ops"), row(teams, "u1", "east")} {
			if p["ManagerName"] != "Don" || p["Phone"] != "555" || p["Name"] != nil || p["Budget"] == nil && p["Region"] == nil {
				t.Fatalf("a target after the insert: %v", p)
			}
		}
		c, err := m.CopyAt(ctx, "manager", at("Sales"))
		if err != nil || c.Entity == nil || c.Entity.ID != "d1" || c.ID != "d1" || c.PartitionKey != "u1" || c.Behind || c.Version == 0 ||
			c.Properties["ManagerName"] != "Don" || c.Properties["Phone"] != "555" || len(c.Properties) != 2 {
			t.Fatalf("CopyAt Sales = %+v, %v", c, err)
		}
		if c, err := m.CopyAt(ctx, "manager", store.RowRef{Table: teams, PartitionKey: "u1", RowKey: "east"}); err != nil || c.Entity == nil {
			t.Fatalf("CopyAt the team = %+v, %v", c, err)
		}
		if _, err := m.SourceOf(ctx, "manager", "dept", "Sales"); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "CopyAt") {
			t.Fatalf("SourceOf a copy of two tables: %v", err)
		}

		// Sales left, Eng joined, a new phone.
		don.Manages, don.Phone = "Ops,Eng", "556"
		if err := m.Update(ctx, don, store.Replace); err != nil {
			t.Fatal(err)
		}
		if c, err := m.CopyAt(ctx, "manager", at("Ops")); err != nil || !c.Behind || c.Properties["Phone"] != "555" || c.Entity.Phone != "556" {
			t.Fatalf("CopyAt Ops before the engine ran = %+v, %v", c, err)
		}
		drain()
		sales := row(depts, "dept", "Sales")
		if sales["ManagerName"] != nil || sales["Phone"] != nil || sales["Budget"] != int64(7) || sales["TkDn_manager_V"] == nil {
			t.Fatalf("the department left: %v", sales)
		}
		if _, err := m.CopyAt(ctx, "manager", at("Sales")); !store.EntityNotFound(err) {
			t.Fatalf("CopyAt the department left: %v", err)
		}
		for _, d := range []string{"Ops", "Eng"} {
			if c, err := m.CopyAt(ctx, "manager", at(d)); err != nil || c.Behind || c.Properties["Phone"] != "556" || c.Entity == nil {
				t.Fatalf("CopyAt %s = %+v, %v", d, c, err)
			}
		}

		// Drift across the targets: Eng's copy removed, Ops's behind,
		// a copy on Sales the manager no longer maps to.
		raw := st.Table(depts)
		eng0 := row(depts, "dept", "Eng")
		delete(eng0, "ManagerName")
		delete(eng0, "Phone")
		if _, err := raw.Update(ctx, store.Entity{PartitionKey: "dept", RowKey: "Eng", Properties: eng0}, store.Replace, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		ops := row(depts, "dept", "Ops")
		ops["Phone"], ops["TkDn_manager_V"] = "555", ops["TkDn_manager_V"].(int64)-1
		if _, err := raw.Update(ctx, store.Entity{PartitionKey: "dept", RowKey: "Ops", Properties: ops}, store.Replace, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		sales["ManagerName"], sales["Phone"] = "Don", "555"
		if _, err := raw.Update(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales", Properties: sales}, store.Replace, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		rep, err := m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range rep.Findings {
			got = append(got, fmt.Sprintf("%s %s %s", f.Drift, f.Feature, f.Row.RowKey))
		}
		slices.Sort(got)
		if want := []string{"behind manager Ops", "dangling manager Sales", "missing manager Eng"}; !slices.Equal(got, want) {
			t.Fatalf("Check found %v, want %v\n%s", got, want, rep)
		}
		if rep, err = m.Repair(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Repair: %v\n%s", err, rep)
		}
		if rep, err = m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check after Repair: %v\n%s", err, rep)
		}
		for _, d := range []string{"Ops", "Eng"} {
			if p := row(depts, "dept", d); p["ManagerName"] != "Don" || p["Phone"] != "556" {
				t.Fatalf("%s after Repair: %v", d, p)
			}
		}
		if p := row(depts, "dept", "Sales"); p["ManagerName"] != nil || p["Budget"] != int64(7) {
			t.Fatalf("Sales after Repair: %v", p)
		}

		// Another manager maps to Eng, which Don holds: its repair fails
		// with ErrOtherSource, and Eng stays Don's.
		ann := &Manager{Unit: "u2", ID: "a1", Name: "Ann", Phone: "777", Manages: "Eng"}
		if err := m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		rep, err = m.Repair(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		other := false
		for _, f := range rep.Findings {
			other = other || f.Outcome == model.Failed && errors.Is(f.Err, model.ErrOtherSource) && f.Row.RowKey == "Eng"
		}
		if !other {
			t.Fatalf("no repair failed with ErrOtherSource:\n%s", rep)
		}
		if p := row(depts, "dept", "Eng"); p["ManagerName"] != "Don" {
			t.Fatalf("Eng after the other source's repair: %v", p)
		}
		// Don deleted: every copy of his goes, and Ann's step takes Eng.
		if err := m.Delete(ctx, "u1", "d1", ""); err != nil {
			t.Fatal(err)
		}
		drain()
		if p := row(depts, "dept", "Ops"); p["ManagerName"] != nil || p["Phone"] != nil || p["Budget"] != int64(7) {
			t.Fatalf("Ops after the delete: %v", p)
		}
		if p := row(teams, "u1", "east"); p["ManagerName"] != nil || p["Region"] != "East" {
			t.Fatalf("the team after the delete: %v", p)
		}
		if c, err := m.CopyAt(ctx, "manager", at("Eng")); err != nil || c.Entity == nil || c.ID != "a1" || c.Properties["ManagerName"] != "Ann" {
			t.Fatalf("CopyAt Eng after the delete = %+v, %v", c, err)
		}
		if rep, err = m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check at the end: %v\n%s", err, rep)
		}
	})
}

// TestCopyToEachRefusals: Define refuses a bad copy naming the value; a
// write refuses more than MaxCopyTargets targets (naming the count and
// the limit), a target in a table the copy does not declare and a row of
// the model's own, with nothing written.
func TestCopyToEachRefusals(t *testing.T) {
	ctx := context.Background()
	e := eventualtest.MemEnv()
	staff, depts, teams := e.B.NewTable(t, "cestaff"), e.B.NewTable(t, "cedepts"), e.B.NewTable(t, "ceteams")
	eng := eventualtest.NewEngine(t, e.B.Store, e.Opts("copyeachbad"))
	opts := &model.Options{Engine: eng}
	none := func(*Manager) []store.RowRef { return nil }
	for name, c := range map[string]struct {
		f    []model.Feature[Manager]
		want string
	}{
		"unknown property":              {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Nope")}, `"Nope"`},
		"rename not copied":             {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Phone").Rename("Name", "X")}, `"Name"`},
		"rename reserved":               {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Name").Rename("Name", "TkName")}, "TkName"},
		"rename bad name":               {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Name").Rename("Name", "9lives")}, "9lives"},
		"rename collides":               {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Name", "Phone").Rename("Name", "Phone")}, `"Phone"`},
		"renamed twice":                 {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Name").Rename("Name", "A").Rename("Name", "B")}, "twice"},
		"renamed to itself, then again": {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Name").Rename("Name", "Name").Rename("Name", "B")}, "twice"},
		"two copies collide":            {[]model.Feature[Manager]{model.CopyToEach("m", []string{depts}, none, "Phone"), model.CopyToEach("n", []string{teams, depts}, none, "Name").Rename("Name", "Phone")}, "copy m"},
		"rename an index":               {[]model.Feature[Manager]{model.Index("leads", func(m *Manager) string { return m.Leads }).Rename("Leads", "X")}, "Rename"},
		"no tables":                     {[]model.Feature[Manager]{model.CopyToEach("m", nil, none, "Name")}, "table"},
		"bad table":                     {[]model.Feature[Manager]{model.CopyToEach("m", []string{"a-b"}, none, "Name")}, "a-b"},
		"no function":                   {[]model.Feature[Manager]{model.CopyToEach[Manager]("m", []string{depts}, nil, "Name")}, "target function"},
	} {
		if _, err := model.Define(e.B.Store, staff, opts, c.f...); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an InvalidInput naming %s", name, err, c.want)
		}
	}
	// Two copies into different tables may use one name.
	if _, err := model.Define(e.B.Store, staff+"x", opts, model.CopyToEach("m", []string{depts}, none, "Phone"),
		model.CopyToEach("n", []string{teams}, none, "Name").Rename("Name", "Phone")); err != nil {
		t.Fatal(err)
	}

	m, err := model.Define(e.B.Store, staff, opts, model.CopyToEach("manager", []string{depts, staff}, func(v *Manager) []store.RowRef {
		var out []store.RowRef
		for d := range strings.SplitSeq(v.Manages, ",") {
			out = append(out, store.RowRef{Table: depts, PartitionKey: "dept", RowKey: d})
		}
		if v.Leads != "" {
			out = append(out, store.RowRef{Table: v.Leads, PartitionKey: v.Unit, RowKey: mustJoin("e", v.ID)})
		}
		return out
	}, "Name", "Phone"))
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, model.MaxCopyTargets+1)
	for i := range many {
		many[i] = fmt.Sprintf("d%03d", i)
	}
	for name, c := range map[string]struct {
		v    Manager
		want []string
	}{
		"too many targets": {Manager{Unit: "u1", ID: "m1", Manages: strings.Join(many, ",")}, []string{"101", "MaxCopyTargets (100)"}},
		"undeclared table": {Manager{Unit: "u1", ID: "m1", Manages: "Sales", Leads: teams}, []string{teams, "not one of the copy's tables"}},
		"a model row":      {Manager{Unit: "u1", ID: "m1", Manages: "Sales", Leads: staff}, []string{"the model keeps for itself"}},
		"a bad key":        {Manager{Unit: "u1", ID: "m1", Manages: "Sa/les"}, []string{"Sa/les"}},
	} {
		err := m.Insert(ctx, &c.v)
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("%s: %v, want an InvalidInput", name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to name %s", name, err, w)
			}
		}
	}
	if rows, _ := enctest.Rows(ctx, e.B.Store, staff); len(rows) != 0 {
		t.Fatalf("refused writes left rows: %v", rows)
	}
}

// TestCopyRenamedEncrypted: an encrypted property copied under another
// name, onto targets in a table whose encryption encrypts that name:
// nothing the backend is asked to keep holds the plaintext, and the
// targets read back through the encrypting store hold it. A target table
// that would store the new name in plain text is refused before anything
// is written, naming both properties.
func TestCopyRenamedEncrypted(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		staff, depts, teams := e.B.NewTable(t, "encstaff"), e.B.NewTable(t, "encdept"), e.B.NewTable(t, "encteam")
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, "Name", "ManagerName").Store(spied, staff, depts, teams)
		o := e.Opts("encren")
		eng := eventualtest.NewEngine(t, st, o)
		m, err := model.Define(st, staff, &model.Options{Engine: eng, Now: e.Now}, managerCopy(depts, teams))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales", Properties: map[string]any{"Budget": int64(7)}}); err != nil {
			t.Fatal(err)
		}
		v := &Manager{Unit: "u1", ID: "m1", Name: mgrSecret, Phone: "555", Manages: "Sales"}
		if err := m.Insert(ctx, v); err != nil {
			t.Fatal(err)
		}
		if !spy.Seen("Body") {
			t.Fatal("the spy saw no outbox row: the test searches nothing")
		}
		eventualtest.Drain(t, e, &eng, o, st, staff)
		v.Name = mgrLater
		if err := m.Update(ctx, v, store.Replace); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, staff)
		c, err := m.CopyAt(ctx, "manager", store.RowRef{Table: depts, PartitionKey: "dept", RowKey: "Sales"})
		if err != nil || c.Properties["ManagerName"] != mgrLater || c.Entity == nil || c.Entity.Name != mgrLater || c.Behind {
			t.Fatalf("CopyAt = %+v, %v", c, err)
		}
		leaks := spy.Leaks(mgrSecret, mgrLater)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{staff, depts}, mgrSecret, mgrLater)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}

		// The department table encrypts Name but not ManagerName.
		st2 := enctest.Codec(t, "Name").Store(e.B.Store, staff, depts)
		eng2 := eventualtest.NewEngine(t, st2, e.Opts("encren2"))
		m2, err := model.Define(st2, staff, &model.Options{Engine: eng2, Now: e.Now}, managerCopy(depts, teams))
		if err != nil {
			t.Fatal(err)
		}
		err = m2.Insert(ctx, &Manager{Unit: "u1", ID: "m2", Name: mgrSecret, Manages: "Sales"})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"ManagerName"`) || !strings.Contains(err.Error(), `"Name"`) {
			t.Fatalf("an encrypted property renamed into a plain one: %v", err)
		}
		if _, err := m2.Get(ctx, "u1", "m2"); !store.EntityNotFound(err) {
			t.Fatalf("the refused write left the entity: %v", err)
		}
	})
}

const (
	mgrSecret = "ManagerSecret5150abc"
	mgrLater  = "ManagerSecretLater99"
)

// TestRefreshCopies: a department created after its manager's last write
// holds no copy until RefreshCopies writes it, at the manager's version,
// leaving the department that had it as it was; Copies and TargetsOf name
// the copy and its rows.
func TestRefreshCopies(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		staff, depts, teams := e.B.NewTable(t, "rfstaff"), e.B.NewTable(t, "rfdepts"), e.B.NewTable(t, "rfteams")
		st := e.B.Store
		o := e.Opts("refresh")
		eng := eventualtest.NewEngine(t, st, o)
		m, err := model.Define(st, staff, &model.Options{Engine: eng, Now: e.Now}, managerCopy(depts, teams))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.CopyNames(); !slices.Equal(got, []string{"manager"}) {
			t.Fatalf("Copies = %v", got)
		}
		don := &Manager{Unit: "u1", ID: "d1", Name: "Don", Phone: "555", Manages: "Sales,Later"}
		ts, err := m.TargetsOf("manager", don)
		if err != nil || len(ts) != 2 || ts[1] != (store.RowRef{Table: depts, PartitionKey: "dept", RowKey: "Later"}) {
			t.Fatalf("TargetsOf = %v, %v", ts, err)
		}
		if _, err := m.TargetsOf("nosuch", don); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("TargetsOf an unknown copy: %v", err)
		}
		if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales"}); err != nil {
			t.Fatal(err)
		}
		if err := m.Insert(ctx, don); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, staff)
		sales, err := st.Table(depts).Get(ctx, "dept", "Sales", nil)
		if err != nil || sales.Properties["ManagerName"] != "Don" {
			t.Fatalf("Sales = %v, %v", sales.Properties, err)
		}
		if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Later", Properties: map[string]any{"Budget": int64(3)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.CopyAt(ctx, "manager", ts[1]); !store.EntityNotFound(err) {
			t.Fatalf("the department made later, before the refresh: %v", err)
		}
		if err := m.RefreshCopies(ctx, "u1", "d1"); err != nil {
			t.Fatal(err)
		}
		c, err := m.CopyAt(ctx, "manager", ts[1])
		if err != nil || c.Entity == nil || c.Behind || c.Properties["ManagerName"] != "Don" {
			t.Fatalf("the department made later, after the refresh: %+v, %v", c, err)
		}
		if again, err := st.Table(depts).Get(ctx, "dept", "Sales", nil); err != nil || again.ETag != sales.ETag {
			t.Fatalf("the refresh wrote the department that held the copy: %v", err)
		}
		if err := m.RefreshCopies(ctx, "u1", "nobody"); !store.EntityNotFound(err) {
			t.Fatalf("RefreshCopies of a missing entity: %v", err)
		}
	})
}

// TestCopyToEachMove: a manager moved to another partition keeps its
// departments and its team (targets that do not depend on its partition):
// each is taken over by the moved entity, never refused as another
// source's; moved on to an archive that declares no copy, every target
// loses the copy.
//
// The takeover is tested where it matters: the move's operation is held
// just before it removes the source's marker (the arrival done), and the
// destination's operation (its copies) runs then. Every target still
// names the source's old keys, and the marker still holds the manager
// mapping to them: only the marker naming the destination lets the
// destination take them over (copyPut's movingTo). Without it the
// destination's operation fails with ErrOtherSource and goes back to the
// queue; a plain drain never sees this, as the marker is gone before the
// destination's operation runs.
func TestCopyToEachMove(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		staff, depts, teams, archive := e.B.NewTable(t, "mvstaff"), e.B.NewTable(t, "mvdepts"), e.B.NewTable(t, "mvteams"), e.B.NewTable(t, "mvarch")
		// hold, once armed, runs before the removal of the marker.
		var hold atomic.Pointer[func()]
		marker := mustJoin("e", "d1")
		st := storetest.WrapStore(e.B.Store, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			if c.Name == staff && c.EntityOp() == "Table.Delete" && c.PartitionKey == "u1" && c.RowKey == marker {
				if h := hold.Swap(nil); h != nil {
					(*h)()
				}
			}
			return do(ctx)
		})
		o := e.Opts("copymove")
		eng := eventualtest.NewEngine(t, st, o)
		mo := &model.Options{Engine: eng, Now: e.Now}
		// The team is keyed by the lead's name, not its unit: it stays
		// the same row when the manager moves.
		targets := func(m *Manager) []store.RowRef {
			out := managerTargets(depts, teams)(&Manager{Manages: m.Manages})
			if m.Leads != "" {
				out = append(out, store.RowRef{Table: teams, PartitionKey: "teams", RowKey: m.Leads})
			}
			return out
		}
		m, err := model.Define(st, staff, mo, model.CopyToEach("manager", []string{depts, teams}, targets, "Name", "Phone").Rename("Name", "ManagerName"))
		if err != nil {
			t.Fatal(err)
		}
		arc, err := model.Define(st, archive, mo, model.Log[Manager]())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"Sales", "Ops"} {
			if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: d}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Table(teams).Insert(ctx, store.Entity{PartitionKey: "teams", RowKey: "east"}); err != nil {
			t.Fatal(err)
		}
		drain := func() { eventualtest.Drain(t, e, &eng, o, st, staff, archive) }
		if err := m.Insert(ctx, &Manager{Unit: "u1", ID: "d1", Name: "Don", Phone: "555", Manages: "Sales,Ops", Leads: "east"}); err != nil {
			t.Fatal(err)
		}
		drain()
		rows := []store.RowRef{{Table: depts, PartitionKey: "dept", RowKey: "Sales"}, {Table: depts, PartitionKey: "dept", RowKey: "Ops"},
			{Table: teams, PartitionKey: "teams", RowKey: "east"}}
		// Held before the marker's removal: the destination's operation
		// runs while the marker names the destination, and takes over
		// every target.
		var held []string
		h := func() {
			spy := &handleSpy{}
			octx := store.WithObserver(context.Background(), spy)
			mk, err := st.Table(staff).Get(octx, "u1", marker, nil)
			if err != nil || mk.Properties[model.MovedToProperty] == nil {
				held = append(held, fmt.Sprintf("the source's marker before the destination's operation: %v, %v", mk.Properties, err))
				return
			}
			n, err := eng.ProcessOnce(octx)
			handled := spy.outcomes()
			if err != nil || n != 1 || len(handled) != 1 {
				held = append(held, fmt.Sprintf("the destination's operation: %d received, %d handled, %v", n, len(handled), err))
			}
			for _, err := range handled {
				if errors.Is(err, model.ErrOtherSource) {
					held = append(held, fmt.Sprintf("the destination's operation was refused as another source's: %v", err))
				} else if err != nil {
					held = append(held, fmt.Sprintf("the destination's operation failed: %v", err))
				}
			}
			for _, r := range rows {
				c, err := m.CopyAt(ctx, "manager", r)
				if err != nil || c.PartitionKey != "u2" || c.Entity == nil || c.Properties["ManagerName"] != "Don" || c.Behind {
					held = append(held, fmt.Sprintf("%s while the marker is there: %+v, %v", r, c, err))
				}
			}
		}
		hold.Store(&h)
		if err := m.Move(ctx, "u1", "d1", m, "u2", ""); err != nil {
			t.Fatal(err)
		}
		drain()
		if hold.Load() != nil {
			t.Fatal("the marker was never removed: the test held nothing")
		}
		for _, s := range held {
			t.Error(s)
		}
		for _, r := range rows {
			c, err := m.CopyAt(ctx, "manager", r)
			if err != nil || c.PartitionKey != "u2" || c.Entity == nil || c.Entity.Unit != "u2" || c.Properties["ManagerName"] != "Don" || c.Behind {
				t.Fatalf("%s after the move: %+v, %v", r, c, err)
			}
		}
		if p, err := eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
			t.Fatalf("poisoned after the move: %d, %v", len(p), err)
		}
		if rep, err := m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check after the move: %v\n%s", err, rep)
		}
		if err := m.Move(ctx, "u2", "d1", arc, "2026", ""); err != nil {
			t.Fatal(err)
		}
		drain()
		for _, r := range rows {
			if _, err := m.CopyAt(ctx, "manager", r); !store.EntityNotFound(err) {
				t.Fatalf("%s after the archive: %v", r, err)
			}
			row, err := st.Table(r.Table).Get(ctx, r.PartitionKey, r.RowKey, nil)
			if err != nil || row.Properties["ManagerName"] != nil || row.Properties["Phone"] != nil {
				t.Fatalf("%s after the archive: %v, %v", r, row.Properties, err)
			}
		}
	})
}

// handleSpy records the outcome of every operation the engine's worker
// handles ("eventual.Handle") under a context carrying it.
type handleSpy struct {
	mu   sync.Mutex
	errs []error
}

func (s *handleSpy) Start(ctx context.Context, op store.Operation) (context.Context, store.Finisher) {
	if op.Name != "eventual.Handle" {
		return ctx, nopFinish{}
	}
	return ctx, handleDone{s}
}

func (s *handleSpy) outcomes() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

type handleDone struct{ s *handleSpy }

func (d handleDone) Finish(err error, _ int) {
	d.s.mu.Lock()
	d.s.errs = append(d.s.errs, err)
	d.s.mu.Unlock()
}

type nopFinish struct{}

func (nopFinish) Finish(error, int) {}
