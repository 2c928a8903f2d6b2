// Command hotpartition shows the prepend/append anti-pattern and its cure.
// It writes one application log stream twice through store.BulkWriter:
// first with the hour as the PartitionKey, so every line of the moment goes
// to one partition, then spread over 16 partitions with keys.Spread. For
// each it prints the requests the service refused with 503 ServerBusy and
// the rate the writer sustained, then reads a time window of each back in
// time order.
//
// By default it runs on memstore with the throughput model on
// (memstore.WithThroughput: 2,000 entities per second per partition, 20,000
// per account) in simulated time: a 10 ms round trip per request, and a
// client that retries as a real one does (azstore's retry policy under the
// bulk writer's own). The output is the same on every run and takes a
// second or two to compute. With -conn (or TABLEKIT_CONN) it runs against
// Azurite or Azure in real time; there is no model there, the figures are
// what the service answered (Azurite never throttles).
//
//	go run ./examples/hotpartition
//	go run ./examples/hotpartition -conn "$TABLEKIT_AZURITE_CONN" -lines 4000 -rate 2000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/filter"
)

// config is one run's stream and client.
type config struct {
	Lines   int           // lines in the stream
	Rate    int           // lines per second the application logs
	Sources int           // hosts that log; the spread key
	Buckets int           // partitions of the spread layout
	Flush   time.Duration // the writer sends what arrived this often
	RTT     time.Duration // a request's round trip (memstore only)
	Retries int           // azstore's retries of a 503 under the bulk writer's (memstore only)
	Table   string        // table name prefix: <Table>Hot and <Table>Spread
}

// defaults: 54,000 lines at 18,000 a second for 3 seconds, within the
// account's 20,000 and 9 times one partition's 2,000.
var defaults = config{Lines: 54000, Rate: 18000, Sources: 512, Buckets: 16,
	Flush: 100 * time.Millisecond, RTT: 10 * time.Millisecond, Retries: clientRetries, Table: "LogStream"}

func (c config) check() error {
	switch {
	case c.Lines < 1 || c.Lines > 10_000_000:
		return fmt.Errorf("-lines %d: want 1 to 10000000", c.Lines)
	case c.Rate < 1 || c.Rate > 1_000_000:
		return fmt.Errorf("-rate %d: want 1 to 1000000 lines per second", c.Rate)
	case c.Sources < 1 || c.Sources > 1_000_000:
		return fmt.Errorf("-sources %d: want 1 to 1000000", c.Sources)
	case c.Buckets < 1 || c.Buckets > keys.MaxSpread:
		return fmt.Errorf("-buckets %d: want 1 to %d", c.Buckets, keys.MaxSpread)
	case c.Flush <= 0:
		return fmt.Errorf("-flush %v: want a positive duration", c.Flush)
	case c.RTT < 0:
		return fmt.Errorf("-rtt %v: want 0 or more", c.RTT)
	case c.Retries < 0 || c.Retries > 10:
		return fmt.Errorf("-retries %d: want 0 to 10", c.Retries)
	}
	return store.ValidateTableName(c.Table + "Spread")
}

func main() {
	conn := backend.ConnFlag()
	cfg := defaults
	flag.IntVar(&cfg.Lines, "lines", cfg.Lines, "log lines to write")
	flag.IntVar(&cfg.Rate, "rate", cfg.Rate, "lines per second the application logs")
	flag.IntVar(&cfg.Sources, "sources", cfg.Sources, "hosts that log (the spread key)")
	flag.IntVar(&cfg.Buckets, "buckets", cfg.Buckets, "partitions to spread over")
	flag.DurationVar(&cfg.Flush, "flush", cfg.Flush, "how often the writer sends what arrived")
	flag.DurationVar(&cfg.RTT, "rtt", cfg.RTT, "simulated round trip of a request (memstore only)")
	flag.IntVar(&cfg.Retries, "retries", cfg.Retries, "retries of a 503 below the bulk writer's, as azstore's retry policy makes them (memstore only; 0: the bulk writer's alone)")
	flag.StringVar(&cfg.Table, "table", cfg.Table, "table name prefix (<prefix>Hot and <prefix>Spread, created, then deleted)")
	flag.Parse()
	if err := cfg.check(); err != nil {
		log.Fatal(err)
	}
	var e *env
	if c := backend.Choose(*conn); c != "" {
		var err error
		if e, err = azureEnv(c); err != nil {
			log.Fatal(err)
		}
	} else {
		e = memEnv(cfg, memstore.ThroughputLimits{}) // the service's targets
		defer e.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if _, err := run(ctx, os.Stdout, e, cfg); err != nil {
		log.Fatalf("hotpartition on %s: %v", e.name, err)
	}
}

// simStart is when the stream is logged (its lines' times, and the
// simulated clock's start).
var simStart = time.Date(2026, 11, 22, 15, 4, 0, 0, time.UTC)

// env is a backend as the stream writer's client sees it.
type env struct {
	st    store.Store
	name  string
	clock clock
	// On memstore: the simulation and the model's report.
	sim     *simClock
	model   *memstore.Store
	rtt     time.Duration
	retries int
	rng     *rand.Rand
	// Against a service: the HTTP requests and 503 answers.
	http *countingTransport
}

// memEnv is memstore with the throughput model on a simulated clock.
func memEnv(cfg config, limits memstore.ThroughputLimits) *env {
	sim := newSimClock(simStart)
	st := memstore.New(memstore.WithClock(sim.Now), memstore.WithThroughput(limits))
	return &env{st: st, name: "memstore with the throughput model (simulated time)", clock: sim,
		sim: sim, model: st, rtt: cfg.RTT, retries: cfg.Retries, rng: rand.New(rand.NewPCG(1, 2))}
}

// azureEnv is azstore on the wall clock, counting its HTTP answers.
func azureEnv(conn string) (*env, error) {
	ct := &countingTransport{next: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	st, err := azstore.NewFromConnectionString(conn, &azstore.Options{Transport: ct})
	if err != nil {
		return nil, err
	}
	return &env{st: st, name: backend.Describe(conn), clock: wallClock{}, http: ct}, nil
}

func (e *env) close() {
	if e.sim != nil {
		e.sim.Close()
	}
}

// table returns the client's handle of a table.
// jitter spreads a bulk retry's backoff as the bulk writer does by
// default (half to all of it), from the simulation's seeded source, so a
// run on the simulated clock repeats exactly.
func (e *env) jitter(d time.Duration) time.Duration {
	if d < 2 {
		return d
	}
	return d/2 + time.Duration(e.rng.Int64N(int64(d-d/2)))
}

func (e *env) table(name string) store.Table {
	t := e.st.Table(name)
	if e.sim != nil {
		return &simTable{Table: t, clock: e.sim, rtt: e.rtt, retries: e.retries, rng: e.rng}
	}
	return t
}

// countingTransport counts the HTTP requests and the 503 answers of a
// store, azcore's retries included.
type countingTransport struct {
	next       *http.Client
	requests   atomic.Int64
	serverBusy atomic.Int64
}

func (c *countingTransport) Do(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	resp, err := c.next.Do(req)
	if err == nil && resp.StatusCode == http.StatusServiceUnavailable {
		c.serverBusy.Add(1)
	}
	return resp, err
}

// counts reads what the service saw so far: of one table on memstore
// (from the model's report), of the whole store otherwise.
func (e *env) counts(table string) (requests, busy int64) {
	if e.model != nil {
		for _, p := range e.model.Throughput().Partitions {
			if strings.EqualFold(p.Table, table) {
				requests += p.Requests
				busy += p.Throttled + p.AccountThrottled
			}
		}
		return requests, busy
	}
	return e.http.requests.Load(), e.http.serverBusy.Load()
}

// logLine is one line of the application's log.
type logLine struct {
	at      time.Time
	source  string
	level   string
	message string
}

// stream makes the log: line i is logged at simStart + i/rate by one of
// the sources, picked at random (seeded: the same stream every run).
func stream(cfg config) []logLine {
	rng := rand.New(rand.NewPCG(2026, 11))
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR"}
	lines := make([]logLine, cfg.Lines)
	for i := range lines {
		src := rng.IntN(cfg.Sources)
		lines[i] = logLine{
			at:      simStart.Add(offset(i, cfg.Rate)),
			source:  fmt.Sprintf("host-%04d", src),
			level:   levels[rng.IntN(len(levels))],
			message: fmt.Sprintf("request %d served in %d ms", i, 1+rng.IntN(250)),
		}
	}
	return lines
}

// offset is when line i comes, after the first.
func offset(i, rate int) time.Duration {
	return time.Duration(int64(i) * int64(time.Second) / int64(rate))
}

// layout is a key design for the stream.
type layout struct {
	title   string
	key     string // the PartitionKey, in words
	table   string
	buckets int // 0: the hour alone
}

func layouts(cfg config, first logLine) ([]layout, error) {
	ls := []layout{
		{title: "one partition", key: "the hour", table: cfg.Table + "Hot"},
		{title: fmt.Sprintf("spread over %d partitions", cfg.Buckets),
			key:   fmt.Sprintf(`keys.Spread(host, %d) + "_" + the hour`, cfg.Buckets),
			table: cfg.Table + "Spread", buckets: cfg.Buckets},
	}
	for i, l := range ls {
		pk, err := l.partitionKey(first)
		if err != nil {
			return nil, err
		}
		ls[i].key += fmt.Sprintf(", %q", pk)
	}
	return ls, nil
}

// partitionKey is the line's partition: its hour, spread by its source.
func (l layout) partitionKey(ln logLine) (string, error) {
	hour, err := keys.Bucket(ln.at, keys.Hour)
	if err != nil || l.buckets == 0 {
		return hour, err
	}
	b, err := keys.Spread(ln.source, l.buckets)
	return b + "_" + hour, err
}

// partitions lists the partitions a reader of [from, to] visits: every
// hour, and in each every spread bucket.
func (l layout) partitions(from, to time.Time) ([]string, error) {
	hours, err := keys.Buckets(from, to, keys.Hour)
	if err != nil || l.buckets == 0 {
		return hours, err
	}
	bs, err := keys.SpreadBuckets(l.buckets)
	if err != nil {
		return nil, err
	}
	var pks []string
	for _, h := range hours {
		for _, b := range bs {
			pks = append(pks, b+"_"+h)
		}
	}
	return pks, nil
}

// rowKey orders a partition's lines by time: the line's .NET ticks, then
// its source (two lines of one tick are from different sources).
func rowKey(ln logLine) (string, error) {
	ticks, err := keys.TicksKey(ln.at)
	if err != nil {
		return "", err
	}
	return keys.Join(ticks, ln.source)
}

// keys returns the line's PartitionKey and RowKey.
func (l layout) keys(ln logLine) (pk, rk string, err error) {
	if pk, err = l.partitionKey(ln); err != nil {
		return "", "", err
	}
	rk, err = rowKey(ln)
	return pk, rk, err
}

func (l layout) action(ln logLine) (store.Action, error) {
	pk, rk, err := l.keys(ln)
	if err != nil {
		return store.Action{}, err
	}
	// An upsert repeats harmlessly: the writer may send it again after a
	// lost answer, and the stream writer after the writer gave up on it.
	return store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: pk, RowKey: rk,
		Properties: map[string]any{"Source": ln.source, "Level": ln.level, "Message": ln.message}}}, nil
}

// result is what one write of the stream measured.
type result struct {
	lines, partitions int
	requests, busy    int64 // what the service saw: requests, 503 answers
	requeued          int   // writes the bulk writer gave up on (still throttled), sent again later
	elapsed           time.Duration
	lag               time.Duration // from the last line's arrival to its write
}

func (r result) rate() float64 { return float64(r.lines) / r.elapsed.Seconds() }

// writeStream writes the lines as they arrive at cfg.Rate: every
// cfg.Flush, what arrived since the last flush (and what the last flush
// could not write) goes to the bulk writer in one Write.
func writeStream(ctx context.Context, e *env, l layout, cfg config, lines []logLine) (result, error) {
	res := result{lines: len(lines)}
	tbl := e.table(l.table)
	// A log appender keeps each partition's lines in order: one
	// transaction of a partition at a time (PartitionOrder). Without it the
	// bulk writer sends a partition's transactions at once, which only
	// makes a hot partition hotter.
	opts := store.BulkOptions{Concurrency: cfg.Buckets, PartitionOrder: true}
	if e.sim != nil {
		opts.Sleep, opts.Progress, opts.Jitter = e.sim.Sleep, e.sim.progress, e.jitter
	}
	w := store.NewBulkWriter(tbl, opts)
	parts := map[string]bool{}
	req0, busy0 := e.counts(l.table)
	start := e.clock.Now()
	next, written := 0, 0
	var pending []int // lines arrived, not yet written
	for written < len(lines) {
		now := e.clock.Now()
		for next < len(lines) && !start.Add(offset(next, cfg.Rate)).After(now) {
			pending = append(pending, next)
			next++
		}
		if len(pending) == 0 {
			if err := e.clock.Sleep(ctx, start.Add(offset(next, cfg.Rate)).Sub(now)); err != nil {
				return res, err
			}
			continue
		}
		acts := make([]store.Action, len(pending))
		for k, i := range pending {
			a, err := l.action(lines[i])
			if err != nil {
				return res, err
			}
			acts[k] = a
			parts[a.Entity.PartitionKey] = true
		}
		var out store.BulkResult
		var err error
		if e.sim != nil {
			out, err = e.sim.write(ctx, w, opts.Concurrency, acts)
		} else {
			out, err = w.Write(ctx, acts)
		}
		if len(out.Outcomes) != len(acts) {
			return res, err
		}
		var again []int
		for k, o := range out.Outcomes {
			switch {
			case o.Err == nil:
				written++
			case o.Unknown || errors.Is(o.Err, store.ErrTransient):
				// Not applied, or perhaps applied: an upsert may be sent
				// again either way.
				again = append(again, pending[k])
				res.requeued++
			default:
				return res, fmt.Errorf("line %d: %w", pending[k], o.Err)
			}
		}
		pending = again
		if written < len(lines) {
			if wait := now.Add(cfg.Flush).Sub(e.clock.Now()); wait > 0 {
				if err := e.clock.Sleep(ctx, wait); err != nil {
					return res, err
				}
			}
		}
	}
	end := e.clock.Now()
	res.elapsed = end.Sub(start)
	res.lag = end.Sub(start.Add(offset(len(lines)-1, cfg.Rate)))
	res.partitions = len(parts)
	req1, busy1 := e.counts(l.table)
	res.requests, res.busy = req1-req0, busy1-busy0
	return res, nil
}

// readWindow reads the lines logged in [from, to) in time order: one
// query per partition (the hour's, or each spread bucket's), merged by
// RowKey.
func readWindow(ctx context.Context, e *env, l layout, from, to time.Time) (rows []store.Entity, queries int, err error) {
	pks, err := l.partitions(from, to.Add(-time.Nanosecond))
	if err != nil {
		return nil, 0, err
	}
	lo, err := keys.TicksKey(from)
	if err != nil {
		return nil, 0, err
	}
	hi, err := keys.TicksKey(to)
	if err != nil {
		return nil, 0, err
	}
	tbl := e.table(l.table)
	for _, pk := range pks {
		queries++
		q := store.Query{Filter: filter.And(filter.PK.Eq(pk), filter.RK.Ge(lo), filter.RK.Lt(hi)).String()}
		var part []store.Entity
		for ent, err := range store.All(ctx, tbl, q) {
			if err != nil {
				return nil, queries, err
			}
			part = append(part, ent)
		}
		// Each partition comes in RowKey order; merge it in.
		rows = mergeByRowKey(rows, part)
	}
	return rows, queries, nil
}

func mergeByRowKey(a, b []store.Entity) []store.Entity {
	out := make([]store.Entity, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if store.CompareOrdinal(a[0].RowKey, b[0].RowKey) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// verify reads the whole stream back from l's table: every line once, in
// time order, with its text.
func verify(ctx context.Context, e *env, l layout, cfg config, lines []logLine) error {
	last := lines[len(lines)-1].at
	rows, _, err := readWindow(ctx, e, l, lines[0].at, last.Add(100*time.Nanosecond)) // a tick after the last
	if err != nil {
		return err
	}
	if len(rows) != len(lines) {
		return fmt.Errorf("%s holds %d lines, want %d", l.table, len(rows), len(lines))
	}
	for i, r := range rows {
		pk, rk, err := l.keys(lines[i])
		if err != nil {
			return err
		}
		if r.PartitionKey != pk || r.RowKey != rk || r.Properties["Message"] != lines[i].message {
			return fmt.Errorf("%s: line %d read back as %s/%s %v, want %s/%s %q", l.table, i,
				r.PartitionKey, r.RowKey, r.Properties["Message"], pk, rk, lines[i].message)
		}
	}
	return nil
}

// run writes the stream in both layouts and prints what it measured.
func run(ctx context.Context, w io.Writer, e *env, cfg config) (results []result, err error) {
	lines := stream(cfg)
	ls, err := layouts(cfg, lines[0])
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		if err := e.st.CreateTable(ctx, l.table); err != nil {
			return nil, err
		}
		defer func() {
			if derr := e.st.DeleteTable(context.WithoutCancel(ctx), l.table); err == nil {
				err = derr
			}
		}()
	}
	fmt.Fprintln(w, "backend:", e.name)
	if e.model != nil {
		lim := e.model.Throughput().Limits
		fmt.Fprintf(w, "model: %s entities/s per partition (burst %s), %s per account (burst %s); a %v round trip per request\n",
			num(lim.PartitionRate), num(lim.PartitionBurst), num(lim.AccountRate), num(lim.AccountBurst), cfg.RTT)
	}
	fmt.Fprintf(w, "client: store.BulkWriter, %d partitions at once, 5 attempts from 100ms", cfg.Buckets)
	switch {
	case e.sim == nil:
		fmt.Fprintln(w, "; under it azstore's retry policy")
	case cfg.Retries > 0:
		fmt.Fprintf(w, "; under it azstore's retry of a 503 (%d retries from 500ms, jitter)\n", cfg.Retries)
	default:
		fmt.Fprintln(w, "; nothing under it (-retries 0)")
	}
	fmt.Fprintf(w, "stream: %s lines from %s hosts at %s lines/s for %v, flushed every %v\n\n",
		num(cfg.Lines), num(cfg.Sources), num(cfg.Rate), offset(cfg.Lines, cfg.Rate), cfg.Flush)

	for _, l := range ls {
		r, err := writeStream(ctx, e, l, cfg, lines)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.title, err)
		}
		results = append(results, r)
		fmt.Fprintf(w, "%s (PartitionKey = %s):\n", l.title, l.key)
		fmt.Fprintf(w, "  %s lines into %s in %v: %s lines/s sustained; the last line written %v after it was logged\n",
			num(r.lines), plural(r.partitions, "partition"), r.elapsed.Round(time.Millisecond), num(int(math.Round(r.rate()))), r.lag.Round(time.Millisecond))
		fmt.Fprintf(w, "  %s requests, %s answered 503 ServerBusy; %s writes the bulk writer gave up on, sent again later\n",
			num(int(r.requests)), num(int(r.busy)), num(r.requeued))
	}
	hot, spread := results[0], results[1]
	fmt.Fprintf(w, "spread vs one partition: %.1fx the sustained rate, ", spread.rate()/hot.rate())
	switch {
	case hot.busy > 0 && spread.busy <= hot.busy:
		fmt.Fprintf(w, "%.0f%% fewer 503 answers\n", 100*(1-float64(spread.busy)/float64(hot.busy)))
	case hot.busy > 0:
		fmt.Fprintf(w, "%.0f%% more 503 answers\n", 100*(float64(spread.busy)/float64(hot.busy)-1))
	default:
		fmt.Fprintln(w, "no 503 answers in either")
	}

	if e.model != nil {
		fmt.Fprintln(w, "\nhot partitions (memstore's Throughput report):")
		report := e.model.Throughput()
		for _, l := range ls {
			var mine []memstore.PartitionStats
			for _, p := range report.Partitions {
				if strings.EqualFold(p.Table, l.table) {
					mine = append(mine, p)
				}
			}
			hot := slices.DeleteFunc(slices.Clone(mine), func(p memstore.PartitionStats) bool { return !p.Hot() })
			if len(hot) == 0 && len(mine) > 0 {
				p := slices.MaxFunc(mine, func(a, b memstore.PartitionStats) int { return int(a.PeakRate - b.PeakRate) })
				fmt.Fprintf(w, "  %s: none over its own rate; the busiest, %s, peaked at %s entities/s\n", l.table, p.PartitionKey, num(int(p.PeakRate)))
			}
			for _, p := range hot[:min(len(hot), 3)] {
				fmt.Fprintf(w, "  %s %s: %s requests, %s entities, %s throttled, peak %s entities/s\n", l.table, p.PartitionKey,
					num(int(p.Requests)), num(int(p.Entities)), num(int(p.Throttled)), num(int(p.PeakRate)))
			}
		}
	}

	from, to := simStart.Add(2*time.Second), simStart.Add(3*time.Second)
	if span := offset(cfg.Lines, cfg.Rate); span < 3*time.Second {
		from, to = simStart, simStart.Add(span)
	}
	fmt.Fprintf(w, "\nreading %s to %s back in time order:\n", from.Format("15:04:05"), to.Format("15:04:05"))
	for _, l := range ls {
		rows, queries, err := readWindow(ctx, e, l, from, to)
		if err != nil {
			return nil, fmt.Errorf("%s: read back: %w", l.title, err)
		}
		how := "1 query of 1 partition"
		if queries > 1 {
			how = fmt.Sprintf("%d queries, one per partition (keys.SpreadBuckets), merged by RowKey", queries)
		}
		fmt.Fprintf(w, "  %s: %s lines from %s\n", l.title, num(len(rows)), how)
	}
	for _, l := range ls {
		if err := verify(ctx, e, l, cfg, lines); err != nil {
			return nil, err
		}
	}
	fmt.Fprintln(w, "verified: both tables hold every line once, in time order")
	return results, nil
}

// plural writes n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return num(n) + " " + thing + "s"
}

// num writes n with thousands separators.
func num(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
