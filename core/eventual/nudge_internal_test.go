package eventual

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestFlushWaitsForEarlierWritesOnly: Flush waits for the messages of
// the writes that returned before it was called, not for those of later
// writes, so writes that keep coming cannot hold it up; a later Flush
// waits for those too, and gives up when its context ends.
func TestFlushWaitsForEarlierWritesOnly(t *testing.T) {
	var s sends
	a, _ := s.start()
	mark := s.mark()  // Flush is called here
	b, _ := s.start() // a write that returned after
	done := make(chan error, 1)
	go func() { done <- s.wait(context.Background(), mark) }()
	s.finish(a)
	if err := <-done; err != nil {
		t.Fatalf("the Flush of the earlier write: %v", err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.wait(ended, s.mark()); !errors.Is(err, context.Canceled) {
		t.Fatalf("a Flush with the later write's message pending and an ended context: %v", err)
	}
	go func() { done <- s.wait(context.Background(), s.mark()) }()
	s.finish(b)
	if err := <-done; err != nil {
		t.Fatalf("the Flush of the later write: %v", err)
	}
	if err := s.wait(ended, s.mark()); err != nil {
		t.Fatalf("a Flush with nothing pending: %v", err)
	}
}

// TestWriteQueuesItselfPastTheLimit: with as many writes' messages in
// flight as the engine allows (here one, held at the queue), the next
// write queues its message itself, in its own context, before it
// returns: a slow queue slows the writers down instead of piling up
// goroutines.
func TestWriteQueuesItselfPastTheLimit(t *testing.T) {
	ctx := t.Context()
	gate := make(chan struct{})
	var mu sync.Mutex
	puts := map[bool]int{} // Detached -> puts made
	st := storetest.WrapStore(memstore.New(), func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.Op == "Queue.Put" {
			d := Detached(ctx)
			if d {
				<-gate
			}
			mu.Lock()
			puts[d]++
			mu.Unlock()
		}
		return do(ctx)
	})
	if err := st.CreateTable(ctx, "Src"); err != nil {
		t.Fatal(err)
	}
	e, err := New(st, "limit", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	e.sends.limit = 1
	write := func(rk string) {
		t.Helper()
		if _, err := e.Write(ctx, "Src", "p", func(tx *Tx) error {
			if err := tx.Insert("row", store.Entity{RowKey: rk}); err != nil {
				return err
			}
			return tx.Then(ctx, rk, Upsert("Dst", store.Entity{PartitionKey: "copy", RowKey: rk}))
		}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() map[bool]int {
		mu.Lock()
		defer mu.Unlock()
		return map[bool]int{false: puts[false], true: puts[true]}
	}
	write("a") // its message waits at the gate, on the engine's goroutine
	write("b") // one write's messages in flight already: b queues its own
	if c := count(); c[false] != 1 || c[true] != 0 {
		t.Fatalf("after the second write returned: puts by detachment %v, want its own made before it returned", c)
	}
	close(gate)
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if c := count(); c[false] != 1 || c[true] != 1 {
		t.Fatalf("after Flush: puts by detachment %v, want one each", c)
	}
	write("c") // nothing in flight: on the engine's goroutine again
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if c := count(); c[false] != 1 || c[true] != 2 {
		t.Fatalf("after the third write: puts by detachment %v, want it detached", c)
	}
	if n, err := e.queue.Peek(ctx, 32); err != nil || len(n) != 3 {
		t.Fatalf("the queue holds %d messages (%v), want 3", len(n), err)
	}
}
