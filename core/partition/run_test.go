package partition_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// counter is a head whose row carries a count that every Run adds one
// to, reading the count with the head (RunOptions.Read) and writing it
// back with SetHead: a lost or doubled update shows in the count.
type counter struct {
	t     *testing.T
	tbl   store.Table
	h     *partition.Head
	read  int64      // the count the last Read saw
	etag  store.ETag // the head's ETag the last Read saw
	calls int        // how many times fn ran
	ids   []string   // the request id of each call's transaction
	// during, when set, runs inside fn call n (from 0), before it builds.
	during func(n int, tx *partition.Txn)
}

func newCounter(t *testing.T, tbl store.Table, pk string, opts *partition.Options) *counter {
	t.Helper()
	h, err := partition.NewHead(tbl, pk, "count", opts)
	must(t, err)
	return &counter{t: t, tbl: tbl, h: h}
}

func (c *counter) opts() *partition.RunOptions {
	return &partition.RunOptions{Read: func(ctx context.Context) (partition.Fence, error) {
		e, err := c.tbl.Get(ctx, c.h.Key(), c.h.RowKey(), nil)
		if store.EntityNotFound(err) {
			c.read, c.etag = 0, ""
			return c.h.FenceOf(nil)
		}
		if err != nil {
			return partition.Fence{}, err
		}
		c.read, _ = e.Properties["N"].(int64)
		c.etag = e.ETag
		return c.h.FenceOf(&e)
	}}
}

func (c *counter) fn(ctx context.Context, tx *partition.Txn) error {
	n := c.calls
	c.calls++
	c.ids = append(c.ids, tx.RequestID())
	if c.during != nil {
		c.during(n, tx)
	}
	return tx.SetHead(map[string]any{"N": c.read + 1})
}

// add runs one increment.
func (c *counter) add(ctx context.Context) (*partition.Result, error) {
	return c.h.Run(ctx, c.fn, c.opts())
}

// stored is the count as stored.
func (c *counter) stored() int64 {
	c.t.Helper()
	e, err := c.tbl.Get(context.Background(), c.h.Key(), c.h.RowKey(), nil)
	if store.EntityNotFound(err) {
		return 0
	}
	must(c.t, err)
	n, _ := e.Properties["N"].(int64)
	return n
}

// bump commits one increment as another writer, straight on the head.
func (c *counter) bump() {
	c.t.Helper()
	other := &counter{t: c.t, tbl: c.tbl, h: c.h}
	if _, err := other.add(context.Background()); err != nil {
		c.t.Fatalf("the other writer: %v", err)
	}
}

// busy is the store's answer to a request it refused before any work.
func busy() *store.Error {
	return &store.Error{Code: store.CodeServerBusy, Status: 503, Index: -1, Message: "injected: busy", Source: store.SourceService}
}

// TestRunAddsOnceUnderContention: writers racing on one head through Run
// never lose or double an update: the count is the number of Runs.
func TestRunAddsOnceUnderContention(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := newTable(t, b)
		const writers, each = 6, 5
		opts := fast()
		opts.Attempts = 200
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for range writers {
			wg.Go(func() {
				c := newCounter(t, tbl, "p", opts)
				for range each {
					if _, err := c.add(t.Context()); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := newCounter(t, tbl, "p", opts).stored(); got != writers*each {
			t.Fatalf("count %d after %d increments", got, writers*each)
		}
	})
}

// TestRunOutcomes drives each outcome of a commit through Run with a
// scripted table and checks what Run decided, how often fn ran and what
// the head holds.
func TestRunOutcomes(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		base := newTable(t, b)
		t.Run("a lost race is read again and retried", func(t *testing.T) {
			c := newCounter(t, base, "race", fast())
			c.during = func(n int, _ *partition.Txn) {
				if n == 0 {
					c.bump()
				}
			}
			res, err := c.add(t.Context())
			must(t, err)
			if c.calls != 2 || res.RequestID != c.ids[1] || res.Recovered || c.stored() != 2 {
				t.Fatalf("calls %d, result %+v, count %d: want 2 calls, the second applied, count 2", c.calls, res, c.stored())
			}
		})
		t.Run("not applied after a lost answer is retried, the head unchanged for the condition", func(t *testing.T) {
			ht := &hookTable{Table: base}
			ht.transact = func(ctx context.Context, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
				if n == 0 {
					return nil, lostAnswer() // never reached the service
				}
				return in.Transact(ctx, a)
			}
			c := newCounter(t, base, "shut", fast())
			c.bump()
			c.tbl = ht
			c.h, _ = partition.NewHead(ht, "shut", "count", fast())
			var first store.ETag
			var unchanged bool
			c.during = func(n int, tx *partition.Txn) {
				if n == 0 {
					first = c.etag
				} else {
					unchanged = tx.Unchanged(first) && c.etag != first
				}
			}
			res, err := c.add(t.Context())
			must(t, err)
			if c.calls != 2 || res.RequestID != c.ids[1] || c.stored() != 2 {
				t.Fatalf("calls %d, result %+v, count %d: want 2 calls, the second applied, count 2", c.calls, res, c.stored())
			}
			if !unchanged {
				t.Fatal("after the head shut the lost commit out, Txn.Unchanged does not hold the ETag read before for the same content")
			}
		})
		t.Run("a send reported not applied that lands later is returned, not written again", func(t *testing.T) {
			var held []store.Action
			ht := &hookTable{Table: base}
			ht.transact = func(ctx context.Context, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
				switch n {
				case 0:
					held = a // delayed in the network
					return nil, busy()
				case 1:
					if _, err := in.Transact(ctx, held); err != nil {
						t.Errorf("the delayed send: %v", err)
					}
				}
				return in.Transact(ctx, a)
			}
			c := newCounter(t, ht, "late", fast())
			res, err := c.add(t.Context())
			must(t, err)
			if !res.Recovered || res.RequestID != c.ids[0] || c.calls != 2 || c.stored() != 1 {
				t.Fatalf("result %+v after %d calls, count %d: want the first send recovered, count 1", res, c.calls, c.stored())
			}
		})
		t.Run("a send reported not applied that never lands", func(t *testing.T) {
			var held []store.Action
			ht := &hookTable{Table: base}
			ht.transact = func(ctx context.Context, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
				if n == 0 {
					held = a
					return nil, busy()
				}
				return in.Transact(ctx, a)
			}
			c := newCounter(t, ht, "never", fast())
			res, err := c.add(t.Context())
			must(t, err)
			if res.Recovered || res.RequestID != c.ids[1] || c.stored() != 1 {
				t.Fatalf("result %+v, count %d: want the second send applied, count 1", res, c.stored())
			}
			if _, err := base.Transact(t.Context(), held); !errors.Is(err, store.ErrPreconditionFailed) && !errors.Is(err, store.ErrAlreadyExists) {
				t.Fatalf("the delayed send arriving after the second applied: %v, want it refused", err)
			}
			if c.stored() != 1 {
				t.Fatalf("count %d after the delayed send arrived", c.stored())
			}
		})
		t.Run("a lost answer is judged against an earlier send of the run", func(t *testing.T) {
			var held []store.Action
			ht := &hookTable{Table: base}
			ht.transact = func(ctx context.Context, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
				switch n {
				case 0:
					held = a
					return nil, busy()
				case 1:
					// The first send lands just before the second, which
					// then fails on the head, and its answer is lost.
					if _, err := in.Transact(ctx, held); err != nil {
						t.Errorf("the delayed send: %v", err)
					}
					_, _ = in.Transact(ctx, a)
					return nil, lostAnswer()
				}
				return in.Transact(ctx, a)
			}
			c := newCounter(t, ht, "alt", fast())
			res, err := c.add(t.Context())
			must(t, err)
			if !res.Recovered || res.RequestID != c.ids[0] || c.calls != 2 || c.stored() != 1 {
				t.Fatalf("result %+v after %d calls, count %d: want the first send recovered, count 1", res, c.calls, c.stored())
			}
		})
		t.Run("an unknown outcome is returned and never sent again", func(t *testing.T) {
			ht := &hookTable{Table: base}
			ctx, cancel := context.WithCancel(t.Context())
			ht.transact = func(_ context.Context, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
				if n == 0 {
					if _, err := in.Transact(context.Background(), a); err != nil {
						t.Errorf("the commit: %v", err)
					}
					cancel()
					return nil, lostAnswer()
				}
				t.Errorf("Transact call %d after an unknown outcome", n)
				return nil, busy()
			}
			c := newCounter(t, ht, "unknown", fast())
			_, err := c.add(ctx)
			var ue *partition.UnknownError
			if !errors.As(err, &ue) || !errors.Is(err, store.ErrUnknownOutcome) || c.calls != 1 {
				t.Fatalf("%v after %d calls, want an UnknownError after 1", err, c.calls)
			}
			ht.transact = nil
			res, err := ue.Resolve(t.Context())
			if err != nil || !res.Recovered || res.RequestID != c.ids[0] || c.stored() != 1 {
				t.Fatalf("Resolve: %+v, %v; count %d: want the commit recovered, count 1", res, err, c.stored())
			}
		})
		t.Run("fn's error ends the run as it is", func(t *testing.T) {
			errStop := errors.New("stop")
			c := newCounter(t, base, "stop", fast())
			_, err := c.h.Run(t.Context(), func(context.Context, *partition.Txn) error { return errStop }, nil)
			if err != errStop || c.stored() != 0 {
				t.Fatalf("Run: %v, count %d: want errStop itself and nothing written", err, c.stored())
			}
		})
		t.Run("attempts used up by lost races", func(t *testing.T) {
			opts := fast()
			opts.Attempts = 3
			c := newCounter(t, base, "spent", opts)
			c.during = func(int, *partition.Txn) { c.bump() }
			_, err := c.add(t.Context())
			var ae *partition.AttemptsError
			if !errors.As(err, &ae) || !errors.Is(err, partition.ErrConflict) || !ae.Raced || ae.Attempts != 3 || c.calls != 3 {
				t.Fatalf("%v after %d calls: want an AttemptsError of 3 matching ErrConflict", err, c.calls)
			}
			if c.stored() != 3 {
				t.Fatalf("count %d: want the other writer's 3 only", c.stored())
			}
		})
	})
}

// TestRunStartsFromARememberedFence: a Run given the head's state
// (RunOptions.Start) commits without reading it; given a stale one, it
// is refused on the head, reads at once without a pause, and commits.
func TestRunStartsFromARememberedFence(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		ct := &countingTable{Table: newTable(t, b)}
		var pauses atomic.Int32
		opts := &partition.Options{Backoff: func(int) time.Duration { return time.Millisecond },
			Sleep: func(ctx context.Context, _ time.Duration) error { pauses.Add(1); return ctx.Err() }}
		h, err := partition.NewHead(ct, "p", "h", opts)
		must(t, err)
		write := func(start *partition.Fence, v string) *partition.Result {
			t.Helper()
			res, err := h.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
				return tx.SetHead(map[string]any{"V": v})
			}, &partition.RunOptions{Start: start})
			must(t, err)
			return res
		}
		first := write(nil, "a")
		gets := ct.gets.Load()
		second := write(&first.Fence, "b")
		if ct.gets.Load() != gets || second.Version != 2 {
			t.Fatalf("a write from the remembered fence read the head %d times (version %d): want none", ct.gets.Load()-gets, second.Version)
		}
		third := write(&first.Fence, "c") // stale: the head is at version 2
		if ct.gets.Load() != gets+1 || third.Version != 3 || pauses.Load() != 0 {
			t.Fatalf("a write from a stale fence: %d reads, version %d, %d pauses: want 1 read, version 3, no pause",
				ct.gets.Load()-gets, third.Version, pauses.Load())
		}
	})
}

// countingTable counts point reads.
type countingTable struct {
	store.Table
	gets atomic.Int32
}

func (c *countingTable) Get(ctx context.Context, pk, rk string, o *store.GetOptions) (store.Entity, error) {
	c.gets.Add(1)
	return c.Table.Get(ctx, pk, rk, o)
}

// TestRunRefusesBadInput: a nil function, a nil context and a negative
// Options.Attempts are refused naming what is wrong, with nothing sent.
func TestRunRefusesBadInput(t *testing.T) {
	tbl := newTable(t, backendtest.Memstore())
	h := newHead(t, tbl, "p", "h")
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		{"a nil function", func() error { _, err := h.Run(t.Context(), nil, nil); return err }(), "function"},
		{"a nil context", func() error {
			var nilCtx context.Context
			_, err := h.Run(nilCtx, func(context.Context, *partition.Txn) error { return nil }, nil)
			return err
		}(), "context"},
		{"Options.Attempts -1", func() error {
			_, err := partition.NewHead(tbl, "p", "h", &partition.Options{Attempts: -1})
			return err
		}(), "Options.Attempts -1 is negative"},
	} {
		if !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidInput naming %s", c.what, c.err, c.want)
		}
	}
	if rows := raw(t, tbl, "p"); len(rows) != 0 {
		t.Fatalf("%d rows written by refused calls", len(rows))
	}
}
