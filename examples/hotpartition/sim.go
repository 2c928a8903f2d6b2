package main

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
)

// clock is the time the stream writer lives in: the wall clock against a
// real service, a simulated one on memstore.
type clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// wallClock is real time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// simClock runs the clients of a simulation in virtual time, one at a
// time, so that a run on memstore is fast and gives the same figures every
// time.
//
// The participants are the stream writer's goroutine and the bulk writer's
// workers, one per partition at a time (the writes use
// BulkOptions.PartitionOrder, which the simulation relies on). A participant runs until it sleeps: a round trip to the
// service, a retry's backoff, the wait for the next flush. When none runs,
// the clock jumps to the earliest wake-up and wakes that sleeper alone;
// sleepers due at the same instant wake in the order of their keys (the
// PartitionKey each works on), never in the order the Go scheduler picks.
// So every request reaches the throughput model in an order fixed by the
// input, and the model's answers are the same on every run.
//
// The clock must know when a worker ends without sleeping again. It learns
// it from the bulk writer's Progress callback, which runs after each
// transaction: a worker whose partition has no writes left, when every
// partition of the Write was taken, has nothing more to do. Write calls go
// through write, which tells the clock the shape of the Write.
type simClock struct {
	mu       sync.Mutex
	now      time.Time
	running  int // participants not asleep
	sleepers sleeperHeap
	seq      uint64
	current  string    // key of the participant that runs, when one runs alone
	w        *writeRun // the Write in progress, if any
	events   uint64    // for the stall detector
	done     chan struct{}
}

// writeRun is the shape and progress of one Write.
type writeRun struct {
	parts   int            // partitions the Write holds
	total   map[string]int // writes per partition
	settled map[string]int // writes per partition with an outcome
	started map[string]bool
	seen    int // writes settled at the last Progress call
}

type sleeper struct {
	wake  time.Time
	key   string
	seq   uint64
	ch    chan struct{}
	woken bool
}

type sleeperHeap []*sleeper

func (h sleeperHeap) Len() int { return len(h) }
func (h sleeperHeap) Less(i, j int) bool {
	if !h[i].wake.Equal(h[j].wake) {
		return h[i].wake.Before(h[j].wake)
	}
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].seq < h[j].seq
}
func (h sleeperHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sleeperHeap) Push(x any)   { *h = append(*h, x.(*sleeper)) }
func (h *sleeperHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// stallAfter is how long the simulation may go without a single event of
// the clock while a participant should be running; past it the clock's
// bookkeeping is wrong, and the program stops rather than hang.
const stallAfter = 60 * time.Second

// newSimClock returns a clock at start with one participant running: the
// caller. Close stops its stall detector.
func newSimClock(start time.Time) *simClock {
	c := &simClock{now: start, running: 1, done: make(chan struct{})}
	go c.watch()
	return c
}

// Close stops the stall detector.
func (c *simClock) Close() { close(c.done) }

func (c *simClock) watch() {
	tick := time.NewTicker(stallAfter / 4)
	defer tick.Stop()
	last, quiet := uint64(0), time.Duration(0)
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		c.mu.Lock()
		ev, busy := c.events, c.running > 0 || len(c.sleepers) > 0
		running, asleep := c.running, len(c.sleepers)
		c.mu.Unlock()
		if ev != last || !busy {
			last, quiet = ev, 0
			continue
		}
		if quiet += stallAfter / 4; quiet >= stallAfter {
			panic(fmt.Sprintf("hotpartition: the simulation stalled: %d participants running, %d asleep, no event for %v", running, asleep, quiet))
		}
	}
}

// Now implements clock.
func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep implements clock for the participant that runs.
func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	key := c.current
	c.mu.Unlock()
	return c.sleepAs(ctx, key, d)
}

// sleepAs puts the caller to sleep for d under key and lets the next
// participant run.
func (c *simClock) sleepAs(ctx context.Context, key string, d time.Duration) error {
	c.mu.Lock()
	s := &sleeper{wake: c.now.Add(max(d, 0)), key: key, seq: c.seq, ch: make(chan struct{})}
	c.seq++
	heap.Push(&c.sleepers, s)
	c.running--
	c.dispatchLocked()
	c.mu.Unlock()
	select {
	case <-s.ch:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if !s.woken {
			for i, x := range c.sleepers {
				if x == s {
					heap.Remove(&c.sleepers, i)
					break
				}
			}
			s.woken = true
			c.running++
		}
		return ctx.Err()
	}
}

// dispatchLocked wakes the next sleeper when no participant runs.
func (c *simClock) dispatchLocked() {
	c.events++
	if c.running > 0 || len(c.sleepers) == 0 {
		return
	}
	s := heap.Pop(&c.sleepers).(*sleeper)
	if s.wake.After(c.now) {
		c.now = s.wake
	}
	s.woken = true
	c.running++
	c.current = s.key
	close(s.ch)
}

// write runs one Write of the bulk writer in the simulation: the caller
// stops running while the writer's workers do.
func (c *simClock) write(ctx context.Context, w *store.BulkWriter, concurrency int, actions []store.Action) (store.BulkResult, error) {
	run := &writeRun{total: map[string]int{}, settled: map[string]int{}, started: map[string]bool{}}
	for _, a := range actions {
		run.total[a.Entity.PartitionKey]++
	}
	run.parts = len(run.total)
	c.mu.Lock()
	c.w = run
	c.running += min(concurrency, run.parts) - 1
	c.dispatchLocked()
	c.mu.Unlock()

	res, err := w.Write(ctx, actions)

	c.mu.Lock()
	c.w = nil
	c.running++
	c.events++
	c.mu.Unlock()
	return res, err
}

// request records that a worker sends a request for partition pk.
func (c *simClock) request(pk string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w != nil {
		c.w.started[pk] = true
	}
}

// progress is the bulk writer's Progress callback: it runs on the worker
// that just finished a transaction, the one participant running.
func (c *simClock) progress(p store.BulkProgress) {
	c.mu.Lock()
	defer c.mu.Unlock()
	run := c.w
	if run == nil {
		return
	}
	n := p.Written + p.Failed + p.Unknown
	delta := n - run.seen
	run.seen = n
	if delta == 0 {
		return
	}
	pk := c.current
	run.settled[pk] += delta
	if run.settled[pk] >= run.total[pk] && len(run.started) == run.parts {
		// Its partition is done and no partition is left to take: the
		// worker ends.
		c.running--
		c.dispatchLocked()
	}
}

// The client's side of a request, as azstore sends it: azcore's retry
// policy resends a 503 ServerBusy up to 4 times, after (2^try - 1) x 500 ms
// times a random factor in [0.8, 1.3), at most 30 s (azstore's defaults,
// Options.Retry). memstore answers every refusal at once, so simTable adds
// that layer, and the round trip.
const (
	clientRetries  = 4
	clientDelay    = 500 * time.Millisecond
	clientMaxDelay = 30 * time.Second
)

// retryDelay is azcore's wait before retry number try (1, 2, ...).
func retryDelay(try int, rng *rand.Rand) time.Duration {
	d := time.Duration(float64(time.Duration(1<<try-1)*clientDelay) * (0.8 + rng.Float64()/2))
	return min(d, clientMaxDelay)
}

// simTable is a memstore table seen by a client over the network: each
// request takes a round trip on the simulated clock (half out, half
// back), and a 503 is resent as azstore's retry policy does. Every other
// method is memstore's own.
type simTable struct {
	store.Table
	clock   *simClock
	rtt     time.Duration
	retries int        // resends of a refused write; clientRetries as azstore
	rng     *rand.Rand // jitter; used only by the participant that runs
}

// Transact implements store.Table.
func (t *simTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	pk := ""
	if len(actions) > 0 {
		pk = actions[0].Entity.PartitionKey
	}
	t.clock.request(pk)
	var res []store.ActionResult
	err := t.send(ctx, pk, t.retries, func() (err error) {
		res, err = t.Table.Transact(ctx, actions)
		return err
	})
	return res, err
}

// Query implements store.Table.
func (t *simTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	var page store.Page
	// A read is retried by azstore's policy for requests safe to repeat,
	// whatever -retries says of writes.
	err := t.send(ctx, "query", clientRetries, func() (err error) {
		page, err = t.Table.Query(ctx, q)
		return err
	})
	return page, err
}

// send makes one request as the client would: round trips, and retries of
// a refusal.
func (t *simTable) send(ctx context.Context, key string, retries int, do func() error) error {
	for try := 1; ; try++ {
		if err := t.clock.sleepAs(ctx, key, t.rtt/2); err != nil {
			return err
		}
		err := do()
		// The answer travels back; it arrived, whatever ctx does meanwhile.
		_ = t.clock.sleepAs(ctx, key, t.rtt-t.rtt/2)
		if !errors.Is(err, store.ErrThrottled) || try > retries {
			return err
		}
		if serr := t.clock.sleepAs(ctx, key, retryDelay(try, t.rng)); serr != nil {
			return err
		}
	}
}
