package wide

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Properties is the map form of a value: T = Properties (or
// map[string]any) stores the map's properties as they are, with no
// struct in between.
type Properties = map[string]any

// Options tune a Wide. The zero value (or nil) gives the defaults.
type Options struct {
	// Attempts bounds the tries of one write (a write conditional on
	// store.ETagAny tries again when another writer gets in first; any
	// write tries again after a transient failure or a lost answer) and
	// the reads of a value that writers keep changing. The default is 10.
	Attempts int
	// Backoff is the pause before try n (n >= 1) after the first; the
	// default is a random duration up to 10 ms doubled n-1 times, at most
	// 1 s.
	Backoff func(n int) time.Duration
	// Random is the source of the write ids the header records and of the
	// default backoff's jitter (default math/rand/v2's Uint64, seeded at
	// random). It must be safe for concurrent use; no two writers of a
	// value may share a seed, or one may take another's write for its own.
	Random func() uint64
	// PageSize is the $top of the pages a read requests, 1 to 1,000 (0,
	// the default, for the service's maximum: one page holds every row of
	// a value).
	PageSize int
}

// Wide stores values of type T, each across the rows of one partition.
// It holds no state between calls and is safe for concurrent use; any
// number of Wide values (in any number of processes) may write the same
// values.
type Wide[T any] struct {
	table    store.Table
	asMap    bool
	prefix   string // the RowKey prefix T's kind declares
	attempts int
	backoff  func(int) time.Duration
	random   func() uint64
	pageSize int
	// props is how many properties the last read through the typed lane
	// read, which sizes the next one's slice (up to maxPropsHint).
	props atomic.Int64
}

// New returns the wide values of type T in table name of st. T is a
// struct the mapper maps (its properties may be more than 252 and its
// strings and binary values longer than one property holds) or
// Properties. It does no I/O. It fails for a T the mapper cannot map, a
// property name the layout cannot store (one starting with
// store.ReservedPrefix, or longer than MaxNameUnits), a nil st (or one holding
// a nil pointer), a bad table name and bad Options, naming the value and
// the limit.
func New[T any](st store.Store, name string, opts *Options) (*Wide[T], error) {
	if isNil(st) {
		return nil, fmt.Errorf("wide: %w", refuse(store.CodeInvalidInput, 400, "the store is nil"))
	}
	if err := store.ValidateTableName(name); err != nil {
		return nil, fmt.Errorf("wide: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	w := &Wide[T]{table: st.Table(name), attempts: o.Attempts, backoff: o.Backoff, random: o.Random, pageSize: o.PageSize}
	switch {
	case w.attempts < 0:
		return nil, fmt.Errorf("wide: %w", refuse(store.CodeInvalidInput, 400, "Options.Attempts %d is negative: it must be 0 (the default, 10) or more", o.Attempts))
	case w.attempts == 0:
		w.attempts = 10
	}
	if err := store.ValidateTop(o.PageSize); err != nil {
		return nil, fmt.Errorf("wide: Options.PageSize: %w", err)
	}
	if w.random == nil {
		w.random = rand.Uint64
	}
	if w.backoff == nil {
		w.backoff = w.jitter
	}
	if reflect.TypeFor[T]() == reflect.TypeFor[Properties]() {
		w.asMap = true
		return w, nil
	}
	names, err := mapper.PropertyNames[T]()
	if err != nil {
		return nil, fmt.Errorf("wide: %w", err)
	}
	for _, n := range names {
		if err := validName(n); err != nil {
			return nil, fmt.Errorf("wide: %s: %w", reflect.TypeFor[T](), err)
		}
	}
	if k := mapper.KindOf[T](); k != nil {
		w.prefix = k.Prefix
		if k.Property != "" {
			if err := validName(k.Property); err != nil {
				return nil, fmt.Errorf("wide: %s's kind: %w", reflect.TypeFor[T](), err)
			}
		}
	}
	return w, nil
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

// Table returns the table.
func (w *Wide[T]) Table() store.Table { return w.table }

// jitter is the default backoff: full jitter over a doubling ceiling.
func (w *Wide[T]) jitter(n int) time.Duration {
	d := time.Second
	if n-1 < 7 {
		d = min(d, 10*time.Millisecond<<(n-1))
	}
	return time.Duration(w.random() % uint64(d))
}

// wait pauses before try n, or returns the context's error.
func (w *Wide[T]) wait(ctx context.Context, n int) error {
	d := w.backoff(n)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// token is a fresh write id: 13 characters of base 32 (64 bits).
func (w *Wide[T]) token() string {
	const digits = "0123456789abcdefghjkmnpqrstvwxyz"
	r := w.random()
	b := make([]byte, 13)
	for i := range b {
		b[i] = digits[r&31]
		r >>= 5
	}
	return string(b)
}

// target names a value in messages and holds its keys.
type target struct {
	table, pk, id string
	head          string // RowKey of the header
	lower, upper  string // the RowKey range of its rows
}

// locate checks a value's keys: the PartitionKey, and the RowKeys of its
// first and last possible rows.
func (w *Wide[T]) locate(pk, id string) (target, error) {
	t := target{table: w.table.Name(), pk: pk, id: id}
	if w.prefix != "" && !strings.HasPrefix(id, w.prefix) {
		return t, t.wrap(refuse(store.CodeInvalidInput, 400,
			"id %q does not start with %q, the RowKey prefix of %s's kind", truncate(id), w.prefix, reflect.TypeFor[T]()))
	}
	if !utf8.ValidString(id) {
		return t, t.wrap(refuse(store.CodeInvalidInput, 400, "id %q is not valid UTF-8", id))
	}
	var err error
	if t.head, err = rowKey(id, 0); err != nil {
		return t, t.wrap(refuse(store.CodeKeyValueTooLarge, 400, "id %q: %v", truncate(id), err))
	}
	last, err := rowKey(id, MaxRows-1)
	if err == nil {
		err = store.ValidateKeys(pk, last)
	}
	if err != nil {
		return t, t.wrap(err)
	}
	rng, err := keys.PrefixOf(id)
	if err != nil {
		return t, t.wrap(err)
	}
	t.lower, t.upper = rng.Lower, rng.Upper
	return t, nil
}

func (t *target) wrap(err error) error {
	return fmt.Errorf("wide: value %q of partition %q in table %s: %w", truncate(t.id), truncate(t.pk), t.table, err)
}

// encode turns *v into its properties.
func (w *Wide[T]) encode(v *T) (Properties, error) {
	if v == nil {
		return nil, refuse(store.CodeInvalidInput, 400, "the value is a nil pointer")
	}
	if w.asMap {
		m := any(*v).(Properties)
		if m == nil {
			return nil, refuse(store.CodeInvalidInput, 400, "the value is a nil map")
		}
		return m, nil
	}
	return mapper.EncodeUnbounded(v)
}

// decode turns the properties read back into a T.
func (w *Wide[T]) decode(t *target, etag store.ETag, props Properties) (T, error) {
	var v T
	if w.asMap {
		*any(&v).(*Properties) = props
		return v, nil
	}
	err := mapper.Decode(store.Entity{PartitionKey: t.pk, RowKey: t.id, ETag: etag, Properties: props}, &v)
	return v, err
}
