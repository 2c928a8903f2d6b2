package transfer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// DefaultSplits are the PartitionKey boundaries copy splits a table at
// when none are given: ranges by leading character, so that digits, upper
// and lower case keys are scanned side by side.
var DefaultSplits = []string{"0", "5", "A", "H", "O", "V", "a", "h", "o", "v"}

// Ranges returns the partition ranges the splits cut the keyspace into:
// [""; s0), [s0; s1), ..., [sn; end).
func Ranges(splits []string) [][2]string {
	var out [][2]string
	lo := ""
	for _, s := range splits {
		out = append(out, [2]string{lo, s})
		lo = s
	}
	return append(out, [2]string{lo, ""})
}

// RangeFilter is the $filter of one range, joined with extra when set.
func RangeFilter(r [2]string, extra string) (string, error) {
	var conds []filter.Cond
	if r[0] != "" {
		conds = append(conds, filter.PK.Ge(r[0]))
	}
	if r[1] != "" {
		conds = append(conds, filter.PK.Lt(r[1]))
	}
	if extra != "" {
		f, err := filter.Parse(extra)
		if err != nil {
			return "", err
		}
		conds = append(conds, f.Cond())
	}
	if len(conds) == 0 {
		return "", nil
	}
	c := filter.And(conds...)
	if len(conds) == 1 {
		c = conds[0]
	}
	return c.String(), c.Err()
}

// CopyOptions configure Copy.
type CopyOptions struct {
	Filter     string
	Splits     []string
	Parallel   int
	Checkpoint *Checkpoint
	Flush      func() error
	Unknown    func(e store.Entity, err error)
	Progress   func(rows int)
	Pace       time.Duration // a pause before each transaction written
}

// CopyReport says what a copy did.
type CopyReport struct {
	Ranges, RangesResumed int
	Read, Written, Failed int
	Unknown               int
	Stopped               error
}

// Copy copies the rows of src (or those Filter selects) into dst with
// upserts (insert or replace), scanning the partition ranges in parallel;
// each range copied is recorded in the checkpoint, so a resumed copy skips
// it and scans only the others again. Upserts repeat harmlessly, so a range
// interrupted half-way is simply copied again.
func Copy(ctx context.Context, src, dst store.Table, o CopyOptions) (CopyReport, error) {
	if o.Splits == nil {
		o.Splits = DefaultSplits
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Pace > 0 {
		dst = pacedTable{dst, o.Pace}
	}
	ranges := Ranges(o.Splits)
	rep := CopyReport{Ranges: len(ranges)}
	com := &committer{cp: o.Checkpoint, flush: o.Flush}
	var mu sync.Mutex
	var read atomic.Int64
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.Parallel)
	stop := make(chan struct{})
	go func() {
		tk := time.NewTicker(500 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				com.commit()
			}
		}
	}()
	for i, r := range ranges {
		u := "r" + strconv.Itoa(i) + ":" + r[0] + ":" + r[1]
		if o.Checkpoint.Done(u) {
			rep.RangesResumed++
			continue
		}
		f, err := RangeFilter(r, o.Filter)
		if err != nil {
			close(stop)
			return rep, err
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			w := store.NewBulkWriter(dst, store.BulkOptions{Concurrency: 2})
			q := store.Query{Filter: f}
			complete := true
			for ctx.Err() == nil {
				page, err := src.Query(ctx, q)
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("range [%q, %q): %w", r[0], r[1], err))
					mu.Unlock()
					complete = false
					break
				}
				if len(page.Entities) > 0 {
					acts := make([]store.Action, len(page.Entities))
					for i, e := range page.Entities {
						e.Timestamp, e.ETag = time.Time{}, ""
						acts[i] = store.Action{Kind: store.ActionUpsertReplace, Entity: e}
					}
					res, _ := w.Write(ctx, acts)
					n := read.Add(int64(len(acts)))
					mu.Lock()
					rep.Read += len(acts)
					for i, oc := range res.Outcomes {
						switch {
						case oc.Err == nil:
							rep.Written++
						case oc.Unknown:
							rep.Unknown++
							if o.Unknown != nil {
								o.Unknown(acts[i].Entity, oc.Err)
							}
						case errors.Is(oc.Err, context.Canceled) || errors.Is(oc.Err, context.DeadlineExceeded):
							complete = false
						default:
							rep.Failed++
							if len(errs) < 20 {
								errs = append(errs, fmt.Errorf("%s/%s: %w", acts[i].Entity.PartitionKey, acts[i].Entity.RowKey, oc.Err))
							}
						}
					}
					if o.Progress != nil {
						o.Progress(int(n))
					}
					mu.Unlock()
				}
				if page.Continuation == "" {
					break
				}
				q.Continuation = page.Continuation
			}
			if ctx.Err() != nil {
				complete = false
			}
			if complete {
				com.add(u)
			}
		}()
	}
	wg.Wait()
	close(stop)
	cerr := com.commit()
	rep.Stopped = ctx.Err()
	return rep, errors.Join(append(errs, cerr)...)
}
