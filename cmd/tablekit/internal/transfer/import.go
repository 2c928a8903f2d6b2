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
	Mode string
	// Chunk is the number of input lines a chunk holds (default 10,000):
	// the lines of one partition within one chunk are the unit the
	// checkpoint records.
	Chunk int
	// Parallel is the most transactions in flight at once (default
	// store.DefaultBulkConcurrency, as the bulk writer).
	Parallel   int
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

// unitWork is one unit of the checkpoint: the lines of one partition
// within one input chunk.
type unitWork struct {
	key     string
	left    int  // slices not yet settled
	settled bool // every slice settled (or the unit was done by an earlier run)
	unsent  bool // some line was not sent: the unit is not done
	resumed bool // done by an earlier run, per the checkpoint
}

// partWork is one partition's units in input order, and the first of them
// not yet handed to the committer. A partition's units are handed over in
// input order only, each once it and every earlier one is done, so the
// checkpoint always holds a prefix of each partition's units: a resumed
// import never writes an earlier line of an entity after a later one.
type partWork struct {
	units []*unitWork
	next  int
}

// slice is up to store.MaxBatchActions lines of one unit (input
// positions, in input order), written by one call of the bulk writer.
type slice struct {
	unit  *unitWork
	part  *partWork
	idx   []int
	after int      // earlier slices writing one of its entities, not yet settled
	then  []*slice // the slices that wait for this one
}

// follow makes s, the slice being planned, wait for prev, once: were s
// already among prev's followers, it would be the last of them.
func (s *slice) follow(prev *slice) {
	if prev == nil || prev == s || (len(prev.then) > 0 && prev.then[len(prev.then)-1] == s) {
		return
	}
	prev.then = append(prev.then, s)
	s.after++
}

// sliceResult is what happened to the lines of one slice, gathered outside
// the lock.
type sliceResult struct {
	written, present, unknown, notSent int
	firstNotSent                       int
	failures                           []Failure
	unknowns                           [][]byte // lines of the unknown-outcome file
}

// Import writes recs into t through the bulk writer, as a pipeline that
// keeps up to o.Parallel transactions in flight from the first line to the
// last: the lines are cut into units (one partition's lines within one
// input chunk of o.Chunk lines) and each unit into transactions of up to
// store.MaxBatchActions lines, which the workers take in input order,
// the partitions of a chunk in turn, without waiting for a chunk to end.
// A transaction that writes an entity an earlier one writes waits for it,
// so the writes to one entity are applied in input order.
//
// A unit whose every write is settled (applied, failed or unknown) is
// recorded in the checkpoint once the earlier units of its partition are
// (after Flush), so a resumed import skips it; a unit with a line left
// unsent, and every later unit of its partition, is written again.
func Import(ctx context.Context, t store.Table, recs []entityio.Record, o ImportOptions) (ImportReport, error) {
	kind, err := Kind(o.Mode)
	if err != nil {
		return ImportReport{}, err
	}
	if o.Chunk <= 0 {
		o.Chunk = 10000
	}
	if o.Parallel <= 0 {
		o.Parallel = store.DefaultBulkConcurrency
	}
	if o.CommitEvery <= 0 {
		o.CommitEvery = 500 * time.Millisecond
	}
	if o.Pace > 0 {
		t = pacedTable{t, o.Pace}
	}
	rep := ImportReport{Total: len(recs), FirstLine: -1}
	com := &committer{cp: o.Checkpoint, flush: o.Flush}
	var mu sync.Mutex // guards rep, done, unknownErr and the plan's counters
	var unknownErr error
	done := 0
	report := func(n int) {
		done += n
		if o.Progress != nil {
			o.Progress(done)
		}
	}
	// advance hands the committer the units of p that are done, in order.
	advance := func(p *partWork) {
		for p.next < len(p.units) {
			u := p.units[p.next]
			if !u.settled || u.unsent {
				return
			}
			if !u.resumed {
				com.add(u.key)
			}
			p.next++
		}
	}

	// The plan: units, their slices, and the order the workers start them.
	type entityKey struct{ pk, rk string }
	parts := map[string]*partWork{}
	last := make(map[entityKey]*slice, len(recs)) // the latest slice writing each entity
	var start []*slice                            // ready from the outset, in start order
	total := 0
	for from, c := 0, 0; from < len(recs); from, c = from+o.Chunk, c+1 {
		to := min(from+o.Chunk, len(recs))
		rep.Chunks++
		var units [][]int // input positions of each partition's lines, partitions in order of appearance
		var pks []string
		at := map[string]int{}
		for i := from; i < to; i++ {
			pk := recs[i].Entity.PartitionKey
			k, ok := at[pk]
			if !ok {
				k = len(units)
				at[pk] = k
				units = append(units, nil)
				pks = append(pks, pk)
			}
			units[k] = append(units[k], i)
		}
		cut := make([][]*slice, len(units))
		for k, idx := range units {
			u := &unitWork{key: unit(c, pks[k])}
			p := parts[pks[k]]
			if p == nil {
				p = &partWork{}
				parts[pks[k]] = p
			}
			p.units = append(p.units, u)
			if o.Checkpoint.Done(u.key) {
				u.settled, u.resumed = true, true
				rep.Resumed += len(idx)
				report(len(idx))
				continue
			}
			for len(idx) > 0 {
				n := min(len(idx), store.MaxBatchActions)
				s := &slice{unit: u, part: p, idx: idx[:n:n]}
				idx = idx[n:]
				for _, i := range s.idx {
					e := &recs[i].Entity
					key := entityKey{e.PartitionKey, e.RowKey}
					s.follow(last[key])
					last[key] = s
				}
				u.left++
				total++
				cut[k] = append(cut[k], s)
			}
		}
		// the partitions of the chunk in turn: the first slice of each,
		// then the second of each, and so on
		for round, more := 0, true; more; round++ {
			more = false
			for _, ss := range cut {
				if round < len(ss) {
					more = true
					if ss[round].after == 0 {
						start = append(start, ss[round])
					}
				}
			}
		}
	}
	clear(last)
	for _, p := range parts {
		advance(p) // a partition's first units may be done by an earlier run
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

	w := store.NewBulkWriter(t, store.BulkOptions{Concurrency: 1})
	// write sends one slice and sorts out its outcomes, outside the lock.
	write := func(s *slice) sliceResult {
		res := sliceResult{firstNotSent: -1}
		notSent := func(line int) {
			res.notSent++
			if res.firstNotSent < 0 || line < res.firstNotSent {
				res.firstNotSent = line
			}
		}
		if ctx.Err() != nil {
			for _, i := range s.idx {
				notSent(recs[i].Line)
			}
			return res
		}
		acts := make([]store.Action, len(s.idx))
		for k, i := range s.idx {
			e := recs[i].Entity
			e.Timestamp, e.ETag = time.Time{}, ""
			acts[k] = store.Action{Kind: kind, Entity: e}
		}
		out, werr := w.Write(ctx, acts)
		for k, i := range s.idx {
			r := &recs[i]
			oc := store.BulkOutcome{Err: werr}
			if k < len(out.Outcomes) {
				oc = out.Outcomes[k]
			}
			switch {
			case oc.Err == nil:
				res.written++
			case oc.Unknown:
				res.unknown++
				if o.Unknown != nil {
					b, _ := entityio.AppendJSON(nil, &acts[k].Entity, false)
					line, _ := json.Marshal(UnknownWrite{Line: r.Line, Table: t.Name(), Action: kind.String(), Entity: b, Error: oc.Err.Error()})
					res.unknowns = append(res.unknowns, append(line, '\n'))
				}
			case ctx.Err() != nil && errors.Is(oc.Err, ctx.Err()):
				notSent(r.Line)
			case kind == store.ActionInsert && store.Code(oc.Err) == store.CodeEntityAlreadyExists && samePresent(ctx, t, acts[k].Entity):
				res.present++
			default:
				res.failures = append(res.failures, Failure{Line: r.Line, PK: r.Entity.PartitionKey, RK: r.Entity.RowKey, Err: oc.Err})
			}
		}
		return res
	}

	ready := make(chan *slice, total)
	for _, s := range start {
		ready <- s
	}
	left := total
	if left == 0 {
		close(ready)
	}
	var wg sync.WaitGroup
	for range min(o.Parallel, total) {
		wg.Go(func() {
			for s := range ready {
				res := write(s)
				mu.Lock()
				rep.Written += res.written
				rep.Present += res.present
				rep.Unknown += res.unknown
				rep.NotSent += res.notSent
				rep.Failed += len(res.failures)
				for _, f := range res.failures {
					if len(rep.Failures) < 100 {
						rep.Failures = append(rep.Failures, f)
					}
				}
				if res.firstNotSent >= 0 && (rep.FirstLine < 0 || res.firstNotSent < rep.FirstLine) {
					rep.FirstLine = res.firstNotSent
				}
				for _, line := range res.unknowns {
					if _, err := o.Unknown.Write(line); err != nil && unknownErr == nil {
						unknownErr = err
					}
				}
				report(len(s.idx))
				u := s.unit
				u.unsent = u.unsent || res.notSent > 0
				if u.left--; u.left == 0 {
					u.settled = true
					advance(s.part)
				}
				for _, n := range s.then {
					if n.after--; n.after == 0 {
						ready <- n
					}
				}
				if left--; left == 0 {
					close(ready)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
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
