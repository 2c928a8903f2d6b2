package indexentity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Placement says where the lists live: the design guide's three options.
type Placement int

const (
	// SamePartition keeps each list in index entities of the entities' own
	// partition, changed in the same entity group transaction as the
	// entity: always exact, but a list covers one partition ("every Jones
	// of Sales") and its writers contend on its index entity.
	SamePartition Placement = iota
	// InBlobs keeps each list in a blob of Options.Container (one blob per
	// list value), kept eventually consistent through Options.Engine: a
	// list of any length covering the whole table.
	InBlobs
	// SeparatePartition keeps each list in index entities of a partition
	// of its own in Options.IndexTable, kept eventually consistent
	// through Options.Engine: lists covering the whole table, without
	// blobs, each value's writers contending only on their own list.
	SeparatePartition
)

// String names the placement.
func (p Placement) String() string {
	switch p {
	case SamePartition:
		return "same partition"
	case InBlobs:
		return "blobs"
	case SeparatePartition:
		return "separate partition"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// Options configure a Table. The zero value keeps the lists in the
// entities' partitions (SamePartition) with the default layout and
// retries.
type Options struct {
	// Placement is where the lists live.
	Placement Placement
	// Engine carries the list changes of InBlobs and SeparatePartition
	// from the entity's write to the list: New registers the step that
	// applies them (Engine.Handle), so every process whose workers run
	// the engine must build the Table too. Run the engine's workers and
	// its Sweep of the entity table as usual.
	Engine *eventual.Engine
	// IndexTable holds the index entities of SeparatePartition: one
	// partition per list value. It may be the entities' table when no
	// entity partition is named like a list (keys.Join(list, value)).
	IndexTable string
	// Container holds the blobs of InBlobs, named list/escaped value.
	Container string
	// Layout shapes the index entities (not the blobs).
	Layout Layout
	// Attempts bounds the tries of a write that meets a concurrent writer
	// of the same index entity (or, for InBlobs and SeparatePartition, of
	// the same entity partition), default 16; then it fails with an error
	// matching ErrContention, nothing applied. It also bounds a list
	// step's tries within one run of the engine's worker, which runs the
	// step again later when they run out.
	Attempts int
	// Backoff is the first pause between tries, doubling up to MaxBackoff,
	// each drawn at random from its upper half (defaults 10 ms and 1 s).
	Backoff, MaxBackoff time.Duration
	// Concurrency is how many entities a lookup reads at once (default 8).
	Concurrency int
	// PageSize is how many ids a lookup reads entities for before it
	// yields them (default 100).
	PageSize int
	// Sleep pauses between tries (default a timer that ends with ctx) and
	// Random draws the jitter (default math/rand/v2); tests inject both.
	Sleep  func(ctx context.Context, d time.Duration) error
	Random func() uint64
}

// ErrContention matches the error of a write that lost the race for an
// index entity (or an entity partition) on every attempt it was allowed.
// Nothing of it was applied. Such an error matches partition.ErrConflict
// too, the patterns' race to retry: try again later.
var ErrContention = errors.New("indexentity: too many concurrent writers")

// ErrCorrupt matches the error of a read that met an index entity or a
// list blob this package did not write.
var ErrCorrupt = errors.New("indexentity: malformed list")

// Spec declares one list of T: the value an entity is listed under.
type Spec[T any] struct {
	name  string
	value func(*T) string
}

// List declares a list of T named name (1 to 32 letters, digits and
// underscores): every entity is listed under value(entity), and an
// entity whose value is "" is not listed.
func List[T any](name string, value func(*T) string) Spec[T] {
	return Spec[T]{name: name, value: value}
}

// Table is a table of T whose entities are listed by value in index
// entities (or blobs). It is safe for concurrent use.
type Table[T any] struct {
	st      store.Store
	name    string
	table   store.Table
	repo    *mapper.Repository[T]
	specs   []Spec[T]
	o       Options
	lists   lists
	handler eventual.StepKind  // the engine step's kind (InBlobs, SeparatePartition)
	heads   *partition.Options // the entities' heads (SamePartition)
}

// New returns the table name of st for T, keeping the lists specs
// declare where opts.Placement says. T must declare a kind with a RowKey
// prefix (mapper.Kind): index entities, and the fence and outbox rows of
// the engine, share the entities' partitions, and the prefix is what
// keeps a query of T from reading them. New does no I/O. It fails, naming
// the value, for a bad table or container name, a missing engine or index
// table, an empty, repeated or malformed list name, a list name whose
// index entities would sort inside T's prefix, a nil value function, and
// options out of range.
func New[T any](st store.Store, name string, opts *Options, specs ...Spec[T]) (*Table[T], error) {
	if st == nil {
		return nil, refuse("the store is nil")
	}
	if err := store.ValidateTableName(name); err != nil {
		return nil, err
	}
	if _, err := mapper.PropertyNames[T](); err != nil {
		return nil, err
	}
	kind := mapper.KindOf[T]()
	if kind == nil || kind.Prefix == "" {
		var zero T
		return nil, refuse("%T declares no RowKey prefix: declare one with TableKind (mapper.Kind{Prefix: ...}) so that queries of its entities never read the index entities and reserved rows beside them", zero)
	}
	var given Options
	if opts != nil {
		given = *opts
	}
	o, err := resolve(given)
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, refuse("no list declared")
	}
	if o.Placement == SamePartition && 1+3*len(specs) > store.MaxBatchActions {
		return nil, refuse("%d lists: a write of one entity could take %d actions, over the transaction's %d", len(specs), 1+3*len(specs), store.MaxBatchActions)
	}
	if o.Placement == SamePartition && strings.HasPrefix(kind.Prefix, headMark) {
		var zero T
		return nil, refuse("%T's RowKey prefix %q starts with %q, which marks the entities' head rows of a SamePartition table: choose another", zero, kind.Prefix, headMark)
	}
	seen := map[string]bool{}
	for _, s := range specs {
		if !naming.Valid(s.name) {
			return nil, refuse("list name %q must be 1 to 32 letters, digits and underscores", s.name)
		}
		if seen[s.name] {
			return nil, refuse("list %q is declared twice", s.name)
		}
		seen[s.name] = true
		if s.value == nil {
			return nil, refuse("list %q has no value function", s.name)
		}
		if o.Placement == SamePartition {
			p, _ := keys.Join(s.name)
			if strings.HasPrefix(p, kind.Prefix) || strings.HasPrefix(kind.Prefix, p) {
				return nil, refuse("list %q: its index entities' RowKeys (%q...) would overlap the entities' prefix %q", s.name, p, kind.Prefix)
			}
		}
	}
	x := &Table[T]{st: st, name: name, table: st.Table(name), repo: mapper.NewRepository[T](st, name), specs: specs, o: o}
	switch o.Placement {
	case SamePartition:
		x.lists = &tableLists{tbl: x.table, layout: o.Layout, samePartition: true}
		x.heads = &partition.Options{HeadPrefix: headPrefix, Attempts: o.Attempts, Backoff: x.delay, Sleep: o.Sleep,
			NewID: keys.NewIDGenerator(nil, nil).New}
	case SeparatePartition:
		x.lists = &tableLists{tbl: st.Table(o.IndexTable), layout: o.Layout}
	case InBlobs:
		x.lists = &blobLists{c: st.Container(o.Container)}
	}
	if o.Engine != nil {
		x.handler = eventual.StepKind("indexentity " + name)
		if err := o.Engine.Handle(x.handler, eventual.StepHandler{Check: x.checkStep, Run: x.step}); err != nil {
			return nil, fmt.Errorf("indexentity: %w", err)
		}
	}
	return x, nil
}

// resolve checks opts and fills in the defaults.
func resolve(o Options) (Options, error) {
	switch o.Placement {
	case SamePartition:
		if o.Engine != nil || o.IndexTable != "" || o.Container != "" {
			return o, refuse("Options.Engine, IndexTable and Container are for InBlobs and SeparatePartition: a SamePartition list changes with its entity")
		}
	case SeparatePartition:
		if o.Engine == nil {
			return o, refuse("SeparatePartition needs Options.Engine to carry the list changes")
		}
		if err := store.ValidateTableName(o.IndexTable); err != nil {
			return o, fmt.Errorf("indexentity: Options.IndexTable: %w", err)
		}
	case InBlobs:
		if o.Engine == nil {
			return o, refuse("InBlobs needs Options.Engine to carry the list changes")
		}
		if err := store.ValidateContainerName(o.Container); err != nil {
			return o, fmt.Errorf("indexentity: Options.Container: %w", err)
		}
	default:
		return o, refuse("unknown %s", o.Placement)
	}
	l, err := o.Layout.resolve()
	if err != nil {
		return o, err
	}
	o.Layout = l
	for _, f := range []struct {
		name string
		v    int64
	}{{"Attempts", int64(o.Attempts)}, {"Backoff", int64(o.Backoff)}, {"MaxBackoff", int64(o.MaxBackoff)},
		{"Concurrency", int64(o.Concurrency)}, {"PageSize", int64(o.PageSize)}} {
		if f.v < 0 {
			return o, refuse("Options.%s is %d: it must be 0 (the default) or positive", f.name, f.v)
		}
	}
	if o.Attempts == 0 {
		o.Attempts = 16
	}
	if o.Backoff == 0 {
		o.Backoff = 10 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = time.Second
	}
	if o.MaxBackoff < o.Backoff {
		return o, refuse("Options.MaxBackoff %s is below Options.Backoff %s", o.MaxBackoff, o.Backoff)
	}
	if o.Concurrency == 0 {
		o.Concurrency = 8
	}
	if o.PageSize == 0 {
		o.PageSize = 100
	}
	if o.Sleep == nil {
		o.Sleep = wait.Sleep
	}
	if o.Random == nil {
		o.Random = rand.Uint64
	}
	return o, nil
}

// pause waits before try n (n >= 1): delay(n).
func (x *Table[T]) pause(ctx context.Context, n int) error {
	return x.o.Sleep(ctx, x.delay(n))
}

// delay is the pause before try n (n >= 1): a random duration in the
// upper half of Backoff doubled n-1 times, capped at MaxBackoff. The
// heads' commit loop pauses by it too.
func (x *Table[T]) delay(n int) time.Duration {
	d := x.o.Backoff << min(max(n-1, 0), 20)
	if d > x.o.MaxBackoff || d <= 0 {
		d = x.o.MaxBackoff
	}
	half := d / 2
	if half > 0 {
		d = half + time.Duration(x.o.Random()%uint64(half))
	}
	return d
}

// refuse builds a refusal of tablekit's own checks: nothing was sent.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "indexentity: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// refuseFor builds a refusal with its cause.
func refuseFor(cause error, format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "indexentity: "+format, args...)
	e.Source = store.SourceClient
	e.Err = cause
	return e
}

// Repository returns the typed repository of the entities, for reads;
// write through the Table so that the lists follow.
func (x *Table[T]) Repository() *mapper.Repository[T] { return x.repo }

// Placement returns where the lists live.
func (x *Table[T]) Placement() Placement { return x.o.Placement }

// Get reads the entity with keys (pk, rk), with its ETag.
func (x *Table[T]) Get(ctx context.Context, pk, rk string) (T, error) { return x.repo.Get(ctx, pk, rk) }

// spec returns the list named name.
func (x *Table[T]) spec(name string) (*Spec[T], error) {
	for i := range x.specs {
		if x.specs[i].name == name {
			return &x.specs[i], nil
		}
	}
	names := make([]string, len(x.specs))
	for i, s := range x.specs {
		names[i] = s.name
	}
	return nil, refuse("no list %q (lists: %s)", name, strings.Join(names, ", "))
}

// listRef names one list: a list name and a value, and for SamePartition
// the entities' partition.
type listRef struct {
	name, value, pk string
}

func (r listRef) String() string {
	if r.pk != "" {
		return fmt.Sprintf("list %s %q of partition %q", r.name, naming.Cut(r.value), naming.Cut(r.pk))
	}
	return fmt.Sprintf("list %s %q", r.name, naming.Cut(r.value))
}

// refOf returns the list of entity (pk) holding value, checked against the
// key and name limits of where it is stored: nothing is written for a
// value that cannot be.
func (x *Table[T]) refOf(name, value, pk string) (listRef, error) {
	r := listRef{name: name, value: value}
	if x.o.Placement == SamePartition {
		r.pk = pk
	}
	if err := x.lists.check(r); err != nil {
		return r, err
	}
	return r, nil
}
