// Command logtail shows the log tail pattern: an employee's expense claims
// stored newest first, so that the latest few are one query, with reads
// since a time and pages back in time, next to a row a .NET program wrote
// with the guide's own key. It runs on memstore by default; pass -conn (or
// set TABLEKIT_CONN) to run it against Azurite or Azure. The claims carry
// simulated times, so the output is the same on every run.
//
//	go run ./examples/logtail
//	go run ./examples/logtail -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
	"github.com/tablekit/tablekit/store"
)

// Claim is one expense claim. The employee is the partition; the stream
// makes the RowKey.
type Claim struct {
	Employee string `table:",pk"`
	Key      string `table:",rk"`
	Amount   float64
	What     string
}

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "ExpenseClaims", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("logtail on %s: %v", name, err)
	}
}

// start is the simulated time of the first claim.
var start = time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)

const claims = 200

func run(ctx context.Context, w io.Writer, st store.Store, table string) (err error) {
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.WithoutCancel(ctx), table); err == nil {
			err = derr
		}
	}()
	next := start
	clock := func() time.Time { t := next; next = next.Add(15 * time.Minute); return t }
	s, err := logtail.New[Claim](st.Table(table), "emp000123", &logtail.Options{Now: clock})
	if err != nil {
		return err
	}
	what := []string{"taxi", "lunch", "train", "hotel", "parking"}
	for i := range claims {
		if _, err := s.Append(ctx, Claim{Amount: float64(10 + i%37), What: what[i%len(what)]}); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "appended %d claims of emp000123, one every 15 minutes from %s\n", claims, start.Format("2006-01-02 15:04"))

	// A .NET program writes the guide's bare 19-digit key; it reads back
	// among the others.
	dotnet := next.Add(-5 * time.Minute)
	rk, err := keys.InvertedTicks(dotnet) // string.Format("{0:D19}", DateTime.MaxValue.Ticks - t.Ticks)
	if err != nil {
		return err
	}
	if _, err := st.Table(table).Insert(ctx, store.Entity{PartitionKey: "emp000123", RowKey: rk,
		Properties: map[string]any{"Amount": 99.0, "What": "written by .NET"}}); err != nil {
		return err
	}

	last, err := s.Latest(ctx, 3)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "latest 3, one query with $top=3:")
	for _, ev := range last {
		fmt.Fprintf(w, "  %s  %-16s %6.2f\n", ev.Time.Format("2006-01-02 15:04"), ev.Value.What, ev.Value.Amount)
	}

	since := next.Add(-6 * time.Hour)
	n := 0
	for _, err := range s.Since(ctx, since) {
		if err != nil {
			return err
		}
		n++
	}
	fmt.Fprintf(w, "since %s: %d claims\n", since.Format("15:04"), n)

	pages, total, token := 0, 0, ""
	var oldest time.Time
	for {
		p, err := s.Page(ctx, token, 64)
		if err != nil {
			return err
		}
		pages++
		total += len(p.Events)
		if len(p.Events) > 0 {
			oldest = p.Events[len(p.Events)-1].Time
		}
		if p.Next == "" {
			break
		}
		token = p.Next
	}
	fmt.Fprintf(w, "paged back in time: %d pages of up to 64, %d claims, the oldest at %s\n", pages, total, oldest.Format("2006-01-02 15:04"))
	return nil
}
