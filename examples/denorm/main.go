// Command denorm shows denormalization through the entity model: each
// department row holds its manager's name and phone, so one point read
// answers who runs it, and each team row holds its lead's name. The
// copies are declared on the employee's model (model.CopyToEach, with the
// properties renamed on the targets) and written by the model's one write
// path through a worker; the targets' own data is never touched. The
// view (patterns/denorm) reads a target's source, a source's targets,
// and refreshes a target made after the source's last write. It runs on
// memstore by default; pass -conn (or set TABLEKIT_CONN or
// TABLEKIT_AZURITE_CONN) to run it against Azurite or Azure.
//
//	go run ./examples/denorm
//	go run ./examples/denorm -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Employee is stored in its unit's partition; it may manage departments
// and lead a team.
type Employee struct {
	Unit    string     `table:",pk"`
	ID      string     `table:",rk"`
	ETag    store.ETag `table:",etag"`
	Name    string
	Phone   string
	Manages string // departments (RowKeys in Departments), comma-separated
	Leads   string // a team of the employee's unit, in Teams
}

// Department is what a reader of the Departments table sees.
type Department struct {
	Kind         string `table:",pk"`
	Name         string `table:",rk"`
	Budget       int64
	ManagerName  string
	ManagerPhone string
}

func main() {
	conn := backend.ConnFlag()
	suffix := flag.String("suffix", "", "suffix for the tables' and queues' names (to run beside another copy)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azqueues.Service())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *suffix); err != nil {
		log.Fatalf("denorm on %s: %v", name, err)
	}
}

func run(ctx context.Context, w io.Writer, st store.Store, suffix string) (err error) {
	staff, depts, teams, queue := "Staff"+suffix, "Departments"+suffix, "Teams"+suffix, "managers"+suffix
	for _, t := range []string{staff, depts, teams} {
		if err := st.CreateTable(ctx, t); err != nil {
			return err
		}
		defer func() {
			if derr := st.DeleteTable(context.WithoutCancel(ctx), t); err == nil {
				err = derr
			}
		}()
	}
	eng, err := eventual.New(st, queue, &eventual.Options{Visibility: 5 * time.Second})
	if err != nil {
		return err
	}
	if err := eng.Setup(ctx); err != nil {
		return err
	}
	defer func() {
		for _, q := range []string{queue, queue + "-poison"} {
			_ = st.Queue(q).Delete(context.WithoutCancel(ctx))
		}
	}()
	// The rows an employee's name and phone are copied onto: each
	// department it manages, and its team.
	targets := func(e *Employee) []store.RowRef {
		var out []store.RowRef
		for d := range strings.SplitSeq(e.Manages, ",") {
			if d != "" {
				out = append(out, store.RowRef{Table: depts, PartitionKey: "dept", RowKey: d})
			}
		}
		if e.Leads != "" {
			out = append(out, store.RowRef{Table: teams, PartitionKey: e.Unit, RowKey: e.Leads})
		}
		return out
	}
	people, err := model.Define(st, staff, &model.Options{Engine: eng},
		model.CopyToEach("manager", []string{depts, teams}, targets, "Name", "Phone").
			Rename("Name", "ManagerName").Rename("Phone", "ManagerPhone"))
	if err != nil {
		return err
	}
	view, err := denorm.New(people, nil)
	if err != nil {
		return err
	}

	departments := mapper.NewRepository[Department](st, depts)
	for _, dep := range []*Department{{Kind: "dept", Name: "Sales", Budget: 250000}, {Kind: "dept", Name: "Support", Budget: 90000}} {
		if err := departments.Insert(ctx, dep); err != nil {
			return err
		}
	}
	if _, err := st.Table(teams).Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "east", Properties: map[string]any{"Region": "East"}}); err != nil {
		return err
	}
	show := func(when string) error {
		fmt.Fprintf(w, "%s:\n", when)
		for dep, err := range departments.Query(ctx) {
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  department %-9s budget %6d, manager %q %q\n", dep.Name, dep.Budget, dep.ManagerName, dep.ManagerPhone)
		}
		team, err := st.Table(teams).Get(ctx, "Sales", "east", nil)
		if err != nil {
			return err
		}
		lead, _ := team.Properties["ManagerName"].(string)
		fmt.Fprintf(w, "  team east, region %v, lead %q\n", team.Properties["Region"], lead)
		return nil
	}
	targetsOf := func(id string) error {
		fmt.Fprintf(w, "  targets of %s:", id)
		for h, err := range view.Targets(ctx, "manager", "Sales", id) {
			if err != nil {
				return err
			}
			state := "no copy"
			switch {
			case h.Current:
				state = "current"
			case h.Copy != nil && h.Copy.Behind:
				state = "behind"
			}
			fmt.Fprintf(w, " %s %s (%s);", h.Target.Table[:len(h.Target.Table)-len(suffix)], h.Target.RowKey, state)
		}
		fmt.Fprintln(w)
		return nil
	}

	don := &Employee{Unit: "Sales", ID: "000123", Name: "Don Hall", Phone: "555-0100", Manages: "Sales", Leads: "east"}
	if err := people.Insert(ctx, don); err != nil {
		return err
	}
	if err := show("Don joins, before the worker"); err != nil {
		return err
	}
	if err := targetsOf("000123"); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	if err := show("after the worker"); err != nil {
		return err
	}
	don.Phone, don.Manages = "555-0199", "Support,Marketing"
	if err := people.Update(ctx, don, store.Replace); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	if err := show("Don moves to Support and Marketing, with a new phone"); err != nil {
		return err
	}
	if err := targetsOf("000123"); err != nil {
		return err
	}
	// Marketing did not exist when the worker ran: the model never creates
	// a target. Once it exists, Refresh sends Don's values again.
	if err := departments.Insert(ctx, &Department{Kind: "dept", Name: "Marketing", Budget: 40000}); err != nil {
		return err
	}
	if err := view.Refresh(ctx, "Sales", "000123"); err != nil {
		return err
	}
	if err := show("Marketing made, Don refreshed"); err != nil {
		return err
	}
	c, err := view.SourceOf(ctx, "manager", depts, "dept", "Support")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Support's copy: %v, from %s/%s at version %d, behind %v; its source now: %s, %s\n",
		c.Properties, c.PartitionKey, c.ID, c.Version, c.Behind, c.Entity.Name, c.Entity.Phone)
	if err := people.Delete(ctx, "Sales", "000123", ""); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	if err := show("Don leaves"); err != nil {
		return err
	}
	rep, err := people.Check(ctx, nil)
	if err != nil {
		return err
	}
	p, err := eng.Poisoned(ctx, 32)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "check clean: %v; poison queue: %d messages\n", rep.Clean(), len(p))
	return nil
}
