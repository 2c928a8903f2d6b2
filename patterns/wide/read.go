package wide

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// Snapshot is one version of a value as read.
type Snapshot[T any] struct {
	// Value is the value.
	Value T
	// ETag is the header's ETag: pass it to Put or Delete to write only if
	// the value is still this version.
	ETag store.ETag
	// Version counts the writes the value has had since it was first
	// created, deletes included.
	Version int64
	// Rows is the number of rows the value takes, header included.
	Rows int
	// Attempts is how many times the value was read (1 unless a write
	// landed between the pages of a read).
	Attempts int
	// Requests counts the requests made: one query page each.
	Requests int
}

// Get reads the value id of partition pk and its ETag (which T's etag
// field, if it has one, receives too). A missing or deleted value is an
// error matching store.ErrNotFound. It costs one range query (see Read).
func (w *Wide[T]) Get(ctx context.Context, pk, id string) (T, store.ETag, error) {
	s, err := w.Read(ctx, pk, id)
	if err != nil {
		var zero T
		return zero, "", err
	}
	return s.Value, s.ETag, nil
}

// Read reads the value id of partition pk: one range query over the
// value's rows (RowKeys from keys.Join(id, "00") to keys.Join(id, "99")),
// which reads no other row of the partition. A value's rows normally come
// in one page; when they come in several, a write may land in between,
// so Read checks that every row carries the version of the header (which
// sorts first) and reads again when one does not, up to Options.Attempts
// times (then an error matching ErrInconsistentRead). It never returns a
// value assembled from two versions.
func (w *Wide[T]) Read(ctx context.Context, pk, id string) (*Snapshot[T], error) {
	t, err := w.locate(pk, id)
	if err != nil {
		return nil, err
	}
	q := store.Query{Filter: filter.PK.Eq(pk).And(filter.RK.Ge(t.lower), filter.RK.Lt(t.upper)).String(), Top: w.pageSize}
	requests, why := 0, ""
	for n := 1; n <= w.attempts; n++ {
		if n > 1 {
			if err := w.wait(ctx, n-1); err != nil {
				return nil, t.wrap(err)
			}
		}
		rows, err := w.pages(ctx, q, &requests)
		if err != nil {
			return nil, t.wrap(err)
		}
		a, found, torn, err := assemble(id, rows)
		switch {
		case err != nil:
			return nil, t.wrap(err)
		case torn != "":
			why = torn
			continue
		case !found:
			return nil, notFound(t.table, pk, id)
		}
		v, err := w.decode(&t, a.h.etag, a.props)
		if err != nil {
			return nil, t.wrap(err)
		}
		return &Snapshot[T]{Value: v, ETag: a.h.etag, Version: a.h.version, Rows: a.h.rows, Attempts: n, Requests: requests}, nil
	}
	return nil, t.wrap(fmt.Errorf("%w: %d attempts, the last one because %s", ErrInconsistentRead, w.attempts, why))
}

// pages runs a query to its end and returns its rows. Over a
// store.TypedTable the rows' properties are read straight into one slice
// for all of them, with no map per row.
func (w *Wide[T]) pages(ctx context.Context, q store.Query, requests *int) ([]row, error) {
	if tt, ok := driver.Typed(w.table); ok {
		rr := &rowsReader{props: make([]prop, 0, min(w.props.Load(), maxPropsHint))}
		defer func() { w.props.Store(int64(len(rr.props))) }()
		next := func() store.EntityReader {
			rr.start()
			return rr
		}
		for {
			*requests++
			cont, _, err := tt.QueryInto(ctx, q, next)
			if err != nil {
				return nil, err
			}
			rr.close()
			if cont == "" {
				return rr.rows, nil
			}
			q.Continuation = cont
		}
	}
	var rows []row
	for {
		*requests++
		page, err := w.table.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		for i := range page.Entities {
			rows = append(rows, rowOf(&page.Entities[i]))
		}
		if page.Continuation == "" {
			return rows, nil
		}
		q.Continuation = page.Continuation
	}
}

// rowsReader reads the entities of query pages into rows, every row's
// properties appended to one slice.
type rowsReader struct {
	rows  []row
	props []prop
	names []byte // the chunk names are copied into
	from  int    // where the current row's properties start in props
	open  bool   // the last row is still being read
}

// start begins a row, closing the one before.
func (rr *rowsReader) start() {
	rr.close()
	rr.rows = append(rr.rows, row{})
	rr.from, rr.open = len(rr.props), true
}

// close ends the current row: its properties are props[from:].
func (rr *rowsReader) close() {
	if rr.open {
		rr.rows[len(rr.rows)-1].props = rr.props[rr.from:len(rr.props):len(rr.props)]
		rr.open = false
	}
}

func (rr *rowsReader) cur() *row { return &rr.rows[len(rr.rows)-1] }

// add appends property name (copied: a reader's names are valid only
// during the call) to the current row.
func (rr *rowsReader) add(name string, v any) error {
	name = rr.keep(name)
	rr.props = append(rr.props, prop{name, v})
	rr.cur().own(name, v)
	return nil
}

// keep returns a copy of name. The copies share chunks of a few KiB, each
// written once and never changed, instead of one allocation a name.
func (rr *rowsReader) keep(name string) string {
	if len(name) == 0 {
		return ""
	}
	if cap(rr.names)-len(rr.names) < len(name) {
		rr.names = make([]byte, 0, max(nameChunk, len(name)))
	}
	at := len(rr.names)
	rr.names = append(rr.names, name...)
	return unsafe.String(&rr.names[at], len(name))
}

// maxPropsHint bounds the slice a read starts with, sized by the read
// before it: a value of thousands of properties grows its own instead of
// making every later read of a small value start that large.
const maxPropsHint = 1024

// nameChunk is the size of the chunks rowsReader copies names into: the
// names of a row of 252 properties of 30 bytes or less.
const nameChunk = 8 << 10

func (rr *rowsReader) SetPartitionKey(pk string) error       { rr.cur().pk = pk; return nil }
func (rr *rowsReader) SetRowKey(rk string) error             { rr.cur().rk = rk; return nil }
func (rr *rowsReader) SetTimestamp(time.Time) error          { return nil }
func (rr *rowsReader) SetETag(etag store.ETag) error         { rr.cur().etag = etag; return nil }
func (rr *rowsReader) SetString(name, v string) error        { return rr.add(name, v) }
func (rr *rowsReader) SetBinary(name string, v []byte) error { return rr.add(name, v) }
func (rr *rowsReader) SetBool(name string, v bool) error     { return rr.add(name, v) }
func (rr *rowsReader) SetInt32(name string, v int32) error   { return rr.add(name, v) }
func (rr *rowsReader) SetInt64(name string, v int64) error   { return rr.add(name, v) }
func (rr *rowsReader) SetDouble(name string, v float64) error {
	return rr.add(name, v)
}
func (rr *rowsReader) SetTime(name string, v time.Time) error  { return rr.add(name, v) }
func (rr *rowsReader) SetGUID(name string, v store.GUID) error { return rr.add(name, v) }

// IDs returns the ids of the values stored in partition pk (of T's kind,
// when T declares a RowKey prefix), in RowKey order. It reads only the
// headers, which the package's own property TkWideRows makes recognisable
// among the other rows of the partition, but the service scans the
// partition's rows to find them (of the kind's RowKey range, when T has
// one). Deleted values are left out.
func (w *Wide[T]) IDs(ctx context.Context, pk string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := store.ValidateKeys(pk, ""); err != nil {
			yield("", fmt.Errorf("wide: %w", err))
			return
		}
		c := filter.PK.Eq(pk).And(filter.Prop(propRows).Gt(int32(0)))
		if w.prefix != "" {
			esc, err := keys.Escape(w.prefix)
			if err != nil {
				yield("", fmt.Errorf("wide: %w", err))
				return
			}
			c = c.And(filter.RK.InRange(keys.PrefixRange(esc)))
		}
		q := store.Query{Filter: c.String(), Select: []string{propRows}}
		for e, err := range store.All(ctx, w.table, q) {
			if err != nil {
				yield("", fmt.Errorf("wide: list the values of partition %q in table %s: %w", pk, w.table.Name(), err))
				return
			}
			parts, err := keys.Split(e.RowKey)
			if err != nil || len(parts) != 2 || parts[1] != "00" || !strings.HasPrefix(parts[0], w.prefix) {
				if !yield("", corrupt(&e, "the row has the header property %s but its RowKey is not a header's", propRows)) {
					return
				}
				continue
			}
			if !yield(parts[0], nil) {
				return
			}
		}
	}
}

// readHeader reads the header's own properties and the state of the
// value's head row: one point read.
func (w *Wide[T]) readHeader(ctx context.Context, t *target, hd *partition.Head) (header, partition.Fence, error) {
	e, err := w.table.Get(ctx, t.pk, t.head, &store.GetOptions{Select: headerSelect})
	if errors.Is(err, store.ErrNotFound) && store.Code(err) == store.CodeResourceNotFound {
		return header{}, hd.Absent(), nil
	}
	if err != nil {
		return header{}, partition.Fence{}, err
	}
	h, err := parseHeader(&e)
	if err != nil {
		return h, partition.Fence{}, err
	}
	f, err := hd.FenceOf(&e)
	return h, f, err
}
