package partition

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// Options tune a Partition or an Outbox. The zero value (or nil) gives the
// defaults.
type Options struct {
	// History is how many writers' request ids the fence keeps, 1 to
	// MaxHistory (default DefaultHistory). A commit whose answer was lost
	// is resolved exactly as long as fewer than History other commits
	// land on the partition before the fence is read back.
	History int
	// NewID returns a fresh request id (and outbox row id): at most
	// MaxRequestIDLen characters, no comma. The default is a time-ordered
	// keys.IDGenerator over crypto/rand.
	NewID func() (string, error)
	// Now is the clock outbox rows and claims read (default time.Now).
	Now func() time.Time
	// ReadAttempts bounds how many times Read reads a partition that a
	// writer keeps changing under it (default 8).
	ReadAttempts int
	// ResolveAttempts bounds the rounds of read-back (and fence moves)
	// that resolve a lost answer (default 8).
	ResolveAttempts int
	// Attempts bounds the attempts of one Run: the commits it tries, and
	// the reads that fail transiently on the way (default 8).
	Attempts int
	// Backoff is the pause before retry number n (n >= 1) of a Run, a
	// read or a resolution. The default is a random duration up to 10 ms
	// doubled n-1 times, at most 1 s ("full jitter", which spreads
	// contending writers best), drawn from Random.
	Backoff func(n int) time.Duration
	// Random is the randomness of the default Backoff (default
	// math/rand/v2's Uint64). It must be safe for concurrent use.
	Random func() uint64
	// Sleep waits out a pause, or returns the context's error as soon
	// as it ends (default a timer that ends with the context): a test
	// gives its own clock's.
	Sleep func(ctx context.Context, d time.Duration) error
	// HeadPrefix names the two properties a Head at a RowKey other than
	// FenceKey keeps for itself: HeadPrefix+"Version" and
	// HeadPrefix+"Writers" (default DefaultHeadPrefix, "TkHead"). Like
	// every property name tablekit stores, it starts with
	// store.ReservedPrefix ("Tk"), which no property of yours starts
	// with; a package whose head rows are of one kind may choose another
	// (patterns/wide's "TkWideHead"). The partition's fence always uses
	// the default: New refuses a HeadPrefix.
	HeadPrefix string
}

// DefaultHeadPrefix is the default Options.HeadPrefix, and the prefix of
// the fence's own properties (TkHeadVersion, TkHeadWriters).
const DefaultHeadPrefix = store.ReservedPrefix + "Head"

// settings are Options with the defaults filled in.
type settings struct {
	history         int
	newID           func() (string, error)
	now             func() time.Time
	readAttempts    int
	resolveAttempts int
	attempts        int
	backoff         func(n int) time.Duration
	sleep           func(ctx context.Context, d time.Duration) error
	headPrefix      string
}

func (o *Options) settings() (settings, error) {
	var in Options
	if o != nil {
		in = *o
	}
	s := settings{history: in.History, newID: in.NewID, now: in.Now,
		readAttempts: in.ReadAttempts, resolveAttempts: in.ResolveAttempts, attempts: in.Attempts,
		backoff: in.Backoff, sleep: in.Sleep, headPrefix: in.HeadPrefix}
	if s.history == 0 {
		s.history = DefaultHistory
	}
	if s.history < 1 || s.history > MaxHistory {
		return s, refuse(store.CodeInvalidInput, 400, "Options.History %d is out of range: it must be 1 to %d", in.History, MaxHistory)
	}
	if s.newID == nil {
		s.newID = keys.NewIDGenerator(nil, nil).New
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.readAttempts < 0 {
		return s, refuse(store.CodeInvalidInput, 400, "Options.ReadAttempts %d is negative: it must be 0 (the default, 8) or more", in.ReadAttempts)
	}
	if s.resolveAttempts < 0 {
		return s, refuse(store.CodeInvalidInput, 400, "Options.ResolveAttempts %d is negative: it must be 0 (the default, 8) or more", in.ResolveAttempts)
	}
	if s.attempts < 0 {
		return s, refuse(store.CodeInvalidInput, 400, "Options.Attempts %d is negative: it must be 0 (the default, 8) or more", in.Attempts)
	}
	if s.readAttempts == 0 {
		s.readAttempts = 8
	}
	if s.resolveAttempts == 0 {
		s.resolveAttempts = 8
	}
	if s.attempts == 0 {
		s.attempts = 8
	}
	if s.backoff == nil {
		random := in.Random
		if random == nil {
			random = rand.Uint64
		}
		s.backoff = func(n int) time.Duration { return jitter(random, n) }
	}
	if s.sleep == nil {
		s.sleep = wait.Sleep
	}
	if s.headPrefix != "" {
		if !store.ReservedProperty(s.headPrefix) {
			return s, refuse(store.CodeInvalidInput, 400,
				"Options.HeadPrefix %s does not start with %s (store.ReservedPrefix): the head's own properties are tablekit's, and every property name tablekit stores starts with it",
				quote(s.headPrefix), quote(store.ReservedPrefix))
		}
		if err := store.ValidatePropertyName(s.headPrefix + "Writers"); err != nil {
			return s, fmt.Errorf("Options.HeadPrefix %s: %w", quote(s.headPrefix), err)
		}
	}
	return s, nil
}

// jitter is the default backoff: a random duration below a ceiling of
// 10 ms doubled n-1 times, at most 1 s.
func jitter(random func() uint64, n int) time.Duration {
	d := time.Second
	if n-1 < 7 {
		d = min(d, 10*time.Millisecond<<max(n-1, 0))
	}
	return time.Duration(random() % uint64(d))
}

// id returns a fresh request id, checked so the fence can list it.
func (s *settings) id() (string, error) {
	id, err := s.newID()
	if err != nil {
		return "", fmt.Errorf("partition: new request id: %w", err)
	}
	if id == "" || len(id) > MaxRequestIDLen || strings.ContainsRune(id, ',') {
		return "", refuse(store.CodeInvalidInput, 400,
			"Options.NewID returned %s: a request id is 1 to %d characters without a comma", quote(id), MaxRequestIDLen)
	}
	if err := store.ValidateValue(propWriters, id); err != nil {
		return "", err
	}
	return id, nil
}

// wait sleeps before retry n, or returns the context's error.
func (s *settings) wait(ctx context.Context, n int) error {
	d := s.backoff(n)
	if d <= 0 {
		return ctx.Err()
	}
	return s.sleep(ctx, d)
}

// isNil reports whether v is nil or holds a nil pointer, map, slice,
// function or channel: a value whose methods cannot be called.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Partition is one fenced partition of a table. It holds no state between
// calls and is safe for concurrent use; every transaction reads or is
// given the fence it builds on.
type Partition struct {
	table store.Table
	pk    string
	h     head // the fence, or the head of a Head
	s     settings
}

// New returns the fenced partition pk of tbl. It does no I/O. It fails
// for a nil tbl (or one holding a nil pointer), a PartitionKey the
// service refuses (a forbidden character, more than 1,024 UTF-16 units)
// and bad Options, naming the value and the limit, with errors matching
// store.ErrInvalidInput.
func New(tbl store.Table, pk string, opts *Options) (*Partition, error) {
	if isNil(tbl) {
		return nil, fmt.Errorf("partition: %w", refuse(store.CodeInvalidInput, 400, "the table is nil: give the store.Table the partition lives in"))
	}
	if err := store.ValidateKeys(pk, ""); err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	s, err := opts.settings()
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	if s.headPrefix != "" {
		return nil, fmt.Errorf("partition: %w", refuse(store.CodeInvalidInput, 400,
			"Options.HeadPrefix %s is set: the partition's fence always names its properties %s and %s; HeadPrefix is for NewHead at another RowKey",
			quote(s.headPrefix), propVersion, propWriters))
	}
	return &Partition{table: tbl, pk: pk, h: fenceHead, s: s}, nil
}

// Key returns the PartitionKey.
func (p *Partition) Key() string { return p.pk }

// Table returns the table.
func (p *Partition) Table() store.Table { return p.table }

// Fence reads the partition's fence: one point read.
func (p *Partition) Fence(ctx context.Context) (Fence, error) {
	f, err := p.h.read(ctx, p.table, p.pk)
	if err != nil {
		return f, p.wrap("read the "+p.what(), err)
	}
	return f, nil
}

// Begin reads the fence and starts a transaction on top of it: the
// transaction commits only if no other writer commits first.
func (p *Partition) Begin(ctx context.Context) (*Txn, error) {
	f, err := p.Fence(ctx)
	if err != nil {
		return nil, err
	}
	return p.BeginAt(f)
}

// BeginAt starts a transaction on top of a fence state the caller holds
// (from a Snapshot the writes depend on, or from the Result of the
// previous commit), without reading it again: the commit fails with a
// ConflictError if anyone committed after f.
func (p *Partition) BeginAt(f Fence) (*Txn, error) {
	if f.pk != p.pk || f.rk != p.h.rk {
		return nil, fmt.Errorf("partition %s: %w", quote(p.pk), refuse(store.CodeInvalidInput, 400,
			"BeginAt of the %s was given the head row %s of partition %s", p.what(), quote(f.rk), quote(f.pk)))
	}
	id, err := p.s.id()
	if err != nil {
		return nil, err
	}
	return newTxn(p, f, id), nil
}

// wrap names the partition (and a head's RowKey) in an error.
func (p *Partition) wrap(what string, err error) error {
	if !p.h.fence() {
		return fmt.Errorf("partition %s of table %s: head %s: %s: %w", quote(p.pk), p.table.Name(), quote(p.h.rk), what, err)
	}
	return fmt.Errorf("partition %s of table %s: %s: %w", quote(p.pk), p.table.Name(), what, err)
}

// what names the head row in messages.
func (p *Partition) what() string {
	if p.h.fence() {
		return "fence"
	}
	return "head row"
}
