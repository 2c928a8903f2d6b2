package denorm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// TestBadInputIsRefused: a target key with a forbidden character or too
// long, a source key with a forbidden character, a field naming a
// property the source lacks, a target property the service refuses or
// two fields write, a bad relation name, a type without a prefix: clear
// errors naming the value (and the limit), and nothing written.
func TestBadInputIsRefused(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		f := newFixture(t, e, "dnbad", nil)
		d := f.d
		f.addTarget(t, f.staff, "Sales", "team_1")
		err := d.Insert(ctx, &Employee{Unit: "Sales", ID: "emp_000001", Name: "Ann", Manages: "dept/1", Leads: "team_1"})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "dept/1") || !strings.Contains(err.Error(), "relation manager") {
			t.Fatalf("a target key with '/': %v", err)
		}
		err = d.Insert(ctx, &Employee{Unit: "Sales", ID: "emp_000001", Name: "Ann", Leads: strings.Repeat("t", 1100)})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "1024") {
			t.Fatalf("a target key too long: %v", err)
		}
		err = d.Insert(ctx, &Employee{Unit: "Sales", ID: "emp_a#b", Name: "Ann"})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "emp_a#b") {
			t.Fatalf("a source key with '#': %v", err)
		}
		err = d.Insert(ctx, &Employee{Unit: "Sales", ID: "emp_000001", Name: strings.Repeat("n", 40_000), Manages: "dept_1"})
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a copied value too large for a property: %v", err)
		}
		n := 0
		for row, err := range store.All(ctx, e.B.Store.Table(f.staff), store.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			if row.RowKey != "team_1" {
				n++
			}
		}
		if n != 0 {
			t.Fatalf("%d rows written by refused writes", n)
		}
		if team := f.target(t, f.staff, "Sales", "team_1"); team.Properties["ManagerName"] != nil {
			t.Fatalf("a refused write touched its target: %v", team.Properties)
		}
		ob, _ := partition.NewOutbox(e.B.Store.Table(f.staff), nil)
		if rows, err := ob.Pending(ctx, "Sales"); err != nil || len(rows) != 0 {
			t.Fatalf("outbox rows left: %d, %v", len(rows), err)
		}

		// Declarations.
		eng := eventualtest.NewEngine(t, e.B.Store, e.Opts("dnbad2"))
		table := f.staff + "x"
		none := func(*Employee) []denorm.Target { return nil }
		cases := map[string]struct {
			rels []denorm.Rel[Employee]
			want string
		}{
			"missing field":      {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none).Field("Nope", "X")}, "Nope"},
			"reserved target":    {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none).Field("Name", "PartitionKey")}, "PartitionKey"},
			"bad target name":    {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none).Field("Name", "9lives")}, "9lives"},
			"tk target":          {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none).Field("Name", "TkMine")}, "TkMine"},
			"written twice":      {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none).Field("Name", "X"), denorm.Copy[Employee]("n", none).Field("Phone", "X")}, `"X"`},
			"no field":           {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none)}, "no field"},
			"bad relation name":  {[]denorm.Rel[Employee]{denorm.Copy[Employee]("a b", none).Field("Name", "X")}, `"a b"`},
			"relation twice":     {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", none).Field("Name", "X"), denorm.Copy[Employee]("m", none).Field("Phone", "Y")}, "twice"},
			"no target function": {[]denorm.Rel[Employee]{denorm.Copy[Employee]("m", nil).Field("Name", "X")}, "target function"},
		}
		for name, c := range cases {
			if _, err := denorm.New[Employee](eng, table, c.rels...); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an InvalidInput naming %s", name, err, c.want)
			}
		}
		type noKind struct {
			PK string `table:",pk"`
			RK string `table:",rk"`
			A  string
		}
		if _, err := denorm.New[noKind](eng, table, denorm.Copy[noKind]("m", func(*noKind) []denorm.Target { return nil }).Field("A", "A")); err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Fatalf("a type without a kind prefix: %v", err)
		}
		if _, err := denorm.New[Employee](f.eng, f.staff, f.relation()); err == nil || !strings.Contains(err.Error(), "registered already") {
			t.Fatalf("a second Source of one table on one engine: %v", err)
		}
	})
}
