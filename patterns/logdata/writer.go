package logdata

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
)

// ErrClosed is the error of a Write to a closed Writer.
var ErrClosed = errors.New("logdata: the writer is closed")

// Options tune a Writer; a nil *Options, and every zero field, takes the
// default written beside the field.
type Options struct {
	// ID names the writer in its blob names. Two writers (processes) that
	// write at once must have different ids; a writer never writes a blob
	// it did not create. 1 to 64 ASCII letters, digits, '-', '_' or '.';
	// empty means 12 random hex digits.
	ID string
	// Period is how much time one blob's records span at most (Hourly by
	// default). A reader must use the same.
	Period Period
	// BlockSize is the most bytes one append sends: the buffer is flushed
	// when the next record would not fit, and no record's line may be
	// larger. 0 means store.MaxAppendBlockSizeLegacy (4 MiB, the limit
	// every service version accepts); at most store.MaxAppendBlockSize.
	BlockSize int
	// MaxBlobSize rolls over to a new blob when the next block would take
	// the current one past this many bytes. 0 means no limit but the
	// service's (MaxBlocks blocks).
	MaxBlobSize int64
	// MaxBlocks rolls over to a new blob after this many blocks; 0 means
	// store.MaxAppendBlocks (50,000), the service's limit, which is also
	// the most it may be.
	MaxBlocks int
	// MaxDelay flushes the buffer at the first Write that finds its oldest
	// record this much older than the new one. 0 flushes only when a block
	// is full, on Flush and on Close.
	MaxDelay time.Duration
	// MaxBuffered is how many bytes may wait (buffered or failed to send)
	// before Write refuses new records with ErrBacklog. 0 means 16 blocks.
	MaxBuffered int
	// Clock stamps the records; nil means time.Now.
	Clock func() time.Time
}

// ErrBacklog is the error of a Write while MaxBuffered bytes wait to be
// sent: appends are failing or slower than the writes.
var ErrBacklog = errors.New("logdata: too many bytes wait to be appended")

// Stats count what a Writer did.
type Stats struct {
	// Records and Bytes count the records appended and the bytes of their
	// lines; Blocks the appends that committed them; Blobs the blobs the
	// writer created.
	Records, Bytes, Blocks, Blobs int64
	// Rollovers counts new blobs started because the current one was
	// full (MaxBlobSize, MaxBlocks or the service's block limit), and
	// Periods those started for a new period.
	Rollovers, Periods int64
	// Settled counts blocks whose lost answer the writer settled later,
	// by reading the blob back before sending them again.
	Settled int64
	// Pending is the number of records buffered or waiting to be sent.
	Pending int
}

// batch is one block's worth of records of one period.
type batch struct {
	period  time.Time
	first   time.Time
	data    []byte
	records int
	// maybe is set when a send's outcome was unknown: the block may be at
	// offset at in blob sentTo.
	maybe  bool
	sentTo string
	at     int64
}

// Writer appends log records to time-named append blobs, a block at a
// time. It is safe for concurrent use. Records are buffered: call Flush
// (on a timer, say) and Close.
type Writer struct {
	c      store.Container
	prefix string
	o      Options

	mu       sync.Mutex // guards the fields below it
	cur      *batch
	queue    []*batch // full batches, in order
	buffered int
	last     time.Time
	closed   bool
	stats    Stats
	lastErr  error  // of the last send
	spare    []byte // the buffer of the last batch sent, for reuse

	sendMu sync.Mutex // one sender at a time; guards the blob state
	blob   string     // the blob being appended to; "" for none
	period time.Time  // its period
	pos    int64      // its length
	blocks int        // its committed blocks
	seq    int        // the last sequence number used
}

// NewWriter returns a writer of log blobs into container c (which must
// exist), under prefix, which starts every blob name, without a leading
// or trailing slash: "logs/web". opts may be nil for the defaults; a bad
// prefix or option value is refused with an error matching
// store.ErrInvalidInput that names it and its limit. It does no I/O: the
// first blob is created by the first append.
func NewWriter(c store.Container, prefix string, opts *Options) (*Writer, error) {
	if c == nil {
		return nil, invalid("the container is nil")
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ID == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("logdata: making a writer id: %w", err)
		}
		o.ID = hex.EncodeToString(b[:])
	}
	if err := validateID(o.ID); err != nil {
		return nil, err
	}
	if !o.Period.valid() {
		return nil, invalid("Options.Period %v is not Hourly or Daily", o.Period)
	}
	switch {
	case o.BlockSize == 0:
		o.BlockSize = store.MaxAppendBlockSizeLegacy
	case o.BlockSize < 64 || o.BlockSize > store.MaxAppendBlockSize:
		return nil, invalid("Options.BlockSize %d is out of range: 64 to %d bytes (the service's limit per append)", o.BlockSize, store.MaxAppendBlockSize)
	}
	switch {
	case o.MaxBlocks == 0:
		o.MaxBlocks = store.MaxAppendBlocks
	case o.MaxBlocks < 1 || o.MaxBlocks > store.MaxAppendBlocks:
		return nil, invalid("Options.MaxBlocks %d is out of range: 1 to %d (the service's limit per append blob)", o.MaxBlocks, store.MaxAppendBlocks)
	}
	if o.MaxBlobSize < 0 {
		return nil, invalid("Options.MaxBlobSize %d is negative: 0 (no limit) or more", o.MaxBlobSize)
	}
	if o.MaxDelay < 0 {
		return nil, invalid("Options.MaxDelay %s is negative: 0 (flush only when full) or more", o.MaxDelay)
	}
	switch {
	case o.MaxBuffered == 0:
		o.MaxBuffered = 16 * o.BlockSize
	case o.MaxBuffered < o.BlockSize:
		return nil, invalid("Options.MaxBuffered %d is smaller than BlockSize %d: at least one block", o.MaxBuffered, o.BlockSize)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return &Writer{c: c, prefix: prefix, o: o}, nil
}

// ID returns the writer's id, as its blob names carry it.
func (w *Writer) ID() string { return w.o.ID }

// Stats returns what the writer did so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	for _, b := range w.queue {
		s.Pending += b.records
	}
	if w.cur != nil {
		s.Pending += w.cur.records
	}
	return s
}

// Write stamps data with the writer's clock (never earlier than its last
// record) and buffers it. When the buffer holds a full block, a block of
// another period, or a record older than MaxDelay, Write sends what is
// buffered before it returns. A nil error means the record is accepted:
// when that send fails, the records stay buffered and the next Write,
// Flush or Close sends them again (Flush and Close report the failure).
// An error means the record was not accepted: do not expect it written.
//
// A record whose line (time, tab, escaped data, line feed) is larger than
// BlockSize is refused with an error matching store.ErrTooLarge; any
// bytes are allowed in data. While MaxBuffered bytes wait, Write refuses
// records with ErrBacklog, wrapping the last send's error.
func (w *Writer) Write(ctx context.Context, data []byte) error {
	if err := store.CheckContext(ctx); err != nil {
		return err
	}
	n := encodedLen(data)
	if n > w.o.BlockSize {
		e := store.Errorf(store.CodeRequestBodyTooLarge, 413,
			"logdata: a record of %d bytes is a line of %d bytes, over the block size of %d bytes: a record must fit in one append block", len(data), n, w.o.BlockSize)
		e.Source = store.SourceClient
		return e
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if w.buffered+n > w.o.MaxBuffered {
		last, waiting := w.lastErr, w.buffered
		w.mu.Unlock()
		if last == nil {
			return fmt.Errorf("%w: %d bytes wait, MaxBuffered is %d: appends are slower than the writes", ErrBacklog, waiting, w.o.MaxBuffered)
		}
		return fmt.Errorf("%w: %d bytes wait, MaxBuffered is %d; the last append failed: %w", ErrBacklog, waiting, w.o.MaxBuffered, last)
	}
	t := w.o.Clock().UTC()
	if t.Before(w.last) {
		t = w.last
	}
	w.last = t
	p := w.o.Period.start(t)
	flush := false
	if c := w.cur; c != nil && (!c.period.Equal(p) || len(c.data)+n > w.o.BlockSize) {
		w.queue = append(w.queue, c)
		w.cur = nil
		flush = true
	}
	if w.cur == nil {
		data := w.spare
		w.spare = nil
		if data == nil {
			data = make([]byte, 0, min(w.o.BlockSize, 4<<10))
		}
		w.cur = &batch{period: p, first: t, data: data}
	}
	w.cur.data = appendRecord(w.cur.data, t, data)
	w.cur.records++
	w.buffered += n
	if w.o.MaxDelay > 0 && t.Sub(w.cur.first) >= w.o.MaxDelay {
		w.queue = append(w.queue, w.cur)
		w.cur = nil
		flush = true
	}
	w.mu.Unlock()
	if flush {
		// The record is accepted whatever this send does: its error is
		// kept for ErrBacklog, and Flush and Close report their own.
		_ = w.drain(ctx)
	}
	return nil
}

// Flush sends every buffered record, a block per append, and returns the
// first error; records it could not send stay buffered for the next
// Flush.
func (w *Writer) Flush(ctx context.Context) error {
	if err := store.CheckContext(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	if w.cur != nil {
		w.queue = append(w.queue, w.cur)
		w.cur = nil
	}
	w.mu.Unlock()
	return w.drain(ctx)
}

// Close refuses further writes and flushes. When it fails, the records it
// could not send stay buffered: Close (or Flush) may be called again. An
// error matching store.ErrUnknownOutcome means a block's outcome is still
// unknown (it was not sent again: a later Flush settles it).
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	return w.Flush(ctx)
}

// drain sends the queued batches in order until the queue is empty or a
// send fails; a failed batch stays at the head of the queue.
func (w *Writer) drain(ctx context.Context) error {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.mu.Unlock()
			return nil
		}
		b := w.queue[0]
		w.mu.Unlock()
		settled, err := w.send(ctx, b)
		w.mu.Lock()
		w.lastErr = err
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.queue = w.queue[1:]
		w.buffered -= len(b.data)
		w.spare = b.data[:0] // sent: its buffer serves the next batch
		w.stats.Records += int64(b.records)
		w.stats.Bytes += int64(len(b.data))
		if settled {
			w.stats.Settled++
		}
		w.mu.Unlock()
	}
}

// maxRolls bounds how often one block moves to a new blob because its
// blob changed under the writer.
const maxRolls = 8

// send appends one batch, at the current blob's end, conditional on that
// position: at most one attempt of a block can ever land. It reports
// whether the batch had landed earlier (settled by a read-back).
func (w *Writer) send(ctx context.Context, b *batch) (settled bool, err error) {
	if b.maybe {
		landed, err := w.settle(ctx, b)
		if err != nil || landed {
			return landed, err
		}
	}
	for range maxRolls {
		if err := w.ensureBlob(ctx, b); err != nil {
			return false, err
		}
		pos := w.pos
		res, err := w.c.AppendBlock(ctx, w.blob, b.data, &store.AppendOptions{AppendPosition: &pos})
		switch {
		case err == nil:
			w.pos, w.blocks = res.Size, res.Blocks
			w.mu.Lock()
			w.stats.Blocks++
			w.mu.Unlock()
			return false, nil
		case errors.Is(err, store.ErrUnknownOutcome):
			b.maybe, b.sentTo, b.at = true, w.blob, pos
			return false, fmt.Errorf("logdata: append of %d records to %s at offset %d: the outcome is unknown; the next Flush settles it: %w", b.records, w.blob, pos, err)
		}
		switch store.Code(err) {
		case store.CodeAppendPositionConditionNotMet, store.CodeBlockCountExceedsLimit,
			store.CodeBlobNotFound, store.CodeInvalidBlobType:
			// The blob changed under the writer (deleted, full, or written
			// by another writer with the same id): start a new one.
			w.blob = ""
			w.mu.Lock()
			w.stats.Rollovers++
			w.mu.Unlock()
			continue
		}
		return false, fmt.Errorf("logdata: append of %d records to %s: %w", b.records, w.blob, err)
	}
	return false, fmt.Errorf("logdata: append of %d records: %d new blobs in a row changed under the writer: is another writer using the id %q?", b.records, maxRolls, w.o.ID)
}

// settle decides whether a batch whose send's outcome was unknown landed:
// its bytes are at the offset it was sent to, or they are not (and then
// never will be: the send was conditional on that offset).
func (w *Writer) settle(ctx context.Context, b *batch) (bool, error) {
	data, p, err := w.c.GetRange(ctx, b.sentTo, b.at, int64(len(b.data)))
	switch {
	case err == nil && bytes.Equal(data, b.data):
		b.maybe = false
		if w.blob == b.sentTo && w.pos == b.at {
			w.pos, w.blocks = b.at+int64(len(b.data)), p.Blocks
		}
		w.mu.Lock()
		w.stats.Blocks++
		w.mu.Unlock()
		return true, nil
	case err == nil || store.Code(err) == store.CodeInvalidRange || store.Code(err) == store.CodeBlobNotFound:
		b.maybe = false
		return false, nil
	}
	return false, fmt.Errorf("logdata: settling the unknown append of %d records to %s at offset %d: %w", b.records, b.sentTo, b.at, err)
}

// ensureBlob makes sure the current blob takes b: one of b's period with
// room for it, creating a new blob when not.
func (w *Writer) ensureBlob(ctx context.Context, b *batch) error {
	switch {
	case w.blob == "":
	case !w.period.Equal(b.period):
		w.mu.Lock()
		w.stats.Periods++
		w.mu.Unlock()
	case w.blocks >= w.o.MaxBlocks,
		w.o.MaxBlobSize > 0 && w.pos > 0 && w.pos+int64(len(b.data)) > w.o.MaxBlobSize:
		w.mu.Lock()
		w.stats.Rollovers++
		w.mu.Unlock()
	default:
		return nil
	}
	w.blob = ""
	return w.newBlob(ctx, b.period)
}

// newBlob creates the writer's next blob of period p. A name that exists
// (an earlier run of this writer id) is skipped.
func (w *Writer) newBlob(ctx context.Context, p time.Time) error {
	create := &store.BlobPutOptions{IfNoneMatchAny: true}
	for {
		if w.seq >= maxSeq {
			return fmt.Errorf("logdata: writer %q has used all %d blob sequence numbers", w.o.ID, maxSeq)
		}
		w.seq++
		name := blobName(w.o.Period, w.prefix, w.o.ID, p, w.seq)
		_, err := w.c.CreateAppend(ctx, name, create)
		if errors.Is(err, store.ErrUnknownOutcome) {
			// Sent again: the name is this writer's, so "it exists" means
			// the first attempt created it.
			_, err = w.c.CreateAppend(ctx, name, create)
			if store.Code(err) == store.CodeBlobAlreadyExists {
				err = nil
			}
		} else if store.Code(err) == store.CodeBlobAlreadyExists {
			continue
		}
		if err != nil {
			return fmt.Errorf("logdata: creating blob %s: %w", name, err)
		}
		w.blob, w.period, w.pos, w.blocks = name, p, 0, 0
		w.mu.Lock()
		w.stats.Blobs++
		w.mu.Unlock()
		return nil
	}
}
