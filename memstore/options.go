package memstore

import (
	"math/rand/v2"
	"time"
)

// Option configures a Store.
type Option func(*options)

type options struct {
	now         func() time.Time
	deleteDelay time.Duration
	queueDelay  time.Duration // WithQueueDelay
	shortPages  *rand.Rand
	faults      FaultFunc
	throughput  *ThroughputLimits // WithThroughput, defaults filled in
	account     *account          // WithAccount (sas.go)
}

// WithClock makes the store read time from now instead of time.Now. The
// store still moves Timestamps strictly forward when the clock stalls or
// goes back, as the service does.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// WithTableDeleteDelay makes a deleted table's name unusable for d:
// creating it again inside that window fails with TableBeingDeleted (409),
// as on Azure, where the delay is typically around 40 seconds. The default
// is zero.
func WithTableDeleteDelay(d time.Duration) Option {
	return func(o *options) { o.deleteDelay = d }
}

// WithQueueDelay makes every message put on a queue stay hidden for d
// more than its PutOptions.VisibilityDelay (at most
// store.MaxVisibilityTimeout in all), measured on the store's clock: a
// message reaches its receivers d late, as it does on Azure, where a
// worker polling its queue sees a new message a second or more after it
// was put. Code that reads what a worker writes from a queued message
// (the copies core/eventual's engine writes in other partitions) then
// meets the window in which the write returned and its consequences are
// not there yet. The default is zero: a message is visible as soon as it
// is put. A d of zero or less turns the delay off. Update and Get keep
// the visibility they are given.
func WithQueueDelay(d time.Duration) Option {
	return func(o *options) { o.queueDelay = max(d, 0) }
}

// WithShortPages makes queries return short and empty pages with
// continuation tokens at random, as Azure does at partition-server
// boundaries, so that code ignoring continuation tokens fails its tests.
// The seed makes runs repeatable.
func WithShortPages(seed uint64) Option {
	return func(o *options) { o.shortPages = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
}

// Operation names a store operation for fault injection.
type Operation string

// The operations a FaultFunc sees.
const (
	OpCreateTable Operation = "CreateTable"
	OpDeleteTable Operation = "DeleteTable"
	OpListTables  Operation = "ListTables"
	OpGet         Operation = "Get"
	OpInsert      Operation = "Insert"
	OpUpdate      Operation = "Update"
	OpUpsert      Operation = "Upsert"
	OpDelete      Operation = "Delete"
	OpQuery       Operation = "Query"
	OpTransact    Operation = "Transact"
)

// FaultFunc decides, for each operation, whether it meets a fault. It is
// called once per operation (a Transact is one operation; the point reads
// a lost write's resolution makes are operations of their own), with the
// table's name, or the container's for the blob operations (OpAppendBlock
// and the others in blob_append.go). Return
// nil for no fault. Return an error, typically one of ServerBusy,
// InternalError, OperationTimedOut or ResponseLost, to fail the operation
// before it touches any data; wrap it with AfterApply to let the
// operation take effect and then lose its answer.
//
// The caller sees a fault as a client of the service would: a write
// answered with a 500 or with no answer at all may have been applied, so
// memstore reports it as Unknown (store.ErrUnknownOutcome), whether the
// fault came before or after the data changed, and then resolves it by
// reading the rows back (driver.Settle), exactly as azstore does. A 503
// ServerBusy is a refusal (store.ErrThrottled); a read fails with the
// fault's error as it is.
type FaultFunc func(op Operation, table string) error

// WithFaults installs a fault schedule, for testing retries, lost answers
// and partial failure handling.
func WithFaults(f FaultFunc) Option {
	return func(o *options) { o.faults = f }
}
