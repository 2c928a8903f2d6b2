// Command eventual shows eventually consistent transactions: employees
// leave the Current table and move to the Archive table, another
// partition's worth of work, carried out by a worker from a queue. The
// delete and the intent to archive commit together, so nothing can be
// lost between them; the worker archives each employee once in effect,
// however often it runs. It also lists and re-drives the poison queue
// (-poison, -redrive). It runs on memstore by default; pass -conn (or set
// TABLEKIT_CONN or TABLEKIT_AZURITE_CONN) to run it against Azurite or
// Azure.
//
//	go run ./examples/eventual
//	go run ./examples/eventual -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

func main() {
	conn := backend.ConnFlag()
	suffix := flag.String("suffix", "", "suffix for the tables and queues' names (to run beside another copy)")
	poison := flag.Bool("poison", false, "list the poison queue and stop")
	redrive := flag.Bool("redrive", false, "send the poison queue's messages back to the queue and stop")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azqueues.Service())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names := names(*suffix)
	switch {
	case *poison:
		err = listPoison(ctx, os.Stdout, st, names)
	case *redrive:
		err = redriveAll(ctx, os.Stdout, st, names)
	default:
		err = run(ctx, os.Stdout, st, names)
	}
	if err != nil {
		log.Fatalf("eventual on %s: %v", name, err)
	}
}

// tableNames are the example's tables and queue.
type tableNames struct{ current, archive, queue string }

func names(suffix string) tableNames {
	return tableNames{current: "Current" + suffix, archive: "Archive" + suffix, queue: "moves" + suffix}
}

func engine(st store.Store, n tableNames) (*eventual.Engine, error) {
	return eventual.New(st, n.queue, &eventual.Options{Visibility: 5 * time.Second})
}

func run(ctx context.Context, w io.Writer, st store.Store, n tableNames) (err error) {
	for _, t := range []string{n.current, n.archive} {
		if err := st.CreateTable(ctx, t); err != nil {
			return err
		}
		defer func() {
			if derr := st.DeleteTable(context.WithoutCancel(ctx), t); err == nil {
				err = derr
			}
		}()
	}
	eng, err := engine(st, n)
	if err != nil {
		return err
	}
	if err := eng.Setup(ctx); err != nil {
		return err
	}
	defer func() {
		for _, q := range []string{n.queue, n.queue + "-poison"} {
			_ = st.Queue(q).Delete(context.WithoutCancel(ctx))
		}
	}()

	// Three employees of Sales.
	for _, e := range []struct{ id, name string }{{"000123", "Don Hall"}, {"000124", "Ann Ray"}, {"000125", "Bo Lin"}} {
		if _, err := eng.Write(ctx, n.current, "Sales", func(tx *eventual.Tx) error {
			return tx.Insert("employee", store.Entity{RowKey: e.id, Properties: map[string]any{"Name": e.name}})
		}); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "3 current employees in Sales")

	// Two leave: each delete commits with its intent to archive.
	for _, id := range []string{"000123", "000125"} {
		cur, err := st.Table(n.current).Get(ctx, "Sales", id, nil)
		if err != nil {
			return err
		}
		res, err := eng.Write(ctx, n.current, "Sales", func(tx *eventual.Tx) error {
			if err := tx.Delete("employee", id, cur.ETag); err != nil {
				return err
			}
			archived := store.Entity{PartitionKey: "Sales", RowKey: id, Properties: map[string]any{"Name": cur.Properties["Name"]}}
			return tx.Then(ctx, id, eventual.Upsert(n.archive, archived))
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s left: deleted from %s at version %d, archiving queued\n", id, n.current, res.Version)
	}

	// A worker carries the intents out; running it again changes nothing.
	ops := 0
	for range 3 {
		k, err := eng.ProcessOnce(ctx)
		if err != nil {
			return err
		}
		ops += k
	}
	fmt.Fprintf(w, "worker ran %d operations\n", ops)
	for _, id := range []string{"000123", "000124", "000125"} {
		_, cerr := st.Table(n.current).Get(ctx, "Sales", id, nil)
		a, aerr := st.Table(n.archive).Get(ctx, "Sales", id, nil)
		where := "current"
		if cerr != nil && aerr == nil {
			where = fmt.Sprintf("archived as %s (version %d)", a.Properties["Name"], a.Properties[eventual.VersionProperty])
		}
		fmt.Fprintf(w, "  %s: %s\n", id, where)
	}
	p, err := eng.Poisoned(ctx, 32)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "poison queue: %d messages\n", len(p))
	return nil
}

func listPoison(ctx context.Context, w io.Writer, st store.Store, n tableNames) error {
	eng, err := engine(st, n)
	if err != nil {
		return err
	}
	p, err := eng.Poisoned(ctx, 32)
	if err != nil {
		return err
	}
	for _, m := range p {
		fmt.Fprintf(w, "%s (%s): %d attempts\n", m.ID, m.Where, len(m.Attempts))
		for _, a := range m.Attempts {
			fmt.Fprintf(w, "  %s %s\n", a.At.Format(time.RFC3339), a.Error)
		}
	}
	fmt.Fprintf(w, "%d poison messages\n", len(p))
	return nil
}

func redriveAll(ctx context.Context, w io.Writer, st store.Store, n tableNames) error {
	eng, err := engine(st, n)
	if err != nil {
		return err
	}
	total := 0
	for {
		k, err := eng.Redrive(ctx, 32)
		if err != nil {
			return err
		}
		total += k
		if k == 0 {
			break
		}
	}
	fmt.Fprintf(w, "re-drove %d messages\n", total)
	return nil
}
