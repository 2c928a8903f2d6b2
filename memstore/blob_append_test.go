package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// blobFaults is a schedule that gives the n-th call of op (counting from
// 1) the fault err, and records every (op, container) it sees.
type blobFaults struct {
	mu   sync.Mutex
	seen map[memstore.Operation]int
	hits map[memstore.Operation]map[int]error
	cont map[string]bool
}

func (f *blobFaults) on(op memstore.Operation, n int, err error) *blobFaults {
	if f.hits == nil {
		f.hits = map[memstore.Operation]map[int]error{}
	}
	if f.hits[op] == nil {
		f.hits[op] = map[int]error{}
	}
	f.hits[op][n] = err
	return f
}

func (f *blobFaults) fn(op memstore.Operation, container string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen, f.cont = map[memstore.Operation]int{}, map[string]bool{}
	}
	f.seen[op]++
	f.cont[container] = true
	return f.hits[op][f.seen[op]]
}

func appendContainer(t *testing.T, f *blobFaults) store.Container {
	t.Helper()
	c := memstore.New(memstore.WithFaults(f.fn)).Container("logs")
	if err := c.Create(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAppendLostAnswers: the lost answers of appends, with their read-backs
// and resends failing or not, as a client of the service would see them.
func TestAppendLostAnswers(t *testing.T) {
	lost := memstore.ResponseLost
	for _, tc := range []struct {
		name     string
		faults   func(f *blobFaults)
		position bool
		want     string // done, unknown
		stored   int    // times the block is stored
		appends  int    // Append Block requests sent
	}{
		{"applied, answer lost, positioned", func(f *blobFaults) { f.on(memstore.OpAppendBlock, 2, memstore.AfterApply(lost())) }, true, "done", 1, 3},
		{"not applied, answer lost, positioned", func(f *blobFaults) { f.on(memstore.OpAppendBlock, 2, lost()) }, true, "done", 1, 3},
		{"applied, 500, positioned", func(f *blobFaults) { f.on(memstore.OpAppendBlock, 2, memstore.AfterApply(memstore.InternalError())) }, true, "done", 1, 3},
		{"applied, answer lost, read-back lost too", func(f *blobFaults) {
			f.on(memstore.OpAppendBlock, 2, memstore.AfterApply(lost())).on(memstore.OpGetBlob, 1, lost())
		}, true, "unknown", 1, 3},
		{"not applied, every resend lost", func(f *blobFaults) {
			for n := 2; n <= 5; n++ {
				f.on(memstore.OpAppendBlock, n, lost())
			}
		}, true, "unknown", 0, 5},
		{"applied, answer lost, no position", func(f *blobFaults) { f.on(memstore.OpAppendBlock, 2, memstore.AfterApply(lost())) }, false, "unknown", 1, 2},
		{"not applied, answer lost, no position", func(f *blobFaults) { f.on(memstore.OpAppendBlock, 2, lost()) }, false, "unknown", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &blobFaults{}
			tc.faults(f)
			c := appendContainer(t, f)
			if _, err := c.CreateAppend(t.Context(), "b", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.AppendBlock(t.Context(), "b", []byte("head"), nil); err != nil {
				t.Fatal(err)
			}
			var opts *store.AppendOptions
			if tc.position {
				opts = &store.AppendOptions{AppendPosition: new(int64(4))}
			}
			res, err := c.AppendBlock(t.Context(), "b", []byte("BLOCK"), opts)
			data, _, gerr := c.Get(t.Context(), "b")
			if gerr != nil {
				t.Fatal(gerr)
			}
			stored := bytes.Count(data, []byte("BLOCK"))
			t.Logf("%d Append Block requests, %d reads; blob %q; err %v", f.seen[memstore.OpAppendBlock], f.seen[memstore.OpGetBlob]-1, data, err)
			if stored != tc.stored || f.seen[memstore.OpAppendBlock] != tc.appends {
				t.Fatalf("stored %d times after %d requests, want %d after %d", stored, f.seen[memstore.OpAppendBlock], tc.stored, tc.appends)
			}
			switch tc.want {
			case "done":
				if err != nil || res.Offset != 4 || res.Size != 9 {
					t.Fatalf("got %+v, %v; want done at offset 4", res, err)
				}
			case "unknown":
				if !errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) {
					t.Fatalf("got %v; want an unknown outcome", err)
				}
			}
			if !f.cont["logs"] || len(f.cont) != 1 {
				t.Errorf("the schedule saw containers %v, want only \"logs\"", f.cont)
			}
		})
	}
}

// TestAppendLostAtATakenPosition: the first attempt never reached the
// service and another writer took the position meanwhile: the resend's
// refusal is returned, settled as not applied rather than unknown.
func TestAppendLostAtATakenPosition(t *testing.T) {
	ctx := context.Background()
	var st *memstore.Store
	var n atomic.Int32
	st = memstore.New(memstore.WithFaults(func(op memstore.Operation, _ string) error {
		if op == memstore.OpAppendBlock && n.Add(1) == 1 {
			if _, err := st.Container("logs").AppendBlock(ctx, "b", []byte("theirs"), nil); err != nil {
				t.Error(err)
			}
			return memstore.ResponseLost()
		}
		return nil
	}))
	c := st.Container("logs")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateAppend(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.AppendBlock(ctx, "b", []byte("mine"), &store.AppendOptions{AppendPosition: new(int64(0))})
	if store.Code(err) != store.CodeAppendPositionConditionNotMet || errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "not applied") {
		t.Fatalf("got %v; want AppendPositionConditionNotMet, settled as not applied", err)
	}
	data, _, _ := c.Get(ctx, "b")
	if string(data) != "theirs" {
		t.Fatalf("blob %q, want only the other writer's block", data)
	}
}

// TestCreateAppendLostAnswers: an unconditional create is resent after a
// lost answer; a create-only one is reported unknown.
func TestCreateAppendLostAnswers(t *testing.T) {
	f := (&blobFaults{}).on(memstore.OpCreateAppendBlob, 1, memstore.AfterApply(memstore.ResponseLost())).
		on(memstore.OpCreateAppendBlob, 3, memstore.AfterApply(memstore.ResponseLost()))
	c := appendContainer(t, f)
	p, err := c.CreateAppend(t.Context(), "u", nil)
	if err != nil || p.Type != store.AppendBlob {
		t.Fatalf("unconditional create after a lost answer: %+v, %v; want it resent and done", p, err)
	}
	_, err = c.CreateAppend(t.Context(), "c", &store.BlobPutOptions{IfNoneMatchAny: true})
	if !errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("create-only after a lost answer: %v; want an unknown outcome", err)
	}
	if _, _, err := c.Get(t.Context(), "c"); err != nil {
		t.Fatalf("the create-only create was applied: %v", err)
	}
}
