// Package memstore is tablekit's in-memory reference engine: a store.Store
// that keeps tables, queues and blobs in memory and enforces every rule and
// limit of the service with the service's own error codes. Swap it in for
// Azure in tests and trust a green run.
//
// Options make it stricter: WithShortPages, WithTableDeleteDelay,
// WithFaults for refused requests and lost answers, and WithThroughput, a
// model of the service's scalability targets (a partition serves about
// 2,000 entities per second, the account about 20,000) that refuses
// requests beyond them with 503 ServerBusy and reports which partitions ran
// hot (Store.Throughput). With WithClock and a virtual clock such tests run
// fast and the same every time.
//
// It is safe for concurrent use.
package memstore

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Store is an in-memory storage account. The zero value is not usable;
// call New.
type Store struct {
	opts options

	clockMu sync.Mutex
	last    time.Time

	rngMu sync.Mutex // guards opts.shortPages

	// visits, when set by a test, counts the records a query examines.
	visits func()

	model *throughputModel // WithThroughput; nil when off

	filters filterCache // parsed $filter texts

	acl aclState // stored access policies (sas.go)

	mu      sync.RWMutex
	tables  map[string]*table    // by lower-case name
	deleted map[string]time.Time // lower-case name -> end of TableBeingDeleted window
	queues  *queueService
	blobs   *blobService
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{
		tables:  make(map[string]*table),
		deleted: make(map[string]time.Time),
	}
	for _, o := range opts {
		o(&s.opts)
	}
	if s.opts.now == nil {
		s.opts.now = time.Now
	}
	if s.opts.throughput != nil {
		s.model = newThroughputModel(*s.opts.throughput)
	}
	s.queues = newQueueService(s.tick)
	s.queues.delay = s.opts.queueDelay
	s.blobs = newBlobService(s.tick)
	s.blobs.faults = s.faultFor
	return s
}

// tick returns the next service time: the clock's reading in UTC at 100 ns
// precision, strictly after every earlier tick, so Timestamps only move
// forward and every write gets a distinct ETag.
func (s *Store) tick() time.Time {
	t := store.NormalizeTime(s.opts.now())
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	if !t.After(s.last) {
		t = s.last.Add(100 * time.Nanosecond)
	}
	s.last = t
	return t
}

// ctxErr refuses a nil context and reports a done one: memstore checks
// before it applies, so nothing was sent and nothing applied.
func ctxErr(ctx context.Context) error { return store.CheckContext(ctx) }

// CreateTable implements store.Store.
func (s *Store) CreateTable(ctx context.Context, name string) error {
	_, err := s.createTable(ctx, name, false)
	return err
}

// CreateTableIfNotExists implements store.Store.
func (s *Store) CreateTableIfNotExists(ctx context.Context, name string) (bool, error) {
	return s.createTable(ctx, name, true)
}

func (s *Store) createTable(ctx context.Context, name string, ifNotExists bool) (bool, error) {
	created, err := s.tryCreateTable(ctx, name, ifNotExists)
	driver.ReportTryErr(ctx, err)
	return created, err
}

func (s *Store) tryCreateTable(ctx context.Context, name string, ifNotExists bool) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	if err := store.ValidateTableName(name); err != nil {
		return false, err
	}
	before, after := s.faultFor(OpCreateTable, name)
	if before != nil {
		return false, seenByClient(before)
	}
	created, err := s.addTable(name, ifNotExists)
	if err != nil || after == nil {
		return created, err
	}
	return false, seenByClient(after)
}

// addTable creates the table unless it exists or is being deleted.
func (s *Store) addTable(name string, ifNotExists bool) (bool, error) {
	key := strings.ToLower(name)
	now := s.opts.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tables[key]; ok {
		if ifNotExists {
			return false, nil
		}
		return false, store.Errorf(store.CodeTableAlreadyExists, 409, "table %q already exists (as %q; table names are case-insensitive)", name, t.name)
	}
	if until, ok := s.deleted[key]; ok {
		if now.Before(until) {
			return false, store.Errorf(store.CodeTableBeingDeleted, 409, "table %q is being deleted; it can be created again after %s", name, until.UTC().Format(time.RFC3339Nano))
		}
		delete(s.deleted, key)
	}
	s.tables[key] = newTable(name)
	return true, nil
}

// DeleteTable implements store.Store.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	err := s.deleteTable(ctx, name)
	driver.ReportTryErr(ctx, err)
	return err
}

func (s *Store) deleteTable(ctx context.Context, name string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := store.ValidateTableName(name); err != nil {
		return err
	}
	before, after := s.faultFor(OpDeleteTable, name)
	if before != nil {
		return seenByClient(before)
	}
	if err := s.removeTable(name); err != nil || after == nil {
		return err
	}
	return seenByClient(after)
}

// removeTable deletes the table and starts its TableBeingDeleted window.
func (s *Store) removeTable(name string) error {
	key := strings.ToLower(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[key]; !ok {
		return store.Errorf(store.CodeResourceNotFound, 404, "table %q does not exist", name)
	}
	delete(s.tables, key)
	if s.opts.deleteDelay > 0 {
		s.deleted[key] = s.opts.now().Add(s.opts.deleteDelay)
	}
	return nil
}

// ListTables implements store.Store. Tables come in ordinal order of their
// names as created; the continuation token is the next name to return.
func (s *Store) ListTables(ctx context.Context, opts store.ListTablesOptions) (store.TablePage, error) {
	p, err := s.listTables(ctx, opts)
	driver.ReportTryErr(ctx, err)
	return p, err
}

func (s *Store) listTables(ctx context.Context, opts store.ListTablesOptions) (store.TablePage, error) {
	if err := ctxErr(ctx); err != nil {
		return store.TablePage{}, err
	}
	if err := store.ValidateTop(opts.Top); err != nil {
		return store.TablePage{}, err
	}
	if err := s.fault(OpListTables, ""); err != nil {
		return store.TablePage{}, err
	}
	after := ""
	if opts.Continuation != "" {
		var err error
		if after, err = decodeTableToken(opts.Continuation, opts.Prefix); err != nil {
			return store.TablePage{}, err
		}
	}
	s.mu.RLock()
	names := make([]string, 0, len(s.tables))
	for _, t := range s.tables {
		if strings.HasPrefix(t.name, opts.Prefix) && t.name >= after {
			names = append(names, t.name)
		}
	}
	s.mu.RUnlock()
	sort.Strings(names)
	limit := opts.Top
	if limit == 0 {
		limit = store.MaxPageSize
	}
	var page store.TablePage
	for i, n := range names {
		if i == limit {
			page.Continuation = encodeTableToken(opts.Prefix, n)
			break
		}
		page.Tables = append(page.Tables, store.TableInfo{Name: n})
	}
	return page, nil
}

// Table implements store.Store. The handle looks the table up on every
// call, so it sees the table deleted or created after the handle was made.
func (s *Store) Table(name string) store.Table {
	return &tableHandle{s: s, name: name, key: strings.ToLower(name)}
}

// Queue implements store.Store.
func (s *Store) Queue(name string) store.Queue { return s.queues.queue(name) }

// Container implements store.Store.
func (s *Store) Container(name string) store.Container { return s.blobs.container(name) }

// lookupKey finds a table by name, whose lower-case key is already made,
// for an entity operation.
func (s *Store) lookupKey(name, key string) (*table, error) {
	if err := store.ValidateTableName(name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	t := s.tables[key]
	s.mu.RUnlock()
	if t == nil {
		return nil, store.Errorf(store.CodeTableNotFound, 404, "table %q does not exist", name)
	}
	return t, nil
}
