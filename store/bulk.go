package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// Bulk writer defaults.
const (
	// DefaultBulkConcurrency is how many transactions a BulkWriter has in
	// flight at once unless BulkOptions.Concurrency says otherwise.
	DefaultBulkConcurrency = 8
	// DefaultBulkAttempts is how often a transaction is sent at most when
	// it keeps failing with a transient error.
	DefaultBulkAttempts = 5
	// DefaultBulkBackoff is the wait before the first retry.
	DefaultBulkBackoff = 100 * time.Millisecond
	// DefaultBulkMaxBackoff caps the doubling wait between retries.
	DefaultBulkMaxBackoff = 10 * time.Second
)

// ErrBatchAborted is the outcome of a write that was not applied because
// another write of its transaction failed, when BulkOptions.NoResubmit
// keeps the writer from sending it again.
var ErrBatchAborted = errors.New("not applied: another write of its transaction failed")

// BulkOptions tune a BulkWriter. The zero value gives the defaults.
type BulkOptions struct {
	// Concurrency is the most transactions in flight at once; 0 means
	// DefaultBulkConcurrency. Transactions of one partition run at once
	// when their RowKeys are disjoint; one that writes an entity an
	// earlier one writes waits for it, so writes to one entity are applied
	// in input order.
	Concurrency int
	// PartitionOrder makes the transactions of one partition run one after
	// another, in input order, on one worker, so that a reader never sees a
	// later write of a partition before an earlier one; Concurrency then
	// bounds the partitions in flight. It costs throughput on a partition
	// that needs more than one transaction.
	PartitionOrder bool
	// MaxAttempts is how often a transaction is sent at most while it fails
	// with an error that left nothing applied (errors.Is(err,
	// ErrTransient): a 503, a connection never made, a lost answer a
	// read-back showed was not applied), or, for a transaction of upserts
	// and If-Match * updates only, while its answer is lost. 0 means
	// DefaultBulkAttempts and 1 turns retries off. A transaction that may
	// have been applied is never sent again unless it is idempotent.
	MaxAttempts int
	// Backoff is the wait before the first retry; it doubles on each
	// further retry up to MaxBackoff. 0 means DefaultBulkBackoff and
	// DefaultBulkMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// NoResubmit turns off resubmission. By default, when a transaction
	// fails because of one write (the error names its index), that write is
	// reported failed and the transaction is sent again without it, so the
	// other writes are not lost; this repeats until the rest succeed. With
	// NoResubmit the other writes are reported failed with ErrBatchAborted.
	NoResubmit bool
	// Progress, when set, is called after each transaction with the counts
	// so far (at most once per ProgressInterval), and once more at the end
	// if the counts changed since the last call, so the last call carries
	// the final counts. Calls never overlap, so Progress need not be safe
	// for concurrent use. A panic in Progress is recovered: no further
	// transaction is sent, the writes left fail with an error wrapping
	// ErrProgressPanicked, and Write returns it.
	Progress func(BulkProgress)
	// ProgressInterval, when positive, is the least time between two calls
	// of Progress (the final call always comes). 0 calls it after every
	// transaction.
	ProgressInterval time.Duration
	// Now reads the clock for ProgressInterval; nil means time.Now.
	Now func() time.Time
	// Sleep waits between retries; nil means a timer that gives up when ctx
	// is done. Tests inject a fake to observe the backoff without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter turns a retry's backoff into the wait actually slept; nil
	// means a random duration from half the backoff up to the backoff, so
	// that writers throttled together do not all retry together. Tests
	// that observe the backoff pass the identity, or a seeded source.
	Jitter func(backoff time.Duration) time.Duration
}

// BulkProgress counts the writes of one Write call so far.
type BulkProgress struct {
	// Written counts writes applied, Failed writes certainly not applied,
	// Unknown writes that may or may not have been applied, and Total all
	// writes given to Write.
	Written, Failed, Unknown, Total int
}

// BulkOutcome is what happened to one write.
type BulkOutcome struct {
	// ETag is the entity's new ETag when the write succeeded ("" for a
	// delete or a failure).
	ETag ETag
	// Err is nil when the write was applied. Otherwise it is the reason:
	// the rule it breaks (found before sending), the service's *Error for
	// this write (its Index is -1: outcomes are by input position), the
	// error of its whole transaction, ErrBatchAborted, or the context's
	// error when it was never sent.
	Err error
	// Unknown is set when the write may or may not have been applied: its
	// transaction was sent, no answer said what happened, and reading the
	// rows back could not tell. Err then matches ErrUnknownOutcome. Such a
	// write is never sent again by the writer; read the rows to learn the
	// outcome.
	Unknown bool
	// Batch numbers the transaction the write belongs to, counting from 0
	// in the order partitions first appear in the input; -1 when the write
	// was refused before any transaction was formed.
	Batch int
	// Attempts counts how often the write was sent.
	Attempts int
}

// BulkResult is the outcome of a Write.
type BulkResult struct {
	// Outcomes has one entry per write, in input order.
	Outcomes []BulkOutcome
	// Written, Failed and Unknown count the outcomes: applied, certainly
	// not applied, and perhaps applied. They add up to len(Outcomes).
	Written, Failed, Unknown int
	// Batches counts the transactions the writes were grouped into.
	Batches int
}

// Tally counts the outcomes into Written, Failed and Unknown.
func (r *BulkResult) Tally() {
	r.Written, r.Failed, r.Unknown = 0, 0, 0
	for _, o := range r.Outcomes {
		switch {
		case o.Unknown:
			r.Unknown++
		case o.Err != nil:
			r.Failed++
		default:
			r.Written++
		}
	}
}

// Err returns nil when every write was applied, and otherwise a
// *BulkError over the outcomes. stopped is the error that ended the work
// early (the context's), if any.
func (r *BulkResult) Err(stopped error) error {
	if r.Failed == 0 && r.Unknown == 0 {
		return nil
	}
	be := &BulkError{Failed: r.Failed, Unknown: r.Unknown, Total: len(r.Outcomes), FirstIndex: -1, Stopped: stopped}
	for i, o := range r.Outcomes {
		if o.Err != nil && be.First == nil {
			be.FirstIndex, be.First = i, o.Err
		}
		if o.Unknown && be.FirstUnknown == nil {
			be.FirstUnknown = o.Err
		}
	}
	return be
}

// ErrProgressPanicked is wrapped by the error of a Write whose Progress
// callback panicked, and by the outcomes of the writes it left unsent.
var ErrProgressPanicked = errors.New("bulk write: the Progress callback panicked")

// BulkWriter writes any number of entities to one table as entity group
// transactions: it groups writes by PartitionKey into transactions of at
// most MaxBatchActions writes whose estimated body stays under
// MaxBatchBytes, runs partitions concurrently and reports the outcome of
// every write. It works over any Table. A BulkWriter is safe for
// concurrent use.
type BulkWriter struct {
	table Table
	opts  BulkOptions
}

// NewBulkWriter returns a writer to t. Bad options are reported by Write.
func NewBulkWriter(t Table, opts BulkOptions) *BulkWriter {
	return &BulkWriter{table: t, opts: opts}
}

// Write applies actions to the table and reports each one's outcome in
// the result, in input order.
//
// Writes to one entity are applied in input order; a partition's writes
// are split across several transactions when there are more than 100,
// when their size would reach 4 MiB, or when the same RowKey comes again
// (a transaction may touch an entity once). Every write is checked
// against the service's rules first; one that breaks a rule is reported
// without being sent and does not sink the writes it would have shared a
// transaction with. Transactions that fail with a transient error are
// retried with exponential backoff. When ctx is done, no further
// transaction is sent and the unsent writes fail with ctx's error.
//
// The error is nil when every write was applied. Otherwise it is a
// *BulkError that counts the failures and wraps the first one (and the
// context's error, if it stopped the work), or an *Error naming a bad
// option, in which case nothing was sent and the result is empty.
func (w *BulkWriter) Write(ctx context.Context, actions []Action) (res BulkResult, err error) {
	if ctx == nil {
		return BulkResult{}, CheckContext(ctx)
	}
	ctx, fin := Observe(ctx, w.table, Operation{Name: "store.Bulk", Table: nameOf(w.table), Batch: len(actions)})
	defer func() { fin.Finish(err, res.Written) }()
	return w.write(ctx, actions)
}

func (w *BulkWriter) write(ctx context.Context, actions []Action) (BulkResult, error) {
	opts, err := w.opts.resolve()
	if err != nil {
		return BulkResult{}, err
	}
	// A panicking Progress stops the work through this context.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &bulkRun{
		table:    w.table,
		opts:     opts,
		actions:  actions,
		outcomes: make([]BulkOutcome, len(actions)),
		progress: BulkProgress{Total: len(actions)},
		stop:     cancel,
	}
	valid, sizes := r.validate()
	parts := planBulk(actions, valid, sizes, opts.PartitionOrder)
	r.execute(ctx, parts)
	r.finish()

	res := BulkResult{Outcomes: r.outcomes}
	res.Tally()
	for _, p := range parts {
		res.Batches += len(p)
	}
	// What stopped the work, if it left writes unsent: a panicking
	// Progress, or the caller's context. A context that ended after the
	// last transaction stopped nothing.
	var stopped error
	if cause := context.Cause(ctx); cause != nil {
		for _, o := range res.Outcomes {
			if o.Err != nil && errors.Is(o.Err, cause) {
				stopped = cause
				break
			}
		}
	}
	return res, res.Err(stopped)
}

// resolve fills in defaults and refuses negative settings.
func (o BulkOptions) resolve() (BulkOptions, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Concurrency", int64(o.Concurrency)},
		{"MaxAttempts", int64(o.MaxAttempts)},
		{"Backoff", int64(o.Backoff)},
		{"MaxBackoff", int64(o.MaxBackoff)},
	} {
		if f.v < 0 {
			return o, invalid("BulkOptions.%s is %d: it must be 0 (the default) or positive", f.name, f.v)
		}
	}
	if o.ProgressInterval < 0 {
		return o, invalid("BulkOptions.ProgressInterval is %v: it must be 0 (every transaction) or positive", o.ProgressInterval)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultBulkConcurrency
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultBulkAttempts
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBulkBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = max(DefaultBulkMaxBackoff, o.Backoff)
	}
	if o.Jitter == nil {
		o.Jitter = halfJitter
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	return o, nil
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BulkError reports that some writes of a Write failed or may not have
// been applied. Each write's own error is in BulkResult.Outcomes.
type BulkError struct {
	// Failed counts the writes certainly not applied, Unknown those that
	// may or may not have been, out of Total.
	Failed, Unknown, Total int
	// FirstIndex is the input position of the first write that was not
	// applied (failed or unknown) and First its error.
	FirstIndex int
	First      error
	// FirstUnknown is the error of the first write whose outcome is
	// unknown, if any.
	FirstUnknown error
	// Stopped is the error that ended the work early: the context's, or
	// one wrapping ErrProgressPanicked.
	Stopped error
}

// Error summarizes the failures.
func (e *BulkError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bulk write: %d of %d writes not applied", e.Failed, e.Total)
	if e.Unknown > 0 {
		fmt.Fprintf(&b, ", %d with an unknown outcome", e.Unknown)
	}
	if e.Stopped != nil {
		fmt.Fprintf(&b, " (stopped: %v)", e.Stopped)
	}
	if e.First != nil {
		fmt.Fprintf(&b, "; first, write %d: %v", e.FirstIndex, e.First)
	}
	return b.String()
}

// Unwrap returns the first failure, the first unknown outcome and what
// stopped the work, so errors.Is finds any of them (ErrUnknownOutcome
// when some write's outcome is unknown).
func (e *BulkError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.First, e.FirstUnknown, e.Stopped} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// bulkRun is the state of one Write call.
type bulkRun struct {
	table   Table
	opts    BulkOptions
	actions []Action
	// outcomes has one slot per action; each slot is written by the one
	// goroutine that owns the action's partition.
	outcomes []BulkOutcome

	mu         sync.Mutex // guards the fields below, and serializes Progress calls
	progress   BulkProgress
	reported   BulkProgress
	reportedAt time.Time
	panicked   error // set once Progress panicked

	stop context.CancelCauseFunc // ends the work early
}

// validate checks every action as the service checks it inside a batch
// (ValidateAction), so a write is refused with the code it would get there.
// It reports which actions may be sent.
func (r *bulkRun) validate() ([]bool, []int) {
	valid := make([]bool, len(r.actions))
	sizes := make([]int, len(r.actions))
	for i := range r.actions {
		r.outcomes[i].Batch = -1
		wire, err := checkAction(&r.actions[i])
		if err != nil {
			r.outcomes[i].Err = err
			r.progress.Failed++
			continue
		}
		valid[i] = true
		// ActionWireSize: the framing, the URL keys and the entity; a
		// table that changes what it sends estimates it itself.
		sizes[i] = batchActionOverhead + wire
		if s, ok := r.table.(wireSizer); ok {
			sizes[i] = s.ActionWireSize(&r.actions[i])
		}
	}
	return valid, sizes
}

// positional strips the transaction index from a service error: an
// outcome's position in Outcomes already says which write it is.
func positional(err error) error {
	var se *Error
	if errors.As(err, &se) && se.Index != -1 {
		c := *se
		c.Index = -1
		return &c
	}
	return err
}

// succeed and fail record one write's outcome; settle updates the counts.
func (r *bulkRun) succeed(i int, etag ETag) {
	r.outcomes[i].ETag, r.outcomes[i].Err = etag, nil
}

func (r *bulkRun) fail(i int, err error) {
	r.outcomes[i].ETag, r.outcomes[i].Err, r.outcomes[i].Unknown = "", err, false
}

// unknown records a write that may or may not have been applied.
func (r *bulkRun) unknown(i int, err error) {
	r.outcomes[i].ETag, r.outcomes[i].Err, r.outcomes[i].Unknown = "", err, true
}

// settle counts the outcomes of idx and, when report is set, tells
// Progress.
func (r *bulkRun) settle(idx []int, report bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, i := range idx {
		switch o := &r.outcomes[i]; {
		case o.Unknown:
			r.progress.Unknown++
		case o.Err != nil:
			r.progress.Failed++
		default:
			r.progress.Written++
		}
	}
	if report && (r.opts.ProgressInterval <= 0 || r.opts.Now().Sub(r.reportedAt) >= r.opts.ProgressInterval) {
		r.reportLocked()
	}
}

// reportLocked calls Progress, recovering a panic: the first one stops
// the work.
func (r *bulkRun) reportLocked() {
	if r.opts.Progress == nil || r.panicked != nil {
		return
	}
	r.reported = r.progress
	defer func() {
		if v := recover(); v != nil {
			r.panicked = fmt.Errorf("%w: %v", ErrProgressPanicked, v)
			r.stop(r.panicked)
		}
	}()
	r.opts.Progress(r.progress)
	r.reportedAt = r.opts.Now()
}

// finish makes the last Progress call carry the final counts.
func (r *bulkRun) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opts.Progress != nil && r.reported != r.progress {
		r.reportLocked()
	}
}

// halfJitter returns a random duration in [d/2, d).
func halfJitter(d time.Duration) time.Duration {
	if d < 2 {
		return d
	}
	return d/2 + time.Duration(rand.Int64N(int64(d-d/2)))
}
