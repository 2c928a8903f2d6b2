package eventual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// Options tune an Engine; a nil *Options, and every zero field, takes
// the default written beside the field. The queue, which is required, is
// New's parameter.
type Options struct {
	// PoisonQueue receives the messages that failed MaxReceives times;
	// default Queue + "-poison".
	PoisonQueue string
	// Container holds operations too large for a queue message or an
	// outbox row; "" refuses such operations.
	Container string
	// MaxReceives is how often a message may be received before it goes
	// to the poison queue (default 5).
	MaxReceives int
	// Visibility is how long a received message stays hidden; the worker
	// extends it while an operation runs (default 30 s; at least 1 s).
	Visibility time.Duration
	// StepAttempts bounds the tries of one step within one receive while
	// it fails transiently (default 4).
	StepAttempts int
	// StepTimeout bounds one try of a step, each request the worker
	// makes around the steps (receives, visibility updates, the outbox
	// row, the operation's blob, the message's removal, the poison
	// queue), and each message a write queues, default 1 minute. A try
	// still running then is abandoned and counts as a transient failure:
	// steps are idempotent under their version guards, so the next try
	// (or a later receive) finishes the work whatever the abandoned one
	// did. Without a bound, a request the
	// service never answers would stall the worker, and keep its message
	// hidden for as long as the worker runs, since the worker extends the
	// message's visibility while an operation runs.
	StepTimeout time.Duration
	// Backoff is the first pause between step tries, doubling (default
	// 100 ms); a failed receive reappears after Backoff times the receive
	// count, at least 1 s.
	Backoff time.Duration
	// WriteAttempts bounds the attempts of one Write (default 8): it is
	// the Attempts of the partition's commit loop, unless
	// Partition.Attempts sets it. Between attempts the loop pauses
	// Partition.Backoff (by default a random time below 10 ms doubled per
	// attempt, at most 1 s), so contending writers drift apart.
	WriteAttempts int
	// Concurrency is how many messages a worker runs at once (default 8).
	Concurrency int
	// SweepAfter is how old an outbox row must be before Sweep queues its
	// message again (default 2 × Visibility); also the lease of the claim.
	SweepAfter time.Duration
	// PollInterval is Work's pause when the queue is empty (default 1 s).
	PollInterval time.Duration
	// Owner names this worker in outbox claims (default a random name).
	Owner string
	// Now is the clock (default time.Now); Sleep waits (default a timer
	// that ends with ctx). Tests inject both.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Partition tunes the source partitions' fences, commit loop and
	// outboxes. Its Now and Sleep default to the engine's, its Attempts
	// to WriteAttempts.
	Partition *partition.Options
}

// Engine runs eventually consistent transactions: a write to a source
// partition and the intent to propagate it are one entity group
// transaction (an outbox row beside the write); workers carry out the
// intent's steps from a queue, idempotently, at least once; a sweeper
// queues again the intents whose message was lost. It is safe for
// concurrent use; any number of engines over the same store and queue may
// run at once.
type Engine struct {
	st        store.Store
	o         Options
	queueName string
	queue     store.Queue
	poison    store.Queue
	ids       *keys.IDGenerator

	mu       sync.RWMutex
	handlers map[StepKind]*StepHandler // kinds of step of their own (Handle)

	fences fences // the fence of each partition after our last commit
	sends  sends  // the messages of writes that returned, being queued
}

// New returns an engine over st whose operations travel on the queue
// named queue; opts may be nil for the defaults. A bad value of opts is
// refused with an error matching store.ErrInvalidInput that names the
// field and its limit. It does no I/O; Setup creates the queues and the
// container.
func New(st store.Store, queue string, opts *Options) (*Engine, error) {
	if st == nil {
		return nil, refuse("the store is nil")
	}
	if v := reflect.ValueOf(st); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, refuse("the store is a nil %T", st)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := store.ValidateQueueName(queue); err != nil {
		return nil, fmt.Errorf("eventual: the queue: %w", err)
	}
	if o.PoisonQueue == "" {
		o.PoisonQueue = queue + "-poison"
	}
	if err := store.ValidateQueueName(o.PoisonQueue); err != nil {
		return nil, fmt.Errorf("eventual: Options.PoisonQueue: %w", err)
	}
	if o.PoisonQueue == queue {
		return nil, refuse("Options.PoisonQueue %q is the operations queue", queue)
	}
	if o.Container != "" {
		if err := store.ValidateContainerName(o.Container); err != nil {
			return nil, fmt.Errorf("eventual: Options.Container: %w", err)
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"MaxReceives", int64(o.MaxReceives)}, {"Visibility", int64(o.Visibility)}, {"StepAttempts", int64(o.StepAttempts)},
		{"StepTimeout", int64(o.StepTimeout)}, {"WriteAttempts", int64(o.WriteAttempts)}, {"Backoff", int64(o.Backoff)}, {"Concurrency", int64(o.Concurrency)}, {"SweepAfter", int64(o.SweepAfter)}, {"PollInterval", int64(o.PollInterval)}} {
		if f.v < 0 {
			return nil, refuse("Options.%s is %d: it must be 0 (the default) or positive", f.name, f.v)
		}
	}
	if o.MaxReceives == 0 {
		o.MaxReceives = 5
	}
	if o.Visibility == 0 {
		o.Visibility = 30 * time.Second
	}
	if o.Visibility < time.Second || o.Visibility > store.MaxVisibilityTimeout {
		return nil, refuse("Options.Visibility %s is out of range: it must be 1 s to 7 days", o.Visibility)
	}
	if o.StepAttempts == 0 {
		o.StepAttempts = 4
	}
	if o.StepTimeout == 0 {
		o.StepTimeout = time.Minute
	}
	if o.WriteAttempts == 0 {
		o.WriteAttempts = 8
	}
	if o.Backoff == 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.Concurrency == 0 {
		o.Concurrency = 8
	}
	if o.SweepAfter == 0 {
		o.SweepAfter = 2 * o.Visibility
	}
	if o.PollInterval == 0 {
		o.PollInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = wait.Sleep
	}
	ids := keys.NewIDGenerator(o.Now, nil)
	if o.Owner == "" {
		id, err := ids.New()
		if err != nil {
			return nil, err
		}
		o.Owner = "worker-" + id
	}
	po := partition.Options{Now: o.Now, Sleep: o.Sleep}
	if o.Partition != nil {
		po = *o.Partition
		if po.Sleep == nil {
			po.Sleep = o.Sleep
		}
	}
	if po.Attempts == 0 {
		po.Attempts = o.WriteAttempts
	}
	o.Partition = &po
	return &Engine{st: st, o: o, queueName: queue, queue: st.Queue(queue), poison: st.Queue(o.PoisonQueue), ids: ids}, nil
}

// usable refuses a nil engine (one not made by New) and a nil context,
// which would otherwise panic deep inside a request.
func (e *Engine) usable(ctx context.Context) error {
	if e == nil {
		return refuse("the engine is nil: make one with eventual.New")
	}
	if ctx == nil {
		return refuse("the context is nil: pass context.Background() or a context of your own")
	}
	return nil
}

// Setup creates the queues and, when one is configured, the container.
func (e *Engine) Setup(ctx context.Context) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	for _, q := range []store.Queue{e.queue, e.poison} {
		if err := q.Create(ctx); err != nil {
			return fmt.Errorf("eventual: create queue %s: %w", q.Name(), err)
		}
	}
	if e.o.Container != "" {
		if err := e.st.Container(e.o.Container).Create(ctx); err != nil {
			return fmt.Errorf("eventual: create container %s: %w", e.o.Container, err)
		}
	}
	return nil
}

// envelope is a queue message: where the operation is (an outbox row, the
// message itself, or a blob), and the errors of the receives so far.
type envelope struct {
	Outbox   *outboxRef      `json:"outbox,omitempty"`
	Op       json.RawMessage `json:"op,omitempty"`
	Blob     string          `json:"blob,omitempty"`
	Attempts []attempt       `json:"attempts,omitempty"`
}

type outboxRef struct {
	Table string `json:"table"`
	PK    string `json:"pk"`
	ID    string `json:"id"`
}

// attempt is one failed receive of a message.
type attempt struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// stored is an operation as an outbox row holds it: inline, or in a blob.
type stored struct {
	Op   json.RawMessage `json:"op,omitempty"`
	Blob string          `json:"blob,omitempty"`
}

// maxInline leaves room in a message for the envelope and the attempts.
const maxInline = store.MaxMessageSize - 8*1024

// Submit queues an operation that no source transaction carries: its
// steps run eventually, at least once each. An operation too large for a
// message goes to a blob of the engine's container (under a fresh random
// name) and the message points to it.
func (e *Engine) Submit(ctx context.Context, op Operation) error {
	if err := e.usable(ctx); err != nil {
		return err
	}
	body, err := e.encodeOp(ctx, op)
	if err != nil {
		return err
	}
	env := envelope{Op: body}
	if len(body) > maxInline {
		name, err := e.putOpBlob(ctx, body)
		if err != nil {
			return err
		}
		env = envelope{Blob: name}
	}
	return e.enqueue(ctx, env)
}

// putOpBlob stores an encoded operation under a fresh random name.
func (e *Engine) putOpBlob(ctx context.Context, body []byte) (string, error) {
	if e.o.Container == "" {
		return "", fmt.Errorf("eventual: operation of %d bytes: %w", len(body),
			refuse("it is larger than a message (%d bytes) and Options.Container is empty", maxInline))
	}
	id, err := e.ids.New()
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("op-%s-%016x", id, rand.Uint64())
	if _, err := e.st.Container(e.o.Container).Put(ctx, name, body, &store.BlobPutOptions{IfNoneMatchAny: true}); err != nil {
		return "", fmt.Errorf("eventual: store operation in blob %s: %w", name, err)
	}
	return name, nil
}

// enqueue puts a message.
func (e *Engine) enqueue(ctx context.Context, env envelope) error {
	b, err := json.Marshal(env)
	if err != nil {
		return err
	}
	if _, err := e.queue.Put(ctx, b, &store.PutOptions{TTL: store.NeverExpires}); err != nil {
		return fmt.Errorf("eventual: queue %s: %w", e.queueName, err)
	}
	return nil
}

// Tx is a transaction on a source partition: the rows written and the
// operations they imply, committed together. Every row written carries
// the version the commit creates (VersionProperty).
type Tx struct {
	e       *Engine
	table   string
	pk      string
	t       *partition.Txn
	blobs   []string        // operation blobs written for this attempt
	written map[string]bool // source rows this transaction inserts, updates or upserts
	deleted map[string]bool // source rows this transaction deletes
	sources []string        // the RowKeys of Then, in order
}

// Version is the source partition version this transaction creates; 0
// for a Tx that Write did not make.
func (tx *Tx) Version() int64 {
	if tx == nil || tx.t == nil {
		return 0
	}
	return tx.t.Base().Version + 1
}

// usable refuses a Tx that Write did not make (a nil or zero Tx).
func (tx *Tx) usable() error {
	if tx == nil || tx.t == nil || tx.e == nil {
		return refuse("the transaction was not made by Engine.Write: use the Tx its function receives")
	}
	return nil
}

// wrote records a source row the transaction writes.
func (tx *Tx) wrote(rk string) {
	if tx.written == nil {
		tx.written = map[string]bool{}
	}
	tx.written[rk] = true
}

// stamp copies e and records the version on it.
func (tx *Tx) stamp(e store.Entity) (store.Entity, error) {
	if _, bad := e.Properties[VersionProperty]; bad {
		return e, refuse("property %s of row %q is the engine's own: it records the version", VersionProperty, e.RowKey)
	}
	c := e
	c.Properties = make(map[string]any, len(e.Properties)+1)
	for k, v := range e.Properties {
		c.Properties[k] = v
	}
	c.Properties[VersionProperty] = tx.Version()
	return c, nil
}

// Insert adds an insert of a source row.
func (tx *Tx) Insert(label string, e store.Entity) error {
	if err := tx.usable(); err != nil {
		return err
	}
	c, err := tx.stamp(e)
	if err != nil {
		return err
	}
	if err := tx.t.Insert(label, c); err != nil {
		return err
	}
	tx.wrote(e.RowKey)
	return nil
}

// Update adds a merge or replace of a source row if its ETag is still
// ifMatch (store.ETagAny for any).
func (tx *Tx) Update(label string, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) error {
	if err := tx.usable(); err != nil {
		return err
	}
	c, err := tx.stamp(e)
	if err != nil {
		return err
	}
	if err := tx.t.Update(label, c, mode, ifMatch); err != nil {
		return err
	}
	tx.wrote(e.RowKey)
	return nil
}

// Upsert adds an insert-or-merge or insert-or-replace of a source row.
func (tx *Tx) Upsert(label string, e store.Entity, mode store.UpdateMode) error {
	if err := tx.usable(); err != nil {
		return err
	}
	c, err := tx.stamp(e)
	if err != nil {
		return err
	}
	if err := tx.t.Upsert(label, c, mode); err != nil {
		return err
	}
	tx.wrote(e.RowKey)
	return nil
}

// Delete adds a delete of a source row if its ETag is still ifMatch.
func (tx *Tx) Delete(label, rk string, ifMatch store.ETag) error {
	if err := tx.usable(); err != nil {
		return err
	}
	if err := tx.t.Delete(label, rk, ifMatch); err != nil {
		return err
	}
	if tx.deleted == nil {
		tx.deleted = map[string]bool{}
	}
	tx.deleted[rk] = true
	return nil
}

// Then adds the operation the transaction implies for its row rk (the
// source): its steps run eventually, each at least once, after the
// transaction commits, and only if it commits. The operation carries the
// transaction's version. The transaction must write (Insert, Update,
// Upsert) or delete row rk, before or after Then: Write refuses the
// transaction otherwise, before anything is sent. Delete the source row
// first when the operation moves it elsewhere. An operation too large for
// an outbox row goes to a blob of the engine's container.
func (tx *Tx) Then(ctx context.Context, rk string, steps ...Step) error {
	if err := tx.usable(); err != nil {
		return err
	}
	if ctx == nil {
		return refuse("the context is nil: pass context.Background() or a context of your own")
	}
	op := Operation{Source: &Ref{Table: tx.table, PartitionKey: tx.pk, RowKey: rk}, Version: tx.Version(),
		SourceDeleted: tx.deleted[rk], Steps: steps}
	body, err := tx.e.encodeOp(ctx, op)
	if err != nil {
		return err
	}
	s := stored{Op: body}
	if len(body) > partition.MaxBody-1024 {
		name, err := tx.e.putOpBlob(ctx, body)
		if err != nil {
			return err
		}
		tx.blobs = append(tx.blobs, name)
		s = stored{Blob: name}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if _, err = tx.t.Outbox(partition.Message{Topic: tx.e.queueName, Body: b}); err != nil {
		return err
	}
	tx.sources = append(tx.sources, rk)
	return nil
}

// checkSources refuses an operation whose source row the transaction
// neither writes nor deletes: its source would not carry the version the
// operation's steps are judged by, and a row of that name may not exist.
func (tx *Tx) checkSources() error {
	for _, rk := range tx.sources {
		if !tx.written[rk] && !tx.deleted[rk] {
			return refuse("Tx.Then names row %q of partition %q of %s as the operation's source, but the transaction neither writes nor deletes it: "+
				"write or delete that row in the same transaction", rk, tx.pk, tx.table)
		}
	}
	return nil
}

// Write runs fn to build a transaction on partition pk of table, commits
// it (the rows, the fence and an outbox row per operation) in one
// request, and returns. The commit goes through the partition's commit
// loop (partition.Partition.Run): fn runs
// again on a fresh transaction when another writer committed to the
// partition first, when a commit whose answer was lost proved not
// applied, and after a transient failure (up to WriteAttempts times in
// all, with the partition's Backoff in between), so it must read what it
// needs inside, from its arguments' state only. A commit whose answer was
// lost and that the fence proved applied returns its Result (Recovered),
// and one whose outcome the fence cannot tell a *partition.UnknownError:
// it is never sent again.
//
// The operations' messages are queued after Write returned, on a
// goroutine of the engine (Flush waits for them): the outbox rows are the
// operations' durable record, and a message only brings one to a worker
// sooner than a sweep would. So a write costs the commit's round trip
// alone (and the fence's read when the engine does not remember it). The
// messages' requests keep ctx's values but not its cancellation: ctx may
// end as soon as Write returns.
//
// The Engine remembers the fence each of its commits left, and its next
// write to that partition begins from it rather than reading it. When
// another writer moved the fence since, the commit is refused on the
// fence with nothing applied, and the write reads the fence and tries
// again at once: a remembered fence saves a round trip and never makes a
// wrong write, since the commit is conditional on the fence's ETag.
//
// A crash (or a failure to queue) after the commit loses nothing: the
// outbox rows stay until a worker has run their operations, and Sweep
// queues again the ones whose message never came. A program about to
// exit calls Flush, so that its last writes' messages are not left to a
// sweep.
func (e *Engine) Write(ctx context.Context, table, pk string, fn func(tx *Tx) error) (*partition.Result, error) {
	if err := e.usable(ctx); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, refuse("Write of partition %q of %s: the function is nil", pk, table)
	}
	p, err := partition.New(e.st.Table(table), pk, e.o.Partition)
	if err != nil {
		return nil, err
	}
	run := &partition.RunOptions{}
	if f, ok := e.fences.get(table, pk); ok {
		run.Start = &f
	}
	blobs := map[string][]string{} // the operation blobs of each attempt, by its request id
	res, err := p.Run(ctx, func(ctx context.Context, t *partition.Txn) error {
		tx := &Tx{e: e, table: table, pk: pk, t: t}
		err := fn(tx)
		blobs[t.RequestID()] = tx.blobs
		if err != nil {
			return err
		}
		return tx.checkSources()
	}, run)
	if err != nil {
		e.fences.forget(table, pk)
		if !errors.Is(err, store.ErrUnknownOutcome) {
			for _, names := range blobs {
				e.dropBlobs(ctx, names)
			}
		}
		if ae := (*partition.AttemptsError)(nil); errors.As(err, &ae) && ae.Raced {
			return nil, fmt.Errorf("eventual: partition %q of %s kept changing under the write (%d attempts): %w", pk, table, ae.Attempts, err)
		}
		return nil, err
	}
	for id, names := range blobs {
		if id != res.RequestID {
			e.dropBlobs(ctx, names)
		}
	}
	e.fences.put(table, pk, res.Fence)
	e.nudge(ctx, table, pk, res.Outbox)
	return res, nil
}

// dropBlobs removes operation blobs of a transaction that did not commit.
func (e *Engine) dropBlobs(ctx context.Context, names []string) {
	for _, n := range names {
		_ = e.st.Container(e.o.Container).DeleteBlob(context.WithoutCancel(ctx), n, store.ETagAny)
	}
}
