package eventual

import (
	"context"
	"sync"
)

// A write's messages are nudges: the outbox rows its transaction
// committed are the durable record of its operations, and a message only
// tells a worker about one sooner than a sweep would. So Write does not
// wait for them: it returns once the transaction committed, and a
// goroutine of the engine queues the messages (one round trip per write
// instead of two). A message that is never sent (the process ends first,
// the queue refuses it) is queued again by Sweep from its outbox row.

// detachedKey marks the context of a request the engine makes after the
// call that caused it returned.
type detachedKey struct{}

// Detached reports whether ctx is the context of a request that an
// Engine makes on a goroutine of its own after the call that caused it
// returned: the queueing of a write's messages after Write returned. No
// caller waits for such a request or sees its error, and a panic in it
// would end the program; a store wrapper that simulates faults or a
// crash of the process can tell it from a request its caller waits for.
func Detached(ctx context.Context) bool {
	if ctx == nil {
		return false
	}
	v, _ := ctx.Value(detachedKey{}).(bool)
	return v
}

// sends tracks the messages queued after their writes returned, so that
// Flush can wait for them. Each batch of messages (those of one write)
// takes a ticket; Flush waits for the tickets taken before it was called
// and not for later ones, so writes that keep coming cannot hold it up.
type sends struct {
	mu      sync.Mutex
	limit   int                 // batches in flight at most (0: maxInFlight)
	next    uint64              // tickets taken so far
	pending map[uint64]struct{} // tickets whose messages are still being queued
	wake    chan struct{}       // closed when a batch ends, while a Flush waits
}

// maxInFlight bounds the writes whose messages are being queued after
// they returned. Past it, a write queues its messages itself before it
// returns, as it would without the goroutine: when the queue is slow or
// failing, writers slow down with it rather than leaving ever more
// goroutines behind (each may wait StepTimeout).
const maxInFlight = 1024

// start takes a ticket for a batch about to be queued, unless limit
// batches are in flight already.
func (s *sends) start() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := s.limit
	if limit == 0 {
		limit = maxInFlight
	}
	if len(s.pending) >= limit {
		return 0, false
	}
	if s.pending == nil {
		s.pending = map[uint64]struct{}{}
	}
	t := s.next
	s.next++
	s.pending[t] = struct{}{}
	return t, true
}

// finish ends a batch, waking the Flushes waiting.
func (s *sends) finish(t uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, t)
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
}

// mark is the ticket the next batch will take: wait(ctx, mark) waits
// for the batches started before mark was read.
func (s *sends) mark() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// wait returns once every batch whose ticket is below before ended, or
// ctx's error when ctx ends first.
func (s *sends) wait(ctx context.Context, before uint64) error {
	s.mu.Lock()
	for {
		busy := false
		for t := range s.pending {
			if t < before {
				busy = true
				break
			}
		}
		if !busy {
			s.mu.Unlock()
			return nil
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
	}
}

// nudge queues the messages of the outbox rows ids of a commit to
// partition pk of table on a goroutine of the engine, and returns at
// once. The goroutine's context keeps ctx's values (a trace, a request
// ID) but not its cancellation or deadline: the caller has its answer
// and may cancel ctx as soon as Write returns. With maxInFlight writes'
// messages in flight already, it queues them itself, in ctx, before it
// returns. Each message is bounded by StepTimeout. A message that cannot
// be queued is left to Sweep.
func (e *Engine) nudge(ctx context.Context, table, pk string, ids []string) {
	if len(ids) == 0 {
		return
	}
	refs := make([]outboxRef, len(ids))
	for i, id := range ids {
		refs[i] = outboxRef{Table: table, PK: pk, ID: id}
	}
	send := func(ctx context.Context) {
		for i := range refs {
			// Best effort: Sweep queues the row again if this fails or
			// never runs.
			_ = e.bounded(ctx, func(ctx context.Context) error { return e.enqueue(ctx, envelope{Outbox: &refs[i]}) })
		}
	}
	t, ok := e.sends.start()
	if !ok {
		send(ctx)
		return
	}
	dctx := context.WithValue(context.WithoutCancel(ctx), detachedKey{}, true)
	go func() {
		defer e.sends.finish(t)
		send(dctx)
	}()
}

// Flush waits until the message of every operation whose Write returned
// before the call was queued, or failed to be (Sweep queues a failed one
// again from its outbox row), and returns nil; or until ctx ends, and
// returns ctx's error. Write queues its messages after it returns, on a
// goroutine of the engine; a program about to exit calls Flush first,
// or the messages still in flight wait for a sweep (SweepAfter and the
// sweep's period) rather than reaching a worker at once. Drain and
// ProcessOnce call it first, so a write followed by either is seen.
func (e *Engine) Flush(ctx context.Context) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	return e.sends.wait(ctx, e.sends.mark())
}
