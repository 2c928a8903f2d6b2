package transfer

import (
	"bufio"
	"context"
	"io"
	"sync"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ExportOptions configure ExportParallel.
type ExportOptions struct {
	Format   string // "jsonl" (default) or "csv"
	WithMeta bool   // add Timestamp and ETag
	// Parallel is the number of partitions scanned at once; 0 or 1 scans
	// the table in one query, as Export does.
	Parallel int
	Progress func(rows int)
}

// exportChunk is how many bytes of JSON lines a partition's scan hands to
// the writer at once, and exportQueue how many chunks it may hold ahead
// of the writer: a scan ahead of the partition being written waits when
// its queue is full, so an export holds at most about
// Parallel × exportQueue × exportChunk bytes.
const (
	exportChunk = 64 << 10
	exportQueue = 32
)

// ExportParallel writes the entities q selects from t to w, like Export,
// scanning up to o.Parallel partitions at once. The partitions are found
// one after another with one-entity queries (PartitionKey gt the last one
// found, $select PartitionKey, $top 1): one request a partition, ahead of
// the scans. The output is the same as Export's, byte for byte: the
// partitions are written in key order, each one's rows in RowKey order,
// and the per-partition checksums are the same. CSV, which needs every
// row before its header, is scanned in one query.
func ExportParallel(ctx context.Context, t store.Table, q store.Query, o ExportOptions, w io.Writer) (ExportResult, error) {
	if o.Parallel <= 1 || (o.Format != "jsonl" && o.Format != "json" && o.Format != "") {
		return Export(ctx, t, q, o.Format, o.WithMeta, w, o.Progress)
	}
	var extra filter.Cond
	hasExtra := q.Filter != ""
	if hasExtra {
		f, err := filter.Parse(q.Filter)
		if err != nil {
			return ExportResult{}, err
		}
		extra = f.Cond()
	}
	and := func(c filter.Cond) (string, error) {
		if hasExtra {
			c = filter.And(c, extra)
		}
		return c.String(), c.Err()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	type chunk struct {
		b    []byte
		rows int
	}
	type job struct {
		pk     string
		chunks chan chunk
		sum    PartitionSum
		err    error
	}
	order := make(chan *job, o.Parallel)
	jobs := make(chan *job)
	var discErr error
	go func() { // discover the partitions, in key order
		defer close(order)
		defer close(jobs)
		last, first := "", true
		for {
			c := filter.PK.Gt(last)
			if first {
				c = filter.PK.Ge("")
			}
			f, err := and(c)
			if err != nil {
				discErr = err
				return
			}
			found := false
			for e, err := range store.All(ctx, t, store.Query{Filter: f, Select: []string{"PartitionKey"}, Top: 1}) {
				if err != nil {
					discErr = err
					return
				}
				last, found = e.PartitionKey, true
				break
			}
			if !found {
				return
			}
			first = false
			j := &job{pk: last, chunks: make(chan chunk, exportQueue)}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				close(j.chunks)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range o.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.err = scanPartition(ctx, t, q, j.pk, and, o.WithMeta, &j.sum, func(b []byte, rows int) bool {
					select {
					case j.chunks <- chunk{b, rows}:
						return true
					case <-ctx.Done():
						return false
					}
				})
				close(j.chunks)
			}
		}()
	}
	var res ExportResult
	bw := bufio.NewWriterSize(w, 1<<16)
	var err error
	for j := range order {
		if err != nil {
			continue // drain: the discoverer closes order once ctx is done
		}
		for c := range j.chunks {
			if err == nil {
				if _, werr := bw.Write(c.b); werr != nil {
					err = werr
					cancel(err)
				}
			}
			res.Rows += c.rows
			if o.Progress != nil && err == nil {
				o.Progress(res.Rows)
			}
		}
		if err == nil && j.err != nil {
			err = j.err
			cancel(err)
		}
		if err == nil && j.sum.Rows > 0 {
			res.Partitions = append(res.Partitions, j.sum)
		}
	}
	wg.Wait()
	if err == nil {
		err = discErr
	}
	if err == nil {
		err = context.Cause(ctx) // the caller's cancellation, if any
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return res, err
}

// scanPartition scans one partition (and q's filter), summing its rows and
// handing its JSON lines to emit in chunks; emit returns false to stop.
func scanPartition(ctx context.Context, t store.Table, q store.Query, pk string, and func(filter.Cond) (string, error), withMeta bool, sum *PartitionSum, emit func([]byte, int) bool) error {
	f, err := and(filter.PK.Eq(pk))
	if err != nil {
		return err
	}
	q.Filter, q.Continuation = f, ""
	var s summer
	buf := make([]byte, 0, exportChunk+4096)
	rows := 0
	for e, err := range store.All(ctx, t, q) {
		if err != nil {
			return err
		}
		if err := s.add(&e); err != nil {
			return err
		}
		if buf, err = entityio.AppendJSON(buf, &e, withMeta); err != nil {
			return err
		}
		buf = append(buf, '\n')
		rows++
		if len(buf) >= exportChunk {
			if !emit(buf, rows) {
				return context.Cause(ctx)
			}
			buf, rows = make([]byte, 0, exportChunk+4096), 0
		}
	}
	if rows > 0 && !emit(buf, rows) {
		return context.Cause(ctx)
	}
	s.close()
	if len(s.parts) == 1 {
		*sum = s.parts[0]
	}
	return nil
}
