// Package eventualtest holds what the tests of packages built on
// core/eventual share: a backend with a clock (fake on memstore, the
// wall clock on Azurite), engine options fit for each, a drain that runs
// workers and sweeps until nothing is left, and a store that makes the
// process "crash" at a chosen request.
package eventualtest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// Clock is a fake clock for memstore and the engine, moved by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a fake clock at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Env is one backend with a clock: memstore's is fake, Azurite's the
// wall clock (waiting is then real).
type Env struct {
	B     backendtest.Backend
	Clock *Clock // nil on Azurite
	Names string // unique suffix for queue and container names
}

var seq atomic.Int64

// EachBackend runs body on memstore (with a fake clock and opts) and on
// Azurite (skipped when Azurite is not running).
func EachBackend(t *testing.T, body func(t *testing.T, e Env), opts ...memstore.Option) {
	t.Run("memstore", func(t *testing.T) {
		body(t, MemEnv(opts...))
	})
	t.Run("azurite", func(t *testing.T) {
		body(t, AzuriteEnv(t))
	})
}

// AzuriteEnv is the test's Azurite, with names of its own for queues and
// containers (skipped when Azurite is not running).
func AzuriteEnv(t *testing.T) Env {
	return Env{B: backendtest.Azurite(t), Names: fmt.Sprintf("%d%d", time.Now().UnixNano()%1_000_000, seq.Add(1))}
}

// MemEnv is a fresh memstore on a fake clock, with opts after the clock:
// the memstore half of EachBackend, for a test that runs on memstore
// alone (its fault injection, its request counts).
func MemEnv(opts ...memstore.Option) Env {
	c := NewClock()
	return Env{B: backendtest.Memstore(append([]memstore.Option{memstore.WithClock(c.Now)}, opts...)...), Clock: c, Names: fmt.Sprint(seq.Add(1))}
}

// Fake reports whether the clock is fake (memstore).
func (e Env) Fake() bool { return e.Clock != nil }

// Now reads the env's clock.
func (e Env) Now() time.Time {
	if e.Clock != nil {
		return e.Clock.Now()
	}
	return time.Now()
}

// Pass lets d go by: on the fake clock at once, on Azurite for real.
func (e Env) Pass(d time.Duration) {
	if e.Clock != nil {
		e.Clock.Advance(d)
		return
	}
	time.Sleep(d)
}

// Options are a test's engine inputs: the queue New takes, and the
// engine's options, whose fields a test sets through the embedding.
type Options struct {
	Queue string
	eventual.Options
}

// New builds an engine over st from o.
func (o *Options) New(st store.Store) (*eventual.Engine, error) {
	return eventual.New(st, o.Queue, &o.Options)
}

// Opts are engine options for a test: a short visibility on Azurite,
// where time is real; the fake clock and no sleeping on memstore.
func (e Env) Opts(queue string) Options {
	o := Options{Queue: queue + e.Names, Options: eventual.Options{Visibility: time.Second,
		Backoff: time.Millisecond, Concurrency: 4, PollInterval: 10 * time.Millisecond, SweepAfter: time.Second}}
	if e.Clock != nil {
		o.Now = e.Clock.Now
		o.Visibility = 30 * time.Second
		o.SweepAfter = time.Minute
		// Time stands still on the fake clock; a pause still lets the
		// other goroutines run, as a real one would.
		o.Sleep = func(context.Context, time.Duration) error { runtime.Gosched(); return nil }
	}
	return o
}

// NewEngine builds and sets up an engine over st, deleting its queues
// when the test ends.
func NewEngine(t testing.TB, st store.Store, o Options) *eventual.Engine {
	t.Helper()
	eng, err := o.New(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, q := range []string{o.Queue, o.Queue + "-poison"} {
			_ = st.Queue(q).Delete(context.Background())
		}
	})
	return eng
}

// drainRounds bounds the rounds of Drain: each lets visibility timeouts
// and sweep ages pass once.
const drainRounds = 60

// Drain processes and sweeps until the queue shows no message and the
// source tables hold no outbox row (so every operation must come from an
// outbox row: a hidden message of Submit is not waited for), letting
// visibility timeouts and sweep ages pass in between. *eng is read each
// round, so a caller that restarts the engine after a crash (a panic out
// of Drain) passes the pointer it replaces. st is the store the outbox
// rows and the queue are read through.
func Drain(t testing.TB, e Env, eng **eventual.Engine, o Options, st store.Store, sources ...string) {
	t.Helper()
	drain(t, e, eng, o, st, false, sources)
}

// DrainTolerant is Drain under injected faults: a failed receive,
// operation or sweep does not fail the test, and an outbox that cannot be
// read counts as not yet empty; the next round tries again.
func DrainTolerant(t testing.TB, e Env, eng **eventual.Engine, o Options, st store.Store, sources ...string) {
	t.Helper()
	drain(t, e, eng, o, st, true, sources)
}

func drain(t testing.TB, e Env, eng **eventual.Engine, o Options, st store.Store, tolerate bool, sources []string) {
	t.Helper()
	ctx := context.Background()
	sweepAfter := o.SweepAfter
	if sweepAfter == 0 {
		sweepAfter = 2 * o.Visibility
	}
	for round := 0; round < drainRounds; round++ {
		for {
			n, err := (*eng).ProcessOnce(ctx)
			if err != nil && !tolerate {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		left := 0
		for _, src := range sources {
			// Every outbox row counts, claimed or not: a row a sweep has
			// just claimed, whose message is hidden for a retry, is work
			// left to do.
			ob, err := partition.NewOutbox(st.Table(src), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range ob.Scan(ctx, partition.ScanOptions{Claimed: true}) {
				if err != nil {
					if tolerate {
						left++
						break
					}
					t.Fatal(err)
				}
				left++
			}
		}
		visible, err := st.Queue(o.Queue).Peek(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 && len(visible) == 0 {
			return
		}
		// Let hidden messages reappear and old outbox rows become
		// sweepable.
		if e.Clock != nil {
			e.Pass(sweepAfter + 2*o.Visibility)
		} else {
			e.Pass(max(o.Visibility, sweepAfter) + 50*time.Millisecond)
		}
		for _, src := range sources {
			if _, err := (*eng).Sweep(ctx, src); err != nil && !tolerate {
				t.Fatal(err)
			}
		}
	}
	p, _ := (*eng).Poisoned(ctx, 32)
	for _, m := range p {
		for _, a := range m.Attempts {
			t.Logf("poisoned %s: %s", m.Where, a.Error)
		}
	}
	t.Fatalf("the engine did not quiesce in %d rounds", drainRounds)
}
