package logdata

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"time"

	"github.com/tablekit/tablekit/store"
)

// ErrMalformed is matched by the error of a blob whose content is not
// records in this package's format.
var ErrMalformed = errors.New("logdata: malformed log blob")

// ReaderOptions tune a Reader; a nil *ReaderOptions, and every zero
// field, takes the default written beside the field.
type ReaderOptions struct {
	// Period is the writers' (Hourly by default).
	Period Period
	// ChunkSize is the most bytes one ranged read fetches; 0 means 4 MiB.
	ChunkSize int
}

// Reader reads the records of a time range back, from the blobs of the
// periods the range covers.
type Reader struct {
	c      store.Container
	prefix string
	o      ReaderOptions
	chunk  int64
}

// NewReader returns a reader of the log blobs under prefix (the writers')
// in c. opts may be nil for the defaults; a bad prefix or option value is
// refused with an error matching store.ErrInvalidInput that names it and
// its limit.
func NewReader(c store.Container, prefix string, opts *ReaderOptions) (*Reader, error) {
	if c == nil {
		return nil, invalid("the container is nil")
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	var o ReaderOptions
	if opts != nil {
		o = *opts
	}
	if !o.Period.valid() {
		return nil, invalid("ReaderOptions.Period %v is not Hourly or Daily", o.Period)
	}
	switch {
	case o.ChunkSize == 0:
		o.ChunkSize = 4 << 20
	case o.ChunkSize < 0:
		return nil, invalid("ReaderOptions.ChunkSize %d is negative: 0 (the default, 4 MiB) or more", o.ChunkSize)
	}
	return &Reader{c: c, prefix: prefix, o: o, chunk: int64(o.ChunkSize)}, nil
}

// checkRange refuses an empty or reversed range.
func checkRange(from, to time.Time) error {
	if from.IsZero() || to.IsZero() || !from.Before(to) {
		return invalid("time range [%s, %s) is empty or reversed: from must be before to, and neither zero", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	return nil
}

// Blobs lists the log blobs of the periods that overlap [from, to): one
// listing per period (and per 5,000 blobs), periods in time order, blobs
// of a period in name order. Blobs under the prefix whose names do not
// follow the scheme (<id>-<8 digits>.log) are not log blobs and are
// skipped.
func (r *Reader) Blobs(ctx context.Context, from, to time.Time) iter.Seq2[store.BlobProps, error] {
	return func(yield func(store.BlobProps, error) bool) {
		if err := checkRange(from, to); err != nil {
			yield(store.BlobProps{}, err)
			return
		}
		for p := r.o.Period.start(from); p.Before(to); p = r.o.Period.next(p) {
			blobs, err := r.list(ctx, p)
			if err != nil {
				yield(store.BlobProps{}, err)
				return
			}
			for _, b := range blobs {
				if !yield(b, nil) {
					return
				}
			}
		}
	}
}

// list returns the log blobs of the period starting at p.
func (r *Reader) list(ctx context.Context, p time.Time) ([]store.BlobProps, error) {
	folder := r.o.Period.folder(r.prefix, p)
	var out []store.BlobProps
	opts := store.BlobListOptions{Prefix: folder}
	for {
		page, err := r.c.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("logdata: listing %s: %w", folder, err)
		}
		for _, b := range page.Blobs {
			leaf := b.Name[len(folder):]
			if path.Base(leaf) != leaf {
				continue // a deeper name: another period's folder or not ours
			}
			if _, _, ok := parseLeaf(leaf); ok {
				out = append(out, b)
			}
		}
		if page.NextMarker == "" {
			return out, nil
		}
		opts.Marker = page.NextMarker
	}
}

// Records returns the records with from <= Time < to, in time order
// (records of equal time in blob name order, then in the order written),
// and stops at the first error. Each period's blobs are read together,
// ChunkSize bytes at a time from each, and merged by time; what writers
// append after a blob was listed is not returned.
func (r *Reader) Records(ctx context.Context, from, to time.Time) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if err := checkRange(from, to); err != nil {
			yield(Record{}, err)
			return
		}
		from, to = from.UTC(), to.UTC()
		for p := r.o.Period.start(from); p.Before(to); p = r.o.Period.next(p) {
			blobs, err := r.list(ctx, p)
			if err != nil {
				yield(Record{}, err)
				return
			}
			if !r.merge(ctx, blobs, from, to, yield) {
				return
			}
		}
	}
}

// merge yields the records in [from, to) of one period's blobs in time
// order; it reports whether to go on.
func (r *Reader) merge(ctx context.Context, blobs []store.BlobProps, from, to time.Time, yield func(Record, error) bool) bool {
	h := make(cursors, 0, len(blobs))
	for i, b := range blobs {
		if b.Size == 0 {
			continue
		}
		c := &cursor{r: r, name: b.Name, size: b.Size, order: i}
		ok, err := c.advance(ctx, from)
		if err != nil {
			yield(Record{}, err)
			return false
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		if !c.rec.Time.Before(to) {
			return true // every other head is at or after it
		}
		if !yield(c.rec, nil) {
			return false
		}
		ok, err := c.advance(ctx, from)
		if err != nil {
			yield(Record{}, err)
			return false
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return true
}

// cursor reads the records of one blob in order, a chunk at a time.
type cursor struct {
	r     *Reader
	name  string
	size  int64 // as listed: the cursor reads no further
	order int   // the blob's place in the listing, for ties
	off   int64 // bytes fetched so far
	used  int64 // bytes of them consumed as lines
	buf   []byte
	rec   Record
}

// advance moves to the next record at or after from; ok is false at the
// end of the blob.
func (c *cursor) advance(ctx context.Context, from time.Time) (ok bool, err error) {
	for {
		if i := bytes.IndexByte(c.buf, '\n'); i >= 0 {
			line := c.buf[:i]
			at := c.used
			c.buf = c.buf[i+1:]
			c.used += int64(i) + 1
			t, data, err := parseRecord(line)
			if err != nil {
				return false, fmt.Errorf("%w: blob %s, the line at offset %d: %v", ErrMalformed, c.name, at, err)
			}
			if t.Before(from) {
				continue
			}
			c.rec = Record{Time: t, Data: data, Blob: c.name}
			return true, nil
		}
		if c.off >= c.size {
			if len(c.buf) > 0 {
				return false, fmt.Errorf("%w: blob %s ends at offset %d without a line feed", ErrMalformed, c.name, c.size)
			}
			return false, nil
		}
		data, _, err := c.r.c.GetRange(ctx, c.name, c.off, min(c.r.chunk, c.size-c.off))
		if err != nil {
			return false, fmt.Errorf("logdata: reading %s at offset %d: %w", c.name, c.off, err)
		}
		if len(data) == 0 {
			return false, fmt.Errorf("logdata: reading %s at offset %d: no data, though it was listed with %d bytes", c.name, c.off, c.size)
		}
		c.off += int64(len(data))
		// Keep the unconsumed tail; copy it out of the old chunk.
		c.buf = append(append(make([]byte, 0, len(c.buf)+len(data)), c.buf...), data...)
	}
}

// cursors is a min-heap of blob cursors by their current record's time.
type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	if !h[i].rec.Time.Equal(h[j].rec.Time) {
		return h[i].rec.Time.Before(h[j].rec.Time)
	}
	return h[i].order < h[j].order
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
