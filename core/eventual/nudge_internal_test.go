package eventual

import (
	"context"
	"errors"
	"testing"
)

// TestFlushWaitsForEarlierWritesOnly: Flush waits for the messages of
// the writes that returned before it was called, not for those of later
// writes, so writes that keep coming cannot hold it up; a later Flush
// waits for those too, and gives up when its context ends.
func TestFlushWaitsForEarlierWritesOnly(t *testing.T) {
	var s sends
	a := s.start()
	mark := s.mark() // Flush is called here
	b := s.start()   // a write that returned after
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
