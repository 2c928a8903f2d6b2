package denorm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// Employee is a manager: its name and phone are copied into the
// department it manages (a row of another table) and the team it leads
// (a row of its own partition).
type Employee struct {
	Unit    string     `table:",pk"`
	ID      string     `table:",rk"` // "emp_000123"
	ETag    store.ETag `table:",etag"`
	Name    string
	Phone   string
	Manages string // a department's RowKey, "" for none
	Leads   string // a team's RowKey in the employee's partition, "" for none
}

func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

// fixture is a source table of managers with a departments table.
type fixture struct {
	e            eventualtest.Env
	st           store.Store
	o            eventualtest.Options
	eng          *eventual.Engine
	d            *denorm.Source[Employee]
	staff, depts string
}

// relation copies a manager's name and phone into its department and
// team.
func (f *fixture) relation() denorm.Rel[Employee] {
	depts := f.depts
	return denorm.Copy[Employee]("manager", func(e *Employee) []denorm.Target {
		var ts []denorm.Target
		if e.Manages != "" {
			ts = append(ts, denorm.Target{Table: depts, PartitionKey: "dept", RowKey: e.Manages})
		}
		if e.Leads != "" {
			ts = append(ts, denorm.Target{PartitionKey: e.Unit, RowKey: e.Leads})
		}
		return ts
	}).Field("Name", "ManagerName").Field("Phone", "ManagerPhone")
}

func newFixture(t *testing.T, e eventualtest.Env, queue string, st store.Store) *fixture {
	t.Helper()
	if st == nil {
		st = e.B.Store
	}
	f := &fixture{e: e, st: st, staff: e.B.NewTable(t, "mgrs"), depts: e.B.NewTable(t, "depts"), o: e.Opts(queue)}
	f.eng = eventualtest.NewEngine(t, st, f.o)
	f.d = f.build(t, f.eng)
	return f
}

func (f *fixture) build(t testing.TB, eng *eventual.Engine) *denorm.Source[Employee] {
	t.Helper()
	d, err := denorm.New[Employee](eng, f.staff, f.relation())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *fixture) restart(t testing.TB) {
	eng, err := f.o.New(f.st)
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	f.d = f.build(t, eng)
}

func (f *fixture) drain(t testing.TB) {
	t.Helper()
	eventualtest.Drain(t, f.e, &f.eng, f.o, f.st, f.staff)
}

// addTarget creates a department (table depts) or team (table staff,
// partition unit) row with properties of its own (budgetOf its name).
func (f *fixture) addTarget(t testing.TB, table, pk, rk string) {
	t.Helper()
	if _, err := f.e.B.Store.Table(table).Insert(context.Background(), store.Entity{PartitionKey: pk, RowKey: rk,
		Properties: map[string]any{"Budget": budgetOf(rk), "Title": "row " + rk}}); err != nil {
		t.Fatal(err)
	}
}

// counts are what a full scan of the targets finds.
type counts struct {
	targets, filled, lost, duplicated, stale, clobbered int
}

// scan compares every target row with the sources, straight from the
// backend: a target a source maps to holds that source's name and phone
// at its version; a target no source maps to holds neither; the target's
// own properties are as budgets says (nil: the budget the row was made
// with, as addTarget names it).
func (f *fixture) scan(t testing.TB, unit string, budgets map[string]int64) counts {
	t.Helper()
	ctx := context.Background()
	st := f.e.B.Store
	var c counts
	type src struct {
		ref     string
		name    any
		phone   any
		version int64
	}
	owners := map[string]src{} // "table|pk|rk" of a target -> its source
	var targets []store.Entity
	var targetTables []string
	for e, err := range store.All(ctx, st.Table(f.staff), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case partition.IsReserved(e.RowKey):
		case strings.HasPrefix(e.RowKey, "emp_"):
			var v Employee
			if err := mapper.Decode(e, &v); err != nil {
				t.Fatal(err)
			}
			ver, _ := e.Properties[eventual.VersionProperty].(int64)
			ref, _ := keys.Join(e.PartitionKey, e.RowKey)
			s := src{ref: ref, name: e.Properties["Name"], phone: e.Properties["Phone"], version: ver}
			for _, k := range []string{f.depts + "|dept|" + v.Manages, f.staff + "|" + v.Unit + "|" + v.Leads} {
				if strings.HasSuffix(k, "|") {
					continue
				}
				if other, dup := owners[k]; dup {
					t.Errorf("target %s has two sources: %s and %s", k, other.ref, ref)
				}
				owners[k] = s
			}
		default:
			targets = append(targets, e)
			targetTables = append(targetTables, f.staff)
		}
	}
	for e, err := range store.All(ctx, st.Table(f.depts), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, e)
		targetTables = append(targetTables, f.depts)
	}
	srcProp, verProp := denorm.SourceProperty("manager"), denorm.VersionProperty("manager")
	for i, e := range targets {
		c.targets++
		k := targetTables[i] + "|" + e.PartitionKey + "|" + e.RowKey
		want := budgetOf(e.RowKey)
		if b, ok := budgets[k]; ok {
			want = b
		}
		if e.Properties["Budget"] != want || e.Properties["Title"] != "row "+e.RowKey {
			c.clobbered++
			t.Errorf("target %s: its own properties are %v, %v; want budget %d", k, e.Properties["Budget"], e.Properties["Title"], want)
		}
		s, mapped := owners[k]
		_, hasName := e.Properties["ManagerName"]
		switch {
		case mapped && !hasName && s.name != nil:
			c.lost++
			t.Errorf("target %s lacks the copy of %s@%d", k, s.ref, s.version)
		case !mapped && hasName:
			c.duplicated++
			t.Errorf("target %s holds %v from %v@%v, but no source maps to it", k, e.Properties["ManagerName"], e.Properties[srcProp], e.Properties[verProp])
		case mapped:
			c.filled++
			if e.Properties["ManagerName"] != s.name || e.Properties["ManagerPhone"] != s.phone || e.Properties[srcProp] != s.ref || e.Properties[verProp] != s.version {
				c.stale++
				t.Errorf("target %s holds %v/%v from %v@%v; its source %s@%d has %v/%v", k, e.Properties["ManagerName"], e.Properties["ManagerPhone"],
					e.Properties[srcProp], e.Properties[verProp], s.ref, s.version, s.name, s.phone)
			}
		}
	}
	return c
}

// budgetOf is the budget addTarget gives a row named "..._<n>".
func budgetOf(rk string) int64 {
	var n int64
	if i := strings.LastIndexByte(rk, '_'); i >= 0 {
		fmt.Sscan(rk[i+1:], &n)
	}
	return 1000 + n
}
