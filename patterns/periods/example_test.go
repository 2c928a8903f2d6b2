package periods_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/periods"
)

// Login is one sign-in: the user is the partition.
type Login struct {
	User string `table:",pk"`
	ID   string `table:",rk"`
	At   time.Time
}

// signIns returns day tables of logins kept 60 days, with one sign-in on
// each of the last 70 days before November 22, 2026, 10:00 ("now").
func signIns() (*periods.Tables, *periods.Repo[Login]) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st := memstore.New()
	clock := now.AddDate(0, 0, -70)
	p, err := periods.New(st, "Logins", keys.Day, &periods.Options{Retention: 60 * 24 * time.Hour,
		Now: func() time.Time { return clock }})
	if err != nil {
		panic(err)
	}
	logins, err := periods.NewRepo[Login](p)
	if err != nil {
		panic(err)
	}
	for d := 70; d >= 1; d-- {
		at := now.AddDate(0, 0, -d)
		clock = at // the writes happened at the time
		if err := logins.Insert(ctx, at, &Login{User: "ann", ID: at.Format("20060102150405"), At: at}); err != nil {
			panic(err)
		}
	}
	clock = now
	return p, logins
}

func ExampleTables_Retain() {
	p, _ := signIns()
	ctx := context.Background()
	dry, err := p.Retain(ctx, periods.RetainOptions{DryRun: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("dry run: would delete %d tables, %s to %s\n", len(dry.Deleted), dry.Deleted[0].Table, dry.Deleted[len(dry.Deleted)-1].Table)
	rep, err := p.Retain(ctx, periods.RetainOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("deleted %d tables with one request each; kept %d, the oldest %s\n", len(rep.Deleted), len(rep.Kept), rep.Kept[0].Table)
	// Output:
	// dry run: would delete 10 tables, Logins20260913 to Logins20260922
	// deleted 10 tables with one request each; kept 60, the oldest Logins20260923
}

func ExampleRepo_Query() {
	_, logins := signIns()
	from := time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC)
	// Three day tables, in time order, as one sequence.
	for l, err := range logins.Query(context.Background(), from, to, mapper.Where[Login]("User").Eq("ann")) {
		if err != nil {
			panic(err)
		}
		fmt.Println(l.At.Format(time.DateTime))
	}
	// Output:
	// 2026-11-19 10:00:00
	// 2026-11-20 10:00:00
	// 2026-11-21 10:00:00
}

func ExampleTables_Prepare() {
	st := memstore.New()
	now := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	p, err := periods.New(st, "Logins", keys.Month, &periods.Options{Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	made, err := p.Prepare(context.Background())
	fmt.Println(made, err)
	// Output:
	// [Logins202611 Logins202612] <nil>
}
