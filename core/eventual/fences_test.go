package eventual_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/intercept"
)

// TestRememberedFenceSavesTheRead: an engine's second write to a
// partition begins from the fence its first commit left, so it makes no
// read of the fence; a fence another engine moved in between makes the
// commit fail on the fence, and the write reads it and applies once,
// with every row where it should be and the version counting on.
func TestRememberedFenceSavesTheRead(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		var fenceReads, commits atomic.Int64
		st := intercept.Observe(b.Store, func(ctx context.Context, c intercept.Call, do func(context.Context) error) error {
			switch {
			case (c.Op == "Table.Get" || c.Op == "Table.GetInto") && c.RowKey == partition.FenceKey:
				fenceReads.Add(1)
			case c.Op == "Table.Transact":
				commits.Add(1)
			}
			return do(ctx)
		}, nil)
		tbl := b.NewTable(t, "fences")
		q := strings.ToLower(tbl)
		one, err := eventual.New(st, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		other, err := eventual.New(st, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := one.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		write := func(eng *eventual.Engine, rk string) int64 {
			t.Helper()
			res, err := eng.Write(ctx, tbl, "p", func(tx *eventual.Tx) error {
				return tx.Insert(rk, store.Entity{RowKey: rk, Properties: map[string]any{"N": int64(1)}})
			})
			if err != nil {
				t.Fatalf("write %s: %v", rk, err)
			}
			return res.Version
		}
		step := func(name string, eng *eventual.Engine, rk string, wantReads, wantCommits int64) int64 {
			t.Helper()
			fenceReads.Store(0)
			commits.Store(0)
			v := write(eng, rk)
			if fenceReads.Load() != wantReads || commits.Load() != wantCommits {
				t.Errorf("%s: %d fence reads and %d commits, want %d and %d", name, fenceReads.Load(), commits.Load(), wantReads, wantCommits)
			}
			return v
		}
		v1 := step("first write", one, "a", 1, 1)
		v2 := step("second write of the same engine", one, "b", 0, 1)
		v3 := step("a write of another engine", other, "c", 1, 1)
		// one still remembers the fence of v2: its commit is refused on the
		// fence, it reads the fence and commits again.
		v4 := step("a write over a fence moved by another", one, "d", 1, 2)
		v5 := step("the next write of the same engine", one, "e", 0, 1)
		if got := []int64{v1, v2, v3, v4, v5}; got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 || got[4] != 5 {
			t.Errorf("versions %v, want 1 to 5", got)
		}
		for _, rk := range []string{"a", "b", "c", "d", "e"} {
			e, err := b.Store.Table(tbl).Get(ctx, "p", rk, nil)
			if err != nil {
				t.Errorf("row %s: %v", rk, err)
				continue
			}
			if e.Properties[eventual.VersionProperty] == nil {
				t.Errorf("row %s has no version", rk)
			}
		}
	})
}
