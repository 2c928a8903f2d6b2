package eventual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// ErrBlobMissing matches the error of an operation whose blob is gone:
// reported (the message goes to the poison queue with it), never fatal to
// the worker.
var ErrBlobMissing = errors.New("eventual: the operation's blob is missing")

// Work runs the worker until ctx ends: it keeps up to Concurrency
// operations running, receiving more messages as slots free up, and waits
// PollInterval when the queue is empty or a receive failed. It returns
// ctx's error, or, at once, an error naming the queue and matching
// store.ErrNotFound (code store.CodeQueueNotFound) when the queue does
// not exist (Setup creates it): no wait would make it appear.
func (e *Engine) Work(ctx context.Context) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	return e.pool(ctx, false)
}

// Drain runs the worker as Work does until the queue has no visible
// message left and every operation it started is done: for batch jobs
// and tests. It waits first for the messages of this engine's writes
// that returned (Flush), so that their operations are among those it
// runs. Messages hidden by an earlier receive are not waited for. A
// missing queue fails it at once, as it does Work.
func (e *Engine) Drain(ctx context.Context) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	if err := e.Flush(ctx); err != nil {
		return err
	}
	return e.pool(ctx, true)
}

// pool keeps up to Concurrency messages in flight.
func (e *Engine) pool(ctx context.Context, untilEmpty bool) error {
	slots := make(chan struct{}, e.o.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Wait for one free slot, then take as many as are free.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		free := 1
		for free < min(e.o.Concurrency, store.MaxMessagesPerGet) {
			select {
			case slots <- struct{}{}:
				free++
				continue
			default:
			}
			break
		}
		var msgs []store.Message
		err := e.bounded(ctx, func(ctx context.Context) (err error) {
			msgs, err = e.queue.Get(ctx, free, e.o.Visibility)
			return err
		})
		for range free - len(msgs) {
			<-slots
		}
		if err != nil && errors.Is(err, store.ErrNotFound) {
			return e.missingQueue(err)
		}
		if err == nil && len(msgs) > 0 {
			for _, m := range msgs {
				wg.Go(func() {
					defer func() { <-slots }()
					e.handle(ctx, m)
				})
			}
			continue
		}
		if untilEmpty && err == nil {
			wg.Wait()
			// Operations that just finished may have left nothing behind;
			// look once more before stopping.
			var more []store.Message
			perr := e.bounded(ctx, func(ctx context.Context) (err error) {
				more, err = e.queue.Peek(ctx, 1)
				return err
			})
			if perr == nil && len(more) == 0 {
				return nil
			}
			if errors.Is(perr, store.ErrNotFound) {
				return e.missingQueue(perr)
			}
			if perr == nil {
				continue // a message showed up: receive it
			}
			// A failing peek waits as a failing receive does.
		}
		if serr := e.o.Sleep(ctx, e.o.PollInterval); serr != nil {
			return serr
		}
	}
}

// missingQueue is the error of a receive from a queue that does not
// exist: retrying cannot cure it, so the worker stops with it.
func (e *Engine) missingQueue(err error) error {
	return fmt.Errorf("eventual: receive from queue %s: it does not exist (Engine.Setup creates it): %w", e.queueName, err)
}

// ProcessOnce receives up to Concurrency messages and runs their
// operations, concurrently, before it returns how many it received. It
// waits first for the messages of this engine's writes that returned
// (Flush): a program or a test that writes and then calls ProcessOnce
// receives the write's message, as it would had Write queued it before
// returning. A message whose operation fails stays in the queue with the
// error recorded, and comes back after a backoff; one received more than
// MaxReceives times goes to the poison queue with the error of every
// attempt.
func (e *Engine) ProcessOnce(ctx context.Context) (int, error) {
	if err := e.usable(ctx); err != nil {
		return 0, err
	}
	if err := e.Flush(ctx); err != nil {
		return 0, err
	}
	var msgs []store.Message
	err := e.bounded(ctx, func(ctx context.Context) (err error) {
		msgs, err = e.queue.Get(ctx, min(e.o.Concurrency, store.MaxMessagesPerGet), e.o.Visibility)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("eventual: receive from %s: %w", e.queueName, err)
	}
	if len(msgs) == 1 {
		e.handle(ctx, msgs[0])
		return 1, nil
	}
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() { e.handle(ctx, m) })
	}
	wg.Wait()
	return len(msgs), nil
}

// receipt tracks a received message's latest pop receipt, which every
// visibility update replaces.
type receipt struct {
	mu  sync.Mutex
	msg store.Message
}

func (r *receipt) get() store.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msg
}

// heartbeat extends the message's visibility every half Visibility, on
// the wall clock, until stop is called.
func (e *Engine) heartbeat(ctx context.Context, r *receipt) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(e.o.Visibility / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.mu.Lock()
			var m store.Message
			err := e.bounded(ctx, func(ctx context.Context) (err error) {
				m, err = e.queue.Update(ctx, r.msg.ID, r.msg.PopReceipt, nil, e.o.Visibility)
				return err
			})
			if err == nil {
				r.msg.PopReceipt, r.msg.NextVisible = m.PopReceipt, m.NextVisible
			}
			r.mu.Unlock()
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// handle runs the operation of one message, as an "eventual.Handle"
// operation of the store's instrumentation, if any (store.Observe).
func (e *Engine) handle(ctx context.Context, m store.Message) {
	ctx, fin := store.Observe(ctx, e.queue, store.Operation{Name: "eventual.Handle", Table: e.queueName})
	fin.Finish(e.handleMessage(ctx, m), 0)
}

// handleMessage is handle; its error is what became of the message: nil
// when its operation completed, or the error that sent it to the poison
// queue or back to the queue for a retry.
func (e *Engine) handleMessage(ctx context.Context, m store.Message) error {
	var env envelope
	if err := json.Unmarshal(m.Body, &env); err != nil || (env.Outbox == nil && len(env.Op) == 0 && env.Blob == "") {
		err := fmt.Errorf("eventual: message %s is not an operation message", m.ID)
		e.toPoison(ctx, m, env, err)
		return err
	}
	if m.DequeueCount > int64(e.o.MaxReceives) {
		err := fmt.Errorf("eventual: received %d times, more than Options.MaxReceives %d", m.DequeueCount, e.o.MaxReceives)
		e.toPoison(ctx, m, env, err)
		return err
	}
	r := &receipt{msg: m}
	done, err := func() (func(context.Context) error, error) {
		stop := e.heartbeat(ctx, r)
		defer stop() // a handler that panics must not leave it running
		return e.runMessage(ctx, env)
	}()
	if err != nil {
		if permanent(err) {
			e.toPoison(ctx, r.get(), env, err)
			return err
		}
		e.retryLater(ctx, r.get(), env, err)
		return err
	}
	if done != nil {
		if err := e.bounded(ctx, done); err != nil {
			e.retryLater(ctx, r.get(), env, err)
			return err
		}
	}
	cur := r.get()
	// A lost delete only repeats the operation.
	_ = e.bounded(ctx, func(ctx context.Context) error { return e.queue.DeleteMessage(ctx, cur.ID, cur.PopReceipt) })
	return nil
}

// permanent reports an error no retry can cure: a step the service
// refuses as bad input, an operation that cannot be read, a missing blob.
func permanent(err error) bool {
	return errors.Is(err, ErrBlobMissing) || errors.Is(err, errUnreadable) ||
		(errors.Is(err, store.ErrInvalidInput) && !errors.Is(err, store.ErrTransient))
}

var errUnreadable = errors.New("eventual: unreadable operation")

// runMessage loads the message's operation, runs it, and returns what to
// do once it completed: remove the outbox row, delete the blob.
func (e *Engine) runMessage(ctx context.Context, env envelope) (done func(context.Context) error, err error) {
	switch {
	case env.Outbox != nil:
		return e.runOutbox(ctx, *env.Outbox)
	case env.Blob != "":
		op, err := e.loadBlob(ctx, env.Blob)
		if err != nil {
			return nil, err
		}
		if err := e.run(ctx, op); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error { return e.deleteOpBlob(ctx, env.Blob) }, nil
	}
	op, err := e.decodeOp(ctx, env.Op)
	if err != nil {
		return nil, err
	}
	return nil, e.run(ctx, op)
}

// runOutbox runs the operation of an outbox row; a row already gone was
// carried out and removed by someone else.
func (e *Engine) runOutbox(ctx context.Context, ref outboxRef) (func(context.Context) error, error) {
	ob, err := partition.NewOutbox(e.st.Table(ref.Table), e.o.Partition)
	if err != nil {
		return nil, err
	}
	var row partition.OutboxRow
	err = e.bounded(ctx, func(ctx context.Context) (err error) {
		row, err = ob.Get(ctx, ref.PK, ref.ID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s stored
	if err := json.Unmarshal(row.Body, &s); err != nil {
		return nil, fmt.Errorf("%w: outbox row %s: %w", errUnreadable, ref.ID, err)
	}
	var op Operation
	if s.Blob != "" {
		if op, err = e.loadBlob(ctx, s.Blob); err != nil {
			return nil, err
		}
	} else if op, err = e.decodeOp(ctx, s.Op); err != nil {
		return nil, err
	}
	if err := e.run(ctx, op); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		// Remove the row as read; if someone claimed it since, they run
		// the (idempotent) operation again and remove it themselves.
		if err := ob.Remove(ctx, row); err != nil && !errors.Is(err, partition.ErrClaimed) {
			return err
		}
		if s.Blob != "" {
			return e.deleteOpBlob(ctx, s.Blob)
		}
		return nil
	}, nil
}

// loadBlob reads an operation stored in a blob.
func (e *Engine) loadBlob(ctx context.Context, name string) (Operation, error) {
	if e.o.Container == "" {
		return Operation{}, fmt.Errorf("%w: blob %s: Options.Container is empty", ErrBlobMissing, name)
	}
	var data []byte
	err := e.bounded(ctx, func(ctx context.Context) (err error) {
		data, _, err = e.st.Container(e.o.Container).Get(ctx, name)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return Operation{}, fmt.Errorf("%w: blob %s of container %s: %w", ErrBlobMissing, name, e.o.Container, err)
	}
	if err != nil {
		return Operation{}, err
	}
	op, err := e.decodeOp(ctx, data)
	if err != nil {
		return Operation{}, fmt.Errorf("blob %s: %w", name, err)
	}
	return op, nil
}

func (e *Engine) deleteOpBlob(ctx context.Context, name string) error {
	err := e.st.Container(e.o.Container).DeleteBlob(ctx, name, store.ETagAny)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// retryLater records the attempt's error on the message and hides it for
// a backoff that grows with the receive count.
func (e *Engine) retryLater(ctx context.Context, m store.Message, env envelope, cause error) {
	env.Attempts = append(env.Attempts, attempt{At: e.o.Now().UTC(), Error: cut(cause.Error())})
	body := e.fit(env)
	delay := max(time.Second, e.o.Backoff*time.Duration(m.DequeueCount))
	delay = min(delay, e.o.Visibility*4)
	if err := e.bounded(ctx, func(ctx context.Context) error {
		_, err := e.queue.Update(ctx, m.ID, m.PopReceipt, body, delay)
		return err
	}); err != nil {
		// The message reappears when its visibility ends anyway.
		return
	}
}

// fit encodes env, dropping the oldest attempts until it fits a message.
func (e *Engine) fit(env envelope) []byte {
	for {
		b, _ := json.Marshal(env)
		if len(b) <= store.MaxMessageSize || len(env.Attempts) == 0 {
			return b
		}
		env.Attempts = env.Attempts[1:]
	}
}

// cut shortens an error for the message's history.
func cut(s string) string {
	const max = 400
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// toPoison moves a message to the poison queue with the error of every
// attempt and the last one.
func (e *Engine) toPoison(ctx context.Context, m store.Message, env envelope, cause error) {
	env.Attempts = append(env.Attempts, attempt{At: e.o.Now().UTC(), Error: cut(cause.Error())})
	body := e.fit(env)
	if env.Outbox == nil && len(env.Op) == 0 && env.Blob == "" {
		// Not an operation message: keep its bytes as they were.
		body, _ = json.Marshal(poisonRaw{Raw: m.Body, Attempts: env.Attempts})
	}
	if err := e.bounded(ctx, func(ctx context.Context) error {
		_, err := e.poison.Put(ctx, body, &store.PutOptions{TTL: store.NeverExpires})
		return err
	}); err != nil {
		return // the message stays; the next receive tries again
	}
	_ = e.bounded(ctx, func(ctx context.Context) error { return e.queue.DeleteMessage(ctx, m.ID, m.PopReceipt) })
}

// poisonRaw keeps a message that is not an operation message.
type poisonRaw struct {
	Raw      []byte    `json:"raw"`
	Attempts []attempt `json:"attempts"`
}

// run carries out an operation's steps in order.
func (e *Engine) run(ctx context.Context, op Operation) error {
	if err := checkOp(op, e.handler); err != nil {
		return err
	}
	for i, s := range op.Steps {
		var err error
		for try := 0; try < e.o.StepAttempts; try++ {
			if try > 0 {
				if serr := e.o.Sleep(ctx, e.o.Backoff<<(try-1)); serr != nil {
					return serr
				}
			}
			err = e.bounded(ctx, func(ctx context.Context) error { return e.step(ctx, op, s) })
			if err == nil || permanent(err) {
				break
			}
		}
		if err != nil {
			return stepErr(i, s, err)
		}
	}
	return nil
}

// bounded runs f under Options.StepTimeout. When the bound, not ctx,
// ends it, the error says so (and matches context.DeadlineExceeded).
func (e *Engine) bounded(ctx context.Context, f func(ctx context.Context) error) error {
	tctx, cancel := context.WithTimeout(ctx, e.o.StepTimeout)
	defer cancel()
	err := f(tctx)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("abandoned after Options.StepTimeout (%s): %w", e.o.StepTimeout, err)
	}
	return err
}

// errContended: the row kept changing under a guarded write.
var errContended = errors.New("eventual: the row kept changing under the step")

// step runs one step under its version guard.
func (e *Engine) step(ctx context.Context, op Operation, s Step) error {
	switch s.Kind {
	case StepUpsert:
		return e.upsert(ctx, op, s)
	case StepDelete:
		return e.delete(ctx, op, s)
	case StepPutBlob:
		_, err := e.st.Container(s.Container).Put(ctx, s.Blob, s.Data, nil)
		return err
	case StepDeleteBlob:
		err := e.st.Container(s.Container).DeleteBlob(ctx, s.Blob, "")
		if errors.Is(err, store.ErrNotFound) && store.Code(err) == store.CodeBlobNotFound {
			return nil
		}
		return err
	}
	return e.runCustom(ctx, op, s)
}

// upsert writes the step's entity unless the row holds the same or a
// newer version. A row at the operation's own version is this
// operation's copy, written by an earlier run of it: done, and never
// removed, whatever the source did since. A missing row is created
// unless the source is gone (a later operation deleted it, and with it
// the copy), judged from the source's current state.
func (e *Engine) upsert(ctx context.Context, op Operation, s Step) error {
	tbl := e.st.Table(s.Table)
	want := s.Entity
	want.Properties = make(map[string]any, len(s.Entity.Properties)+1)
	for k, v := range s.Entity.Properties {
		want.Properties[k] = v
	}
	want.Properties[VersionProperty] = op.Version
	if op.Version == 0 {
		// An unversioned operation writes whatever is there: one
		// idempotent request.
		_, err := tbl.Upsert(ctx, want, store.Replace)
		return err
	}
	for range 8 {
		cur, err := tbl.Get(ctx, want.PartitionKey, want.RowKey, nil)
		switch {
		case err == nil:
			switch v := VersionOf(&cur); {
			case v > op.Version:
				return nil
			case v == op.Version:
				// This operation's own copy: an earlier run of it wrote
				// it and did not get to clear the operation (a crash, a
				// fault on a removal). It stays: a later write of the
				// source may carry no step for it (it changed a property
				// the copy does not hold, or moved the source elsewhere),
				// and then nothing would write it again.
				return nil
			}
			_, err = tbl.Update(ctx, want, store.Replace, cur.ETag)
			if err == nil || errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrUnknownOutcome) {
				if err == nil {
					return nil
				}
				continue // read again: the guard decides
			}
			return err
		case store.EntityNotFound(err):
			if gone, err := e.sourceGone(ctx, op); err != nil || gone {
				return err
			}
			etag, err := tbl.Insert(ctx, want)
			if err == nil {
				want.ETag = etag
				return e.removeIfOrphan(ctx, op, tbl, want)
			}
			if errors.Is(err, store.ErrAlreadyExists) || errors.Is(err, store.ErrUnknownOutcome) {
				continue
			}
			return err
		default:
			return err
		}
	}
	return errContended
}

// removeIfOrphan deletes row, a copy this operation has just created
// where none stood, when its source is gone since the check before the
// insert. A later operation that deleted the source removes the copy only
// if its step runs after the insert; one whose step ran between the check
// and the insert found nothing to do. Either that operation's step sees
// the copy, or this read sees its source write: the source write comes
// before its step, and this read after the insert. A source that still
// exists keeps the copy, at whatever version: its later writes carry the
// steps that change the copy, or leave it as it is.
func (e *Engine) removeIfOrphan(ctx context.Context, op Operation, tbl store.Table, row store.Entity) error {
	gone, err := e.sourceGone(ctx, op)
	if err != nil || !gone {
		return err
	}
	err = tbl.Delete(ctx, row.PartitionKey, row.RowKey, row.ETag)
	switch {
	case err == nil, errors.Is(err, store.ErrPreconditionFailed), store.EntityNotFound(err):
		// Gone, or written since by a newer operation: either way not ours.
		return nil
	}
	return err
}

// delete removes the step's row unless it carries a newer version than
// the operation.
func (e *Engine) delete(ctx context.Context, op Operation, s Step) error {
	tbl := e.st.Table(s.Table)
	if op.Version == 0 {
		err := tbl.Delete(ctx, s.Entity.PartitionKey, s.Entity.RowKey, store.ETagAny)
		if store.EntityNotFound(err) {
			return nil
		}
		return err
	}
	for range 8 {
		cur, err := tbl.Get(ctx, s.Entity.PartitionKey, s.Entity.RowKey, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if op.Version > 0 && VersionOf(&cur) > op.Version {
			return nil
		}
		err = tbl.Delete(ctx, s.Entity.PartitionKey, s.Entity.RowKey, cur.ETag)
		if err == nil || store.EntityNotFound(err) {
			return nil
		}
		if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrUnknownOutcome) {
			continue
		}
		return err
	}
	return errContended
}

// sourceGone reports, from the source's current state, whether a
// missing copy must not be created from the operation: its source row is
// gone (a later write deleted it; that write's operation deletes the
// copy, or has done so already). A source that exists, at whatever
// version, still holds the copy: a later write that changed the copy
// carries a step that runs after this one or has run (and then the copy
// is there, newer), and one that carries no step leaves the copy as this
// operation makes it. The source of an operation whose own write deleted
// it (a move) is expected gone: only a source written again after the
// move counts, since a later operation then carries its state.
func (e *Engine) sourceGone(ctx context.Context, op Operation) (bool, error) {
	if op.Source == nil || op.Version == 0 {
		return false, nil
	}
	src, found, err := op.Source.Read(ctx, e.st)
	if err != nil {
		return false, err
	}
	if op.SourceDeleted {
		return found && VersionOf(&src) > op.Version, nil
	}
	return !found, nil
}
