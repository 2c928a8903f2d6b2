package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/store"
)

// Modes of an import: how each row is written.
const (
	ModeUpsert = "upsert" // insert or replace: repeats harmlessly
	ModeMerge  = "merge"  // insert or merge: repeats harmlessly
	ModeInsert = "insert" // insert only: an existing row is a failure, unless it holds the same values
)

// Kind returns the action kind of a mode.
func Kind(mode string) (store.ActionKind, error) {
	switch mode {
	case ModeUpsert, "":
		return store.ActionUpsertReplace, nil
	case ModeMerge:
		return store.ActionUpsertMerge, nil
	case ModeInsert:
		return store.ActionInsert, nil
	}
	return 0, fmt.Errorf("unknown mode %q: use upsert, merge or insert", mode)
}

// ImportOptions configure Import.
type ImportOptions struct {
	Mode       string
	Chunk      int // input lines a chunk (default 10,000)
	Parallel   int // partitions written at once (default 8)
	Checkpoint *Checkpoint
	Flush      func() error // run before each checkpoint record
	Unknown    io.Writer    // each write whose outcome is unknown, as a JSON line
	Progress   func(done int)
	// CommitEvery is the longest time between checkpoint records (default 500 ms).
	CommitEvery time.Duration
	// Pace is a pause before each transaction, to spare a busy account.
	Pace time.Duration
}

// pacedTable pauses before each transaction.
type pacedTable struct {
	store.Table
	pace time.Duration
}

func (p pacedTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	t := time.NewTimer(p.pace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, store.CheckContext(ctx)
	case <-t.C:
	}
	return p.Table.Transact(ctx, actions)
}

// Failure is one write that was certainly not applied.
type Failure struct {
	Line int
	PK   string
	RK   string
	Err  error
}

// ImportReport says what an import did.
type ImportReport struct {
	Total     int // rows in the input
	Written   int // applied by this run
	Present   int // insert mode: already stored with the same values
	Resumed   int // skipped: done by an earlier run, per the checkpoint
	Failed    int
	Unknown   int
	NotSent   int // left when the run was stopped
	Failures  []Failure
	Stopped   error
	Chunks    int
	FirstLine int // first input line not written, when stopped
}

// UnknownWrite is one line of the unknown-outcome file.
type UnknownWrite struct {
	Line   int             `json:"line"`
	Table  string          `json:"table"`
	Action string          `json:"action"`
	Entity json.RawMessage `json:"entity"`
	Error  string          `json:"error"`
}

type job struct {
	chunk int
	pk    string
	recs  []entityio.Record
}

// Import writes recs into t through the bulk writer, input chunk by input
// chunk; within a chunk the partitions are written in parallel, and each
// partition written (its every write applied, failed or unknown) is
// recorded in the checkpoint, so a resumed import skips it.
func Import(ctx context.Context, t store.Table, recs []entityio.Record, o ImportOptions) (ImportReport, error) {
	kind, err := Kind(o.Mode)
	if err != nil {
		return ImportReport{}, err
	}
	if o.Chunk <= 0 {
		o.Chunk = 10000
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	if o.CommitEvery <= 0 {
		o.CommitEvery = 500 * time.Millisecond
	}
	if o.Pace > 0 {
		t = pacedTable{t, o.Pace}
	}
	rep := ImportReport{Total: len(recs), FirstLine: -1}
	com := &committer{cp: o.Checkpoint, flush: o.Flush}
	var mu sync.Mutex
	var unknownErr error
	done := 0
	report := func(n int) {
		done += n
		if o.Progress != nil {
			o.Progress(done)
		}
	}
	stopTick := make(chan struct{})
	tickDone := make(chan struct{})
	go func() {
		defer close(tickDone)
		tk := time.NewTicker(o.CommitEvery)
		defer tk.Stop()
		for {
			select {
			case <-stopTick:
				return
			case <-tk.C:
				com.commit()
			}
		}
	}()
	runJob := func(j job) {
		acts := make([]store.Action, len(j.recs))
		for i, r := range j.recs {
			e := r.Entity
			e.Timestamp, e.ETag = time.Time{}, ""
			acts[i] = store.Action{Kind: kind, Entity: e}
		}
		w := store.NewBulkWriter(t, store.BulkOptions{Concurrency: 2})
		res, _ := w.Write(ctx, acts)
		settled := true
		mu.Lock()
		defer mu.Unlock()
		for i, oc := range res.Outcomes {
			r := j.recs[i]
			switch {
			case oc.Err == nil:
				rep.Written++
			case oc.Unknown:
				rep.Unknown++
				if o.Unknown != nil {
					b, _ := entityio.AppendJSON(nil, &acts[i].Entity, false)
					line, _ := json.Marshal(UnknownWrite{Line: r.Line, Table: t.Name(), Action: kind.String(), Entity: b, Error: oc.Err.Error()})
					if _, err := o.Unknown.Write(append(line, '\n')); err != nil && unknownErr == nil {
						unknownErr = err
					}
				}
			case ctx.Err() != nil && errors.Is(oc.Err, ctx.Err()):
				rep.NotSent++
				settled = false
				if rep.FirstLine < 0 || r.Line < rep.FirstLine {
					rep.FirstLine = r.Line
				}
			case kind == store.ActionInsert && store.Code(oc.Err) == store.CodeEntityAlreadyExists && samePresent(ctx, t, acts[i].Entity):
				rep.Present++
			default:
				rep.Failed++
				if len(rep.Failures) < 100 {
					rep.Failures = append(rep.Failures, Failure{Line: r.Line, PK: r.Entity.PartitionKey, RK: r.Entity.RowKey, Err: oc.Err})
				}
			}
		}
		report(len(j.recs))
		if settled {
			com.add(unit(j.chunk, j.pk))
		}
	}
	for start, c := 0, 0; start < len(recs); start, c = start+o.Chunk, c+1 {
		chunk := recs[start:min(start+o.Chunk, len(recs))]
		rep.Chunks++
		var jobs []job
		idx := map[string]int{}
		for _, r := range chunk {
			pk := r.Entity.PartitionKey
			k, ok := idx[pk]
			if !ok {
				k = len(jobs)
				idx[pk] = k
				jobs = append(jobs, job{chunk: c, pk: pk})
			}
			jobs[k].recs = append(jobs[k].recs, r)
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, o.Parallel)
		for _, j := range jobs {
			if o.Checkpoint.Done(unit(j.chunk, j.pk)) {
				mu.Lock()
				rep.Resumed += len(j.recs)
				report(len(j.recs))
				mu.Unlock()
				continue
			}
			if ctx.Err() != nil {
				mu.Lock()
				rep.NotSent += len(j.recs)
				if rep.FirstLine < 0 || j.recs[0].Line < rep.FirstLine {
					rep.FirstLine = j.recs[0].Line
				}
				mu.Unlock()
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				runJob(j)
			}()
		}
		wg.Wait()
	}
	close(stopTick)
	<-tickDone
	cerr := com.commit()
	rep.Stopped = ctx.Err()
	slices.SortFunc(rep.Failures, func(a, b Failure) int { return a.Line - b.Line })
	return rep, errors.Join(cerr, unknownErr)
}

func unit(chunk int, pk string) string { return strconv.Itoa(chunk) + ":" + pk }

// samePresent reports whether the stored entity holds exactly e's values:
// an insert refused because an earlier, interrupted run already made it.
func samePresent(ctx context.Context, t store.Table, e store.Entity) bool {
	got, err := t.Get(ctx, e.PartitionKey, e.RowKey, nil)
	if err != nil {
		return false
	}
	return SameProperties(got.Properties, e.Properties)
}

// SameProperties reports whether two property maps hold the same values
// with the same types.
func SameProperties(a, b map[string]any) bool {
	n := 0
	for k, v := range a {
		if v == nil {
			continue
		}
		n++
		w, ok := b[k]
		if !ok || !store.SameValue(v, w) {
			return false
		}
	}
	m := 0
	for _, v := range b {
		if v != nil {
			m++
		}
	}
	return n == m
}
