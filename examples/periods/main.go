// Command periods shows the high-volume delete pattern: sign-ins written
// to one table per day, read across the days of a range as one sequence,
// and removed after 30 days by deleting whole tables, one request per day
// however many sign-ins it held. It runs on memstore by default; pass
// -conn (or set TABLEKIT_CONN) to run it against Azurite or Azure. The
// sign-ins carry simulated times, so the output is the same on every run.
//
//	go run ./examples/periods
//	go run ./examples/periods -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/periods"
	"github.com/tablekit/tablekit/store"
)

// Login is one sign-in. The user is the partition, so sign-ins spread
// over partitions as they are written.
type Login struct {
	User string `table:",pk"`
	ID   string `table:",rk"`
	At   time.Time
	IP   string
}

func main() {
	conn := backend.ConnFlag()
	prefix := flag.String("prefix", "DemoLogins", "table name prefix (the tables are deleted at the end)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *prefix); err != nil {
		log.Fatalf("periods on %s: %v", name, err)
	}
}

// now is the simulated "now" of the demo.
var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const (
	days     = 40
	users    = 5
	keepDays = 30
)

func run(ctx context.Context, w io.Writer, st store.Store, prefix string) (err error) {
	clock := now.AddDate(0, 0, -days)
	p, err := periods.New(st, prefix, keys.Day, &periods.Options{Retention: keepDays * 24 * time.Hour,
		Now: func() time.Time { return clock }})
	if err != nil {
		return err
	}
	defer func() { // leave nothing behind
		all, _, lerr := p.List(context.WithoutCancel(ctx))
		for _, per := range all {
			lerr = errors.Join(lerr, st.DeleteTable(context.WithoutCancel(ctx), per.Table))
		}
		// Retain recorded its horizon in a table of its own.
		if derr := st.DeleteTable(context.WithoutCancel(ctx), prefix+periods.HorizonTableSuffix); derr != nil && !errors.Is(derr, store.ErrNotFound) {
			lerr = errors.Join(lerr, derr)
		}
		if err == nil {
			err = lerr
		}
	}()
	logins, err := periods.NewRepo[Login](p)
	if err != nil {
		return err
	}
	// Each day's sign-ins go to that day's table, created on first use.
	for d := days; d >= 1; d-- {
		day := now.AddDate(0, 0, -d)
		clock = day
		for u := range users {
			at := day.Add(time.Duration(8+u) * time.Hour)
			l := Login{User: fmt.Sprintf("user%d", u), ID: at.Format("20060102T150405"), At: at, IP: fmt.Sprintf("10.0.%d.%d", d, u)}
			if err := logins.Insert(ctx, at, &l); err != nil {
				return err
			}
		}
	}
	clock = now
	all, _, err := p.List(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "signed in %d users a day for %d days: %d tables, %s to %s\n", users, days, len(all), all[0].Table, all[len(all)-1].Table)
	made, err := p.Prepare(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "created ahead of time: %v\n", made)

	from, to := now.AddDate(0, 0, -3), now.AddDate(0, 0, -1)
	n, tables := 0, map[string]bool{}
	for l, err := range logins.Query(ctx, from, to, mapper.Where[Login]("User").Eq("user2")) {
		if err != nil {
			return err
		}
		n++
		tables[l.At.Format("2006-01-02")] = true
	}
	fmt.Fprintf(w, "user2's sign-ins from %s to %s: %d, from %d day tables in order\n", from.Format("01-02"), to.Format("01-02"), n, len(tables))

	dry, err := p.Retain(ctx, periods.RetainOptions{DryRun: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "retention %d days, horizon %s: a dry run would delete %d tables (%s to %s)\n",
		keepDays, dry.Horizon.Format("2006-01-02 15:04"), len(dry.Deleted), dry.Deleted[0].Table, dry.Deleted[len(dry.Deleted)-1].Table)
	expiring := 0
	for _, err := range logins.Query(ctx, dry.Deleted[0].Start, dry.Deleted[len(dry.Deleted)-1].Start) {
		if err != nil {
			return err
		}
		expiring++
	}
	rep, err := p.Retain(ctx, periods.RetainOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "deleted %d tables holding %d sign-ins, one DeleteTable request each; %d tables kept\n",
		len(rep.Deleted), expiring, len(rep.Kept))

	late := now.AddDate(0, 0, -35)
	err = logins.Insert(ctx, late, &Login{User: "user0", ID: "late", At: late})
	if !errors.Is(err, periods.ErrExpired) {
		return fmt.Errorf("a write to an expired day: %v, want ErrExpired", err)
	}
	fmt.Fprintf(w, "a late sign-in of %s is refused: %v\n", late.Format("2006-01-02"), periods.ErrExpired)
	return nil
}
