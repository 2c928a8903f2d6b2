package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

const wantOutput = `backend: memstore with the throughput model (simulated time)
model: 2,000 entities/s per partition (burst 2,000), 20,000 per account (burst 20,000); a 10ms round trip per request
client: store.BulkWriter, 16 partitions at once, 5 attempts from 100ms; under it azstore's retry of a 503 (4 retries from 500ms, jitter)
stream: 54,000 lines from 512 hosts at 18,000 lines/s for 3s, flushed every 100ms

one partition (PartitionKey = the hour, "2026112215"):
  54,000 lines into 1 partition in 26.556s: 2,033 lines/s sustained; the last line written 23.556s after it was logged
  581 requests, 38 answered 503 ServerBusy; 0 writes the bulk writer gave up on, sent again later
spread over 16 partitions (PartitionKey = keys.Spread(host, 16) + "_" + the hour, "05_2026112215"):
  54,000 lines into 16 partitions in 3.02s: 17,881 lines/s sustained; the last line written 20ms after it was logged
  881 requests, 0 answered 503 ServerBusy; 0 writes the bulk writer gave up on, sent again later
spread vs one partition: 8.8x the sustained rate, 100% fewer 503 answers

hot partitions (memstore's Throughput report):
  LogStreamHot 2026112215: 581 requests, 54,000 entities, 38 throttled, peak 3,900 entities/s
  LogStreamSpread: none over its own rate; the busiest, 02_2026112215, peaked at 1,278 entities/s

reading 15:04:02 to 15:04:03 back in time order:
  one partition: 18,000 lines from 1 query of 1 partition
  spread over 16 partitions: 18,000 lines from 16 queries, one per partition (keys.SpreadBuckets), merged by RowKey
verified: both tables hold every line once, in time order
`

// runMem runs the program on a fresh memstore and returns its output.
func runMem(t testing.TB, cfg config) (string, []result, *env) {
	t.Helper()
	e := memEnv(cfg, memstore.ThroughputLimits{})
	defer e.close()
	var out bytes.Buffer
	res, err := run(context.Background(), &out, e, cfg)
	if err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, out.String())
	}
	return out.String(), res, e
}

// TestHotPartitionOnMemstore runs the program as go run does: the output
// is the same on every run, the spread layout sustains at least 8 times
// the rate with at least 90% fewer 503 answers, and no table is left.
func TestHotPartitionOnMemstore(t *testing.T) {
	out, res, e := runMem(t, defaults)
	if out != wantOutput {
		t.Fatalf("output:\n%s\nwant:\n%s", out, wantOutput)
	}
	hot, spread := res[0], res[1]
	if ratio := spread.rate() / hot.rate(); ratio < 8 {
		t.Fatalf("spread sustains %.0f lines/s, %.1fx one partition's %.0f: want at least 8x", spread.rate(), ratio, hot.rate())
	}
	if hot.busy == 0 || float64(spread.busy) > 0.1*float64(hot.busy) {
		t.Fatalf("503 answers: %d spread, %d one partition: want at least 90%% fewer", spread.busy, hot.busy)
	}
	page, err := e.st.ListTables(context.Background(), store.ListTablesOptions{})
	if err != nil || len(page.Tables) != 0 {
		t.Fatalf("tables left behind: %v %v", page.Tables, err)
	}
	t.Logf("one partition: %.0f lines/s, %d of %d requests answered 503; spread: %.0f lines/s, %d of %d",
		hot.rate(), hot.busy, hot.requests, spread.rate(), spread.busy, spread.requests)
}

// TestHotPartitionDeterministic runs a smaller stream with one thread and
// with several: the simulation, not the Go scheduler, decides the order of
// requests, so the outputs are the same.
func TestHotPartitionDeterministic(t *testing.T) {
	cfg := defaults
	cfg.Lines, cfg.Rate, cfg.Buckets, cfg.Table = 6000, 3000, 4, "Det"
	prev := runtime.GOMAXPROCS(1)
	one, _, _ := runMem(t, cfg)
	runtime.GOMAXPROCS(max(prev, 4))
	many, res, _ := runMem(t, cfg)
	runtime.GOMAXPROCS(prev)
	if one != many {
		t.Fatalf("GOMAXPROCS 1:\n%s\nGOMAXPROCS %d:\n%s", one, max(prev, 4), many)
	}
	if res[0].busy == 0 {
		t.Fatalf("the one-partition write was never throttled: the test proves nothing\n%s", one)
	}
}

// TestHotPartitionRequeue runs the program against an account far too
// slow for the stream, with no retries under the bulk writer's: the
// writer gives up on writes that stay throttled (the spread ones, which
// the account refuses), the program sends them
// again in a later flush, and in the end every line is stored once (run
// reads every line back).
func TestHotPartitionRequeue(t *testing.T) {
	cfg := defaults
	cfg.Lines, cfg.Rate, cfg.Buckets, cfg.Retries, cfg.Table = 3000, 3000, 4, 0, "Slow"
	e := memEnv(cfg, memstore.ThroughputLimits{PartitionRate: 200, AccountRate: 150})
	defer e.close()
	var out bytes.Buffer
	res, err := run(context.Background(), &out, e, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if res[1].requeued == 0 {
		t.Fatalf("no write was given up and sent again (%d, %d): the test proves nothing\n%s", res[0].requeued, res[1].requeued, out.String())
	}
	t.Logf("one partition: %d writes given up and sent again, %d 503s; spread: %d and %d; every line stored once",
		res[0].requeued, res[0].busy, res[1].requeued, res[1].busy)
}

// TestHotPartitionOnAzurite runs a small stream against Azurite in real
// time. Azurite does not throttle; the figures are what it answered.
func TestHotPartitionOnAzurite(t *testing.T) {
	conn := azuritetest.Conn(t)
	e, err := azureEnv(conn)
	if err != nil {
		t.Fatal(err)
	}
	cfg := defaults
	cfg.Lines, cfg.Rate, cfg.Table = 1000, 1000, fmt.Sprintf("Hot%d", time.Now().UnixNano()%1_000_000_000)
	var out bytes.Buffer
	res, err := run(t.Context(), &out, e, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{"backend: Azurite", "one partition (PartitionKey", "1,000 lines into 1 partition in",
		"1,000 lines into 16 partitions in", "spread vs one partition:", "verified: both tables hold every line once"} {
		if !strings.Contains(s, want) {
			t.Fatalf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "model:") || strings.Contains(s, "Throughput report") {
		t.Fatalf("the Azurite run prints a model it does not have:\n%s", s)
	}
	if res[0].requests < 10 || res[1].requests < 16 {
		t.Fatalf("requests counted: %d and %d, want at least one per transaction", res[0].requests, res[1].requests)
	}
	page, err := e.st.ListTables(t.Context(), store.ListTablesOptions{Prefix: cfg.Table})
	if err != nil || len(page.Tables) != 0 {
		t.Fatalf("tables left behind: %v %v", page.Tables, err)
	}
	t.Logf("Azurite:\n%s", s)
}

func TestConfigCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(*config)
		want string
	}{
		{func(c *config) { c.Lines = 0 }, "-lines 0"},
		{func(c *config) { c.Rate = -5 }, "-rate -5"},
		{func(c *config) { c.Sources = 0 }, "-sources 0"},
		{func(c *config) { c.Buckets = 10001 }, "-buckets 10001: want 1 to 10000"},
		{func(c *config) { c.Flush = 0 }, "-flush 0s"},
		{func(c *config) { c.RTT = -time.Millisecond }, "-rtt -1ms"},
		{func(c *config) { c.Retries = 11 }, "-retries 11"},
		{func(c *config) { c.Table = "1bad" }, "1badSpread"},
	} {
		cfg := defaults
		c.edit(&cfg)
		if err := cfg.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("check() = %v, want it to name %q", err, c.want)
		}
	}
	if err := defaults.check(); err != nil {
		t.Fatal(err)
	}
}

// TestSimClockOrder checks the simulation's order: sleepers wake by time,
// then by key, whatever order they fell asleep in, and only one runs at a
// time.
func TestSimClockOrder(t *testing.T) {
	c := newSimClock(simStart)
	defer c.Close()
	ctx := context.Background()
	var mu sync.Mutex
	var order []string
	running := 0
	var wg sync.WaitGroup
	c.mu.Lock()
	c.running += 6 - 1 // six participants instead of the caller
	c.mu.Unlock()
	for _, p := range []struct {
		key string
		d   time.Duration
	}{{"c", 20}, {"a", 20}, {"b", 10}, {"e", 30}, {"d", 20}, {"f", 0}} {
		wg.Go(func() {
			for step := range 2 {
				if err := c.sleepAs(ctx, p.key, p.d*time.Millisecond); err != nil {
					t.Error(err)
				}
				mu.Lock()
				running++
				if running != 1 {
					t.Errorf("%d participants run at once", running)
				}
				order = append(order, fmt.Sprintf("%s%d@%v", p.key, step, c.Now().Sub(simStart)))
				running--
				mu.Unlock()
			}
			c.mu.Lock()
			c.running--
			c.dispatchLocked()
			c.mu.Unlock()
		})
	}
	wg.Wait()
	// f wakes at once, twice; b at 10 ms; at 20 ms a, b (again), c, d in
	// key order; e at 30 ms; a, c, d at 40 ms; e at 60 ms.
	want := "f0@0s f1@0s b0@10ms a0@20ms b1@20ms c0@20ms d0@20ms e0@30ms a1@40ms c1@40ms d1@40ms e1@60ms"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("order %s\nwant  %s", got, want)
	}
}

// TestSimClockCancel checks that a sleeper whose context ends leaves the
// queue and runs again.
func TestSimClockCancel(t *testing.T) {
	c := newSimClock(simStart)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.running++ // a second participant that never sleeps keeps the clock still
	c.mu.Unlock()
	done := make(chan error)
	go func() { done <- c.sleepAs(ctx, "x", time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep: %v, want context.Canceled", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != 2 || len(c.sleepers) != 0 || !c.now.Equal(simStart) {
		t.Fatalf("after the cancel: %d running, %d asleep, now %v", c.running, len(c.sleepers), c.now)
	}
}

// TestSimBulkWriterFewerWorkers runs a Write with fewer workers than
// partitions, some throttled, twice: the clock follows workers from one
// partition to the next and the two runs agree.
func TestSimBulkWriterFewerWorkers(t *testing.T) {
	runOnce := func() string {
		sim := newSimClock(simStart)
		defer sim.Close()
		st := memstore.New(memstore.WithClock(sim.Now), memstore.WithThroughput(memstore.ThroughputLimits{PartitionRate: 500}))
		ctx := context.Background()
		if err := st.CreateTable(ctx, "Few"); err != nil {
			t.Fatal(err)
		}
		e := &env{st: st, clock: sim, sim: sim, model: st, rtt: 3 * time.Millisecond, retries: clientRetries, rng: rand.New(rand.NewPCG(1, 2))}
		var acts []store.Action
		for p := range 7 {
			for i := range 150 * (p + 1) {
				acts = append(acts, store.Action{Kind: store.ActionUpsertReplace,
					Entity: store.Entity{PartitionKey: fmt.Sprint("p", p), RowKey: fmt.Sprintf("%05d", i)}})
			}
		}
		w := store.NewBulkWriter(e.table("Few"), store.BulkOptions{Concurrency: 3, PartitionOrder: true, Sleep: sim.Sleep, Progress: sim.progress, Jitter: e.jitter})
		res, err := sim.write(ctx, w, 3, acts)
		if err != nil || res.Written != len(acts) {
			t.Fatalf("write: %d of %d written: %v", res.Written, len(acts), err)
		}
		r := st.Throughput()
		return fmt.Sprintf("done at %v, %d requests, %d throttled", sim.Now().Sub(simStart), r.Requests, r.Throttled)
	}
	a, b := runOnce(), runOnce()
	if a != b || !strings.Contains(a, "throttled") || strings.Contains(a, " 0 throttled") {
		t.Fatalf("runs: %q and %q, want two equal runs with throttling", a, b)
	}
	t.Log(a)
}

// BenchmarkHotPartition measures, in one run on memstore with the
// throughput model, the rate each layout sustains and the 503 answers each
// meets, in simulated time (the benchmark's own ns/op is the simulation's
// CPU cost). Run it once: go test -run '^$' -bench HotPartition -benchtime 1x.
func BenchmarkHotPartition(b *testing.B) {
	var res []result
	for b.Loop() {
		_, res, _ = runMem(b, defaults)
	}
	hot, spread := res[0], res[1]
	b.ReportMetric(hot.rate(), "hot-lines/s")
	b.ReportMetric(spread.rate(), "spread-lines/s")
	b.ReportMetric(spread.rate()/hot.rate(), "rate-x")
	b.ReportMetric(float64(hot.busy), "hot-503s")
	b.ReportMetric(float64(spread.busy), "spread-503s")
	b.ReportMetric(100*(1-float64(spread.busy)/float64(hot.busy)), "fewer-503-%")
}
