// Command logdata shows the log data pattern: three web servers log their
// requests at once into append blobs named by the hour, each blob written
// by one server, and a reader finds the errors of two minutes by listing
// one folder and merging its blobs by time. It runs on memstore by
// default; pass -conn (or set TABLEKIT_CONN) to run it against Azurite or
// Azure. The requests carry simulated times, so the output is the same on
// every run.
//
//	go run ./examples/logdata
//	go run ./examples/logdata -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/patterns/logdata"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
)

func main() {
	conn := backend.ConnFlag()
	container := flag.String("container", "weblogs", "blob container to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azblobs.Service())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *container); err != nil {
		log.Fatalf("logdata on %s: %v", name, err)
	}
}

const (
	servers  = 3
	requests = 1000 // per server
)

// start is the simulated time of the first request.
var start = time.Date(2026, 11, 24, 14, 50, 0, 0, time.UTC)

// serverClock is server s's simulated clock: a request every 1.2 s from
// start, the servers a few milliseconds apart.
func serverClock(s int) func() time.Time {
	next := start.Add(time.Duration(s*137) * time.Millisecond)
	return func() time.Time { t := next; next = next.Add(1200 * time.Millisecond); return t }
}

// request is the log line of server s's i-th request.
func request(s, i int) string {
	status := 200
	if (i*7+s)%53 == 0 {
		status = 500
	}
	return fmt.Sprintf("web-%d GET /items/%d %d %dms", s+1, i, status, 5+(i*31+s)%90)
}

func run(ctx context.Context, w io.Writer, st store.Store, container string) (err error) {
	c := st.Container(container)
	if err := c.Create(ctx); err != nil {
		return err
	}
	defer func() {
		if derr := c.Delete(context.WithoutCancel(ctx)); err == nil {
			err = derr
		}
	}()

	// Three servers log at once, each with its own writer (as separate
	// processes would), into the same folders. Small blocks and blobs so
	// that the rollovers show.
	var wg sync.WaitGroup
	stats := make([]logdata.Stats, servers)
	errs := make([]error, servers)
	for s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lw, err := logdata.NewWriter(c, "web", &logdata.Options{
				ID: fmt.Sprintf("web-%d", s+1), Clock: serverClock(s),
				BlockSize: 4 << 10, MaxBlobSize: 24 << 10,
			})
			if err != nil {
				errs[s] = err
				return
			}
			for i := range requests {
				if err := lw.Write(ctx, []byte(request(s, i))); err != nil {
					errs[s] = err
					return
				}
			}
			errs[s] = lw.Close(ctx)
			stats[s] = lw.Stats()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var total logdata.Stats
	for _, s := range stats {
		total.Records += s.Records
		total.Blocks += s.Blocks
		total.Blobs += s.Blobs
		total.Rollovers += s.Rollovers
		total.Periods += s.Periods
	}
	fmt.Fprintf(w, "%d servers logged %d requests from %s to %s: %d appends of up to 4 KiB into %d blobs (%d rollovers at 24 KiB, %d at the hour)\n",
		servers, total.Records, start.Format("15:04"), start.Add(20*time.Minute).Format("15:04"), total.Blocks, total.Blobs, total.Rollovers, total.Periods)
	fmt.Fprintf(w, "write cost: %d appends + %d creates = %d requests, %.1f records per request\n",
		total.Blocks, total.Blobs, total.Blocks+total.Blobs, float64(total.Records)/float64(total.Blocks+total.Blobs))

	r, err := logdata.NewReader(c, "web", nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "the blobs of 15:00-16:00 (one listing):")
	for b, err := range r.Blobs(ctx, start.Add(10*time.Minute), start.Add(70*time.Minute)) {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s  %6d bytes\n", b.Name, b.Size)
	}

	// The errors of two minutes: one listing of the 15:00 folder, and the
	// blobs read and merged by time.
	from, to := start.Add(14*time.Minute), start.Add(16*time.Minute)
	n := 0
	var errors500 []string
	for rec, err := range r.Records(ctx, from, to) {
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(rec.Data, []byte(" 500 ")) {
			errors500 = append(errors500, rec.Time.Format("15:04:05.000")+" "+string(rec.Data))
		}
	}
	fmt.Fprintf(w, "requests from %s to %s: %d, of which %d failed:\n", from.Format("15:04"), to.Format("15:04"), n, len(errors500))
	for _, e := range errors500 {
		fmt.Fprintln(w, "  "+e)
	}

	// Bad input is refused before anything is sent.
	lw, err := logdata.NewWriter(c, "web", &logdata.Options{ID: "web-9"})
	if err != nil {
		return err
	}
	err = lw.Write(ctx, bytes.Repeat([]byte("x"), 5<<20))
	fmt.Fprintf(w, "a 5 MiB record: %s (%d)\n", store.Code(err), store.Status(err))
	if _, err := c.Put(ctx, "web/README.txt", []byte("request logs, by hour"), nil); err != nil {
		return err
	}
	_, err = c.AppendBlock(ctx, "web/README.txt", []byte("more\n"), nil)
	fmt.Fprintf(w, "appending to a block blob: %s (%d)\n", store.Code(err), store.Status(err))
	_, err = c.AppendBlock(ctx, "web/2026/11/24/15/web-1-00000004.log", nil, nil)
	fmt.Fprintf(w, "an empty block: %s (%d)\n", store.Code(err), store.Status(err))
	_, err = logdata.NewWriter(c, "web", &logdata.Options{ID: "web/1"})
	fmt.Fprintf(w, "a writer id with a slash: %s\n", strings.TrimPrefix(err.Error(), "InvalidInput (400): logdata: "))
	return lw.Close(ctx)
}
