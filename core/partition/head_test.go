package partition_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// newHead returns the head rk of partition pk of tbl, failing the test on
// error.
func newHead(t *testing.T, tbl store.Table, pk, rk string) *partition.Head {
	t.Helper()
	h, err := partition.NewHead(tbl, pk, rk, fast())
	if err != nil {
		t.Fatalf("partition.NewHead(%q, %q): %v", pk, rk, err)
	}
	return h
}

// TestHeadsInOnePartitionCommitIndependently: two heads and the fence of
// one partition, each begun on the state before any commit, all commit;
// a second transaction on a stale state of a head conflicts with that
// head only.
func TestHeadsInOnePartitionCommitIndependently(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		tbl := newTable(t, b)
		a, c := newHead(t, tbl, "p", "a|00"), newHead(t, tbl, "p", "c|00")
		fence := open(t, tbl, "p", fast())
		ta, err := a.Begin(ctx)
		must(t, err)
		tc, err := c.Begin(ctx)
		must(t, err)
		tf := begin(t, fence)
		staleA, err := a.Begin(ctx)
		must(t, err)
		must(t, ta.SetHead(map[string]any{"Name": "a"}))
		must(t, ta.Insert("a part", row("a|01", "X", int64(1))))
		must(t, tc.SetHead(map[string]any{"Name": "c"}))
		must(t, tc.Insert("c part", row("c|01", "X", int64(2))))
		must(t, tf.Insert("data", row("d", "X", int64(3))))
		for _, tx := range []*partition.Txn{ta, tc, tf} {
			res, err := tx.Commit(ctx)
			if err != nil {
				t.Fatalf("commit on %q: %v", tx.Base().RowKey(), err)
			}
			if res.Version != 1 || res.Recovered || res.Fence.RowKey() != tx.Base().RowKey() {
				t.Fatalf("commit on %q: Result %+v, want version 1 on the same head", tx.Base().RowKey(), res)
			}
		}
		must(t, staleA.SetHead(map[string]any{"Name": "stale"}))
		_, err = staleA.Commit(ctx)
		var ce *partition.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, partition.ErrConflict) {
			t.Fatalf("stale commit on head a: %v, want a ConflictError", err)
		}
		// The head carries the caller's properties and its own two.
		e, err := tbl.Get(ctx, "p", "a|00", nil)
		must(t, err)
		ver, wr := a.Properties()
		if e.Properties["Name"] != "a" || e.Properties[ver] != int64(1) || string(e.Properties[wr].([]byte)) != ta.RequestID() {
			t.Fatalf("head a stored %v", e.Properties)
		}
		// A commit without SetHead merges: the caller's properties stay.
		f, err := a.Fence(ctx)
		must(t, err)
		tx, err := a.BeginAt(f)
		must(t, err)
		must(t, tx.Upsert("a part", row("a|01", "X", int64(9)), store.Replace))
		res, err := tx.Commit(ctx)
		must(t, err)
		e, err = tbl.Get(ctx, "p", "a|00", nil)
		must(t, err)
		if res.Version != 2 || e.Properties["Name"] != "a" || e.Properties[ver] != int64(2) {
			t.Fatalf("after a commit without SetHead: version %d, head %v", res.Version, e.Properties)
		}
		// The fence and head c did not move.
		if f, _ := fence.Fence(ctx); f.Version != 1 {
			t.Fatalf("fence at version %d, want 1", f.Version)
		}
		if f, _ := c.Fence(ctx); f.Version != 1 {
			t.Fatalf("head c at version %d, want 1", f.Version)
		}
		// A head's state is refused by another head, and the head's row
		// by Add.
		if _, err := c.BeginAt(f); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("BeginAt of head c with head a's state: %v", err)
		}
		tx, err = c.Begin(ctx)
		must(t, err)
		if err := tx.Insert("head", row("c|00")); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("Insert of the head's own row: %v", err)
		}
		if err := tx.SetHead(map[string]any{ver: int64(5)}); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("SetHead with the head's own property: %v", err)
		}
		if err := begin(t, fence).SetHead(map[string]any{"X": 1}); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("SetHead on the fence: %v", err)
		}
		if free := tx.Free(); free.Rows != store.MaxBatchActions-1 {
			t.Fatalf("a head's transaction has room for %d rows, want %d", free.Rows, store.MaxBatchActions-1)
		}
	})
}

func TestNewHeadRefusesBadInput(t *testing.T) {
	tbl := newTable(t, backendtest.Memstore())
	for _, rk := range []string{partition.TailKey, partition.OutboxPrefix + "x", "bad/key"} {
		if _, err := partition.NewHead(tbl, "p", rk, nil); !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("NewHead at %q: %v, want ErrInvalidInput", rk, err)
		}
	}
	if _, err := partition.NewHead(tbl, "p", "", &partition.Options{HeadPrefix: "x_"}); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("NewHead at the fence with a HeadPrefix: %v", err)
	}
	if _, err := partition.NewHead(nil, "p", "a", nil); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("NewHead of a nil table: %v", err)
	}
	// The head's own properties are tablekit's: their prefix starts with
	// store.ReservedPrefix, and the refusal names the option and the prefix.
	for _, prefix := range []string{"wide_", "head_", "tk"} {
		_, err := partition.NewHead(tbl, "p", "a", &partition.Options{HeadPrefix: prefix})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "Options.HeadPrefix") || !strings.Contains(err.Error(), `"Tk"`) {
			t.Errorf("NewHead with HeadPrefix %q: %v, want a refusal naming Options.HeadPrefix and \"Tk\"", prefix, err)
		}
	}
	h, err := partition.NewHead(tbl, "p", "a", &partition.Options{HeadPrefix: "TkWide"})
	must(t, err)
	if v, w := h.Properties(); v != "TkWideVersion" || w != "TkWideWriters" {
		t.Errorf("Properties() = %q, %q", v, w)
	}
	d, err := partition.NewHead(tbl, "p", "a", nil)
	must(t, err)
	if v, w := d.Properties(); v != "TkHeadVersion" || w != "TkHeadWriters" {
		t.Errorf("the default head's Properties() = %q, %q", v, w)
	}
	f, err := partition.NewHead(tbl, "p", "", nil)
	must(t, err)
	if v, w := f.Properties(); v != "TkHeadVersion" || w != "TkHeadWriters" || f.RowKey() != partition.FenceKey {
		t.Errorf("the fence as a head: %q, %q at %q", v, w, f.RowKey())
	}
}

// TestHeadLostCommitResolvedExactly loses the answer to a commit on a
// head at a RowKey other than "", after and before it applied (memstore
// faults, and a failed read so the store's own read-back cannot settle
// it), on a head that exists and on one that does not yet: the commit is
// resolved by reading the head, never sent again, and the head keeps the
// caller's properties.
func TestHeadLostCommitResolvedExactly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  func() error
		exists bool
		want   outcome
	}{
		{"applied, answer lost", func() error { return memstore.AfterApply(memstore.ResponseLost()) }, true, applied},
		{"applied, answer lost, new head", func() error { return memstore.AfterApply(memstore.ResponseLost()) }, false, applied},
		{"lost before it applied", memstore.ResponseLost, true, notApplied},
		{"lost before it applied, new head", memstore.ResponseLost, false, notApplied},
		{"server error before it applied", memstore.InternalError, true, notApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var armed bool
			sends, failRead := 0, false // transactions sent while armed; whether to fail the next read
			b := backendtest.Memstore(memstore.WithFaults(func(op memstore.Operation, _ string) error {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case !armed:
				case op == memstore.OpTransact:
					if sends++; sends == 1 {
						failRead = true
						return tc.fault()
					}
				case op == memstore.OpGet && failRead:
					// The store's own read-back of the lost answer fails,
					// so the outcome reaches the head unknown.
					failRead = false
					return memstore.ServerBusy()
				}
				return nil
			}))
			ctx := context.Background()
			tbl := newTable(t, b)
			h := newHead(t, tbl, "p", "v|00")
			if tc.exists {
				tx, err := h.Begin(ctx)
				must(t, err)
				must(t, tx.SetHead(map[string]any{"Name": "old"}))
				_, err = tx.Commit(ctx)
				must(t, err)
			}
			tx, err := h.Begin(ctx)
			must(t, err)
			must(t, tx.SetHead(map[string]any{"Name": "new"}))
			must(t, tx.Upsert("part", row("v|01", "X", int64(1)), store.Replace))
			mu.Lock()
			armed = true
			mu.Unlock()
			res, err := tx.Commit(ctx)
			mu.Lock()
			armed = false
			n := sends
			mu.Unlock()
			base := tx.Base().Version
			head, gerr := tbl.Get(ctx, "p", "v|00", nil)
			_, perr := tbl.Get(ctx, "p", "v|01", nil)
			ver, _ := h.Properties()
			switch tc.want {
			case applied:
				if err != nil || !res.Recovered || res.Version != base+1 {
					t.Fatalf("Commit: %+v, %v; want a recovered Result of version %d", res, err, base+1)
				}
				if n != 1 {
					t.Fatalf("%d transactions sent, want 1: an applied commit is never sent again", n)
				}
				must(t, gerr)
				must(t, perr)
				if head.Properties["Name"] != "new" || head.Properties[ver] != base+1 {
					t.Fatalf("head %v", head.Properties)
				}
			case notApplied:
				var na *partition.NotAppliedError
				if !errors.As(err, &na) || na.Overtaken || errors.Is(err, store.ErrUnknownOutcome) || !errors.Is(err, store.ErrTransient) {
					t.Fatalf("Commit: %v, want a NotAppliedError, not overtaken", err)
				}
				if n != 2 {
					t.Fatalf("%d transactions sent, want 2: the commit and the move of the head that shuts it out", n)
				}
				if !errors.Is(perr, store.ErrNotFound) {
					t.Fatalf("the part of a commit that did not apply: %v", perr)
				}
				must(t, gerr)
				want := any("old")
				if !tc.exists {
					want = nil
				}
				if head.Properties["Name"] != want || head.Properties[ver] != base+1 {
					t.Fatalf("head after the move %v, want Name %v at version %d", head.Properties, want, base+1)
				}
				// The head moved: the lost request can never apply, and a
				// new transaction commits on top of it.
				tx, err := h.Begin(ctx)
				must(t, err)
				if _, err := tx.Commit(ctx); err != nil {
					t.Fatalf("commit after the resolution: %v", err)
				}
			}
		})
	}
}
