package large

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Defaults of Options.
const (
	// DefaultThreshold: a large value of more than 32 KiB (by the
	// service's count: 2 bytes per UTF-16 unit of a string) goes to a blob.
	DefaultThreshold = 32 * 1024
	// DefaultEntityBudget: large values go to blobs, biggest first, until
	// the entity is at most 256 KiB by the service's size formula, a
	// quarter of the 1 MiB limit.
	DefaultEntityBudget = 256 * 1024
	// DefaultGrace is the sweeper's grace period: a blob no entity
	// references is removed only once it is older than this.
	DefaultGrace = time.Hour
	// DefaultAttempts bounds the tries of a Put or DeleteKey that meets
	// concurrent writers.
	DefaultAttempts = 10
	// DefaultParallel bounds the blob requests one call has in flight.
	DefaultParallel = 8
)

// MaxThreshold is the largest Threshold: a value over 64 KiB cannot stay
// in the entity anyway.
const MaxThreshold = 64 * 1024

// Options tune a Store; a nil *Options, and every zero field, takes the
// default written beside the field.
type Options struct {
	// Threshold is the size, in bytes as the service counts them (2 per
	// UTF-16 unit of a string, 1 per byte of binary), above which a large
	// value goes to a blob: 0 means DefaultThreshold, at most
	// MaxThreshold. A value over the service's property limit (32,767
	// UTF-16 units, 64 KiB of binary) always goes to a blob.
	Threshold int
	// EntityBudget bounds the entity written: while it is larger (by
	// store.EntitySize), the largest large value still in it goes to a
	// blob too. 0 means DefaultEntityBudget, at most store.MaxEntitySize.
	// The fields that are not large are never moved: when they alone pass
	// 1 MiB the write is refused.
	EntityBudget int
	// Compress stores blob contents compressed with gzip (the reference
	// records it); a value that does not shrink is stored as it is.
	Compress bool
	// Grace is how old a blob no entity references must be before Sweep
	// removes it (0 means DefaultGrace). A write keeps its fresh blobs for
	// at most Grace/2 before it commits the entity (it writes them again
	// under new names otherwise), so a sweep never removes a blob a write
	// is about to reference, as long as the sweeper's clock is within
	// Grace/2 of the service's.
	Grace time.Duration
	// Attempts bounds the tries of a Put or DeleteKey that loses the race
	// for the entity to other writers (0 means DefaultAttempts); then it
	// fails with ErrContention.
	Attempts int
	// Parallel bounds the blob requests one call has in flight (0 means
	// DefaultParallel).
	Parallel int
	// Now is the clock (default time.Now): the write deadline and the
	// sweeper's ages are read from it.
	Now func() time.Time
	// Random is the source of the blobs' random names (default
	// crypto/rand.Reader). Tests pass a seeded source; no two writers may
	// share a seed.
	Random io.Reader
	// Sleep pauses between the tries of a contended write (default: a
	// timer that ends early with ctx's error); the pause is random, up to
	// 10 ms doubling per try up to 1 s.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Store keeps entities of type T in a table and the values of their
// large fields (tagged large) that do not fit the entity in blobs of a
// container. It is safe for concurrent use, and any number of Stores, in
// any number of processes, may write the same entities.
type Store[T any] struct {
	st        store.Store
	table     store.Table
	tableName string
	container store.Container
	large     []mapper.LargeField
	byProp    map[string]*mapper.LargeField
	props     map[string]bool // every property of T
	selLarge  []string        // $select of the large properties
	kindProp  string          // T's discriminator property, if any
	o         Options
	ids       *keys.IDGenerator

	jmu    sync.Mutex
	jitter *rand.Rand // backoff jitter, seeded from Options.Random
}

// New returns the Store of T over table and container of st. T must have
// at least one field tagged large (`table:"Body,large"`; see mapper). New
// does no I/O; Create makes the table and the container. opts may be nil
// for the defaults; a bad value of opts is refused with an error matching
// store.ErrInvalidInput that names the field and its limit.
func New[T any](st store.Store, table, container string, opts *Options) (*Store[T], error) {
	if st == nil {
		return nil, refuse("no store")
	}
	if err := store.ValidateTableName(table); err != nil {
		return nil, fmt.Errorf("large: table: %w", err)
	}
	if err := store.ValidateContainerName(container); err != nil {
		return nil, fmt.Errorf("large: container: %w", err)
	}
	lf, err := mapper.LargeFields[T]()
	if err != nil {
		return nil, err
	}
	var zero T
	if len(lf) == 0 {
		return nil, refuse("%T has no field tagged large (`table:\"Name,large\"`): use a mapper.Repository", zero)
	}
	names, err := mapper.PropertyNames[T]()
	if err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Threshold < 0 || o.Threshold > MaxThreshold:
		return nil, refuse("Options.Threshold %d: want 0 (the default) to %d", o.Threshold, MaxThreshold)
	case o.EntityBudget < 0 || o.EntityBudget > store.MaxEntitySize:
		return nil, refuse("Options.EntityBudget %d: want 0 (the default) to %d", o.EntityBudget, store.MaxEntitySize)
	case o.Grace < 0:
		return nil, refuse("Options.Grace %s: want 0 (the default) or more", o.Grace)
	case o.Attempts < 0:
		return nil, refuse("Options.Attempts %d: want 0 (the default) or more", o.Attempts)
	case o.Parallel < 0:
		return nil, refuse("Options.Parallel %d: want 0 (the default) or more", o.Parallel)
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.EntityBudget == 0 {
		o.EntityBudget = DefaultEntityBudget
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Parallel == 0 {
		o.Parallel = DefaultParallel
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	s := &Store[T]{
		st: st, table: st.Table(table), tableName: table, container: st.Container(container),
		large: lf, byProp: map[string]*mapper.LargeField{}, props: map[string]bool{}, o: o,
		ids: keys.NewIDGenerator(o.Now, o.Random),
	}
	var seed [16]byte
	random := o.Random
	if random == nil {
		random = crand.Reader
	}
	if _, err := io.ReadFull(random, seed[:]); err != nil {
		return nil, fmt.Errorf("large: Options.Random: %w", err)
	}
	s.jitter = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
	for i := range s.large {
		s.byProp[s.large[i].Property] = &s.large[i]
		s.selLarge = append(s.selLarge, s.large[i].Property)
	}
	for _, n := range names {
		s.props[n] = true
	}
	if k := mapper.KindOf[T](); k != nil {
		s.kindProp = k.Property
	}
	return s, nil
}

// Create creates the table and the container unless they exist.
func (s *Store[T]) Create(ctx context.Context) error {
	if _, err := s.st.CreateTableIfNotExists(ctx, s.tableName); err != nil {
		return fmt.Errorf("large: create table %s: %w", s.tableName, err)
	}
	if err := s.container.Create(ctx); err != nil {
		return fmt.Errorf("large: create container %s: %w", s.container.Name(), err)
	}
	return nil
}

// Table returns the table of the entities.
func (s *Store[T]) Table() store.Table { return s.table }

// Container returns the container of the blobs.
func (s *Store[T]) Container() store.Container { return s.container }

// LargeFields returns T's fields tagged large.
func (s *Store[T]) LargeFields() []mapper.LargeField {
	return append([]mapper.LargeField(nil), s.large...)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff pauses before try n (1 for the second try): a random duration
// up to 10 ms doubling per try, at most 1 s.
func (s *Store[T]) backoff(ctx context.Context, n int) error {
	d := 10 * time.Millisecond << min(n-1, 7)
	d = min(d, time.Second)
	s.jmu.Lock()
	d = time.Duration(s.jitter.Int64N(int64(d) + 1))
	s.jmu.Unlock()
	return s.o.Sleep(ctx, d)
}

// each runs f(0..n-1) with at most Options.Parallel in flight and
// returns their errors by index.
func (s *Store[T]) each(ctx context.Context, n int, f func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	if n == 1 || s.o.Parallel == 1 {
		for i := range n {
			errs[i] = f(ctx, i)
		}
		return errs
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.o.Parallel)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(ctx, i)
		}()
	}
	wg.Wait()
	return errs
}

// firstErr returns the first non-nil error of errs.
func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
