package partition

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// RunOptions shape one Run. The zero value (or nil) reads the head row
// alone (one point read) before every attempt.
type RunOptions struct {
	// Read reads what an attempt builds its transaction from, and
	// returns the state of the head among it: for a caller that reads
	// the head row with properties of its own (Head.FenceOf decodes its
	// state from the row) or other rows beside it. nil reads the head
	// alone (Fence). fn gets what Read read through the caller's own
	// variables: Run calls fn only after Read returned without error. A
	// Read error matching store.ErrTransient (and not ErrCorrupt) is read
	// again after a pause, as one attempt; any other ends the Run as it
	// is.
	Read func(ctx context.Context) (Fence, error)
	// Start is a state of the head the caller remembers (the Result.Fence
	// of its last commit), for the first attempt to begin from without a
	// read. When another writer has moved the head since, the commit is
	// refused on the head with nothing applied (a ConflictError), and the
	// next attempt reads the head at once, without a pause: a remembered
	// state saves a round trip and never makes a wrong write. nil reads.
	Start *Fence
	// Race, when set, is asked about each refusal of one of the caller's
	// rows (err is the DuplicateError, ChangedError or RowError Commit
	// returned, row its Row): true declares it a race, for a row that
	// other writers change without moving this head (a row shared by
	// many heads, written conditional on the ETag the attempt read).
	// Run then retries it like a ConflictError: after Options.Backoff
	// it reads again, the attempt counts toward Options.Attempts, and an
	// AttemptsError whose last attempt lost such a race has Raced set.
	// false, or a nil Race, returns the refusal as Commit reported it.
	Race func(row Row, err error) bool
}

// AttemptsError reports a Run that used up Options.Attempts: each attempt
// lost a race to another writer, was proved not applied after its answer
// was lost, or failed transiently (its commit or its read). Nothing of
// the Run was written. It unwraps to the last attempt's error, so a Run
// that kept losing races matches ErrConflict; Raced says so whatever the
// last error's type.
type AttemptsError struct {
	Table, Partition string
	// RowKey is the head's ("" for the partition's fence).
	RowKey string
	// Attempts is how many attempts were made.
	Attempts int
	// Raced is set when the last attempt lost to another writer: a
	// ConflictError, a NotAppliedError whose next version another
	// writer took (Overtaken), or a refusal RunOptions.Race declared a
	// race.
	Raced bool
	// Err is the last attempt's error. For a refusal RunOptions.Race
	// declared a race it is the row's *store.Error, named by its row, not
	// the DuplicateError or ChangedError Commit returned: the Run lost a
	// race, it did not meet a duplicate or a row the caller must read
	// again.
	Err error
}

func (e *AttemptsError) Error() string {
	head := ""
	if e.RowKey != FenceKey {
		head = " head " + quote(e.RowKey) + ":"
	}
	return fmt.Sprintf("partition %s of table %s:%s gave up after %d attempts: %v", quote(e.Partition), e.Table, head, e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *AttemptsError) Unwrap() error { return e.Err }

// Is matches ErrConflict when the last attempt lost a race.
func (e *AttemptsError) Is(target error) bool { return target == ErrConflict && e.Raced }

// Run is the one commit loop of the package: it writes through the head
// as many times as it takes, and decides every outcome once. Each
// attempt reads the head (RunOptions.Read, or Fence; the first may begin
// from RunOptions.Start instead), calls fn to build the transaction from
// what it read (fn adds rows, SetHead, Outbox to tx, whose Base is the
// state read), and commits it. Then:
//
//   - applied: the Result, with Recovered set when the answer was lost
//     and the head proved it applied;
//   - another writer committed first (a ConflictError): the next attempt
//     reads again, after Options.Backoff (at once when the attempt began
//     from a remembered Start that was stale);
//   - the answer was lost and the head proved the commit not applied (a
//     NotAppliedError; the head was moved past it so it never can): the
//     next attempt reads again;
//   - the store reported a transient failure (throttled, refused before
//     any work): the next attempt reads again, and since a copy of the
//     request delayed in the network could still land, Run remembers its
//     request id: when a later read shows in the head's writer history
//     (Fence.WriterOf) that it landed, Run returns it as applied
//     (Recovered) instead of writing again, and a later commit whose
//     answer is lost is judged against it too;
//   - the outcome is unknown (the head could not tell): the
//     *UnknownError, whose Resolve asks again; the write is never sent
//     again;
//   - a refusal of a row of yours that RunOptions.Race declares a race:
//     as a ConflictError;
//   - any other refusal (a DuplicateError, ChangedError or RowError of a
//     row of yours, a bad transaction): returned as Commit reports it.
//
// fn returning an error ends the Run with that error, as it is (compare
// it with errors.Is against your own sentinels): return one for a
// condition that no new attempt can change. fn may be called several
// times, on a new transaction each time, so it builds everything from
// what the attempt read and has no other effects; Result.RequestID
// tells which attempt's transaction applied. After Options.Attempts
// attempts Run returns an AttemptsError. A Run that was given its head's
// rows to read through RunOptions.Read and writes nothing to it (fn adds
// nothing and no SetHead) still commits: the head's version moves.
//
// A Run whose transaction's ETag-conditional rows depend on ETags it read
// with the head should check them against the head with Txn.Unchanged,
// so that the Run's own resolution of a lost answer (which moves the
// head, and changes its ETag) does not fail them.
func (p *Partition) Run(ctx context.Context, fn func(ctx context.Context, tx *Txn) error, opts *RunOptions) (*Result, error) {
	if fn == nil {
		return nil, p.wrap("run", refuse(store.CodeInvalidInput, 400, "the function that builds the transaction is nil"))
	}
	if ctx == nil {
		return nil, p.wrap("run", refuse(store.CodeInvalidInput, 400, "the context is nil: pass context.Background() or a context of your own"))
	}
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	read := o.Read
	if read == nil {
		read = p.Fence
	}
	var (
		live []sent       // sends reported not applied that may land yet
		prev *Txn         // the last attempt
		same []store.ETag // the ETags the head held the same as, at prev's base
		last error
	)
	pause, raced := false, false
	for n := 1; n <= p.s.attempts; n++ {
		if pause {
			if err := p.s.wait(ctx, n-1); err != nil {
				return nil, p.wrap("run", errors.Join(last, err))
			}
		}
		pause = true
		var (
			f      Fence
			err    error
			reread = true
		)
		if n == 1 && o.Start != nil {
			f, reread = *o.Start, false
		} else {
			if f, err = read(ctx); err != nil {
				if (errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome)) && !errors.Is(err, ErrCorrupt) {
					last = err
					continue
				}
				return nil, err
			}
			var res *Result
			if live, res, err = landed(live, f); res != nil || err != nil {
				return res, err
			}
			same = sameAfter(prev, same, f)
		}
		tx, err := p.BeginAt(f)
		if err != nil {
			return nil, err
		}
		if len(live) > 0 {
			tx.alts = make([]*Txn, len(live))
			for i, s := range live {
				tx.alts[i] = s.t
			}
		}
		tx.same, prev = same, tx
		if err := fn(ctx, tx); err != nil {
			return nil, err
		}
		res, err := tx.Commit(ctx)
		if err == nil {
			return res, nil
		}
		var (
			na *NotAppliedError
			ue *UnknownError
		)
		raced = false
		switch {
		case errors.As(err, &ue):
			return nil, err
		case errors.As(err, &na):
			// The resolution judged the remembered sends with this one:
			// none of them can land now.
			live = nil
		case errors.Is(err, ErrConflict):
			pause = reread
		case errors.Is(err, store.ErrTransient):
			live = append(live, sent{t: tx, cause: lostCause(err)})
		default:
			r := o.race(err)
			if r == nil {
				return nil, err
			}
			err, raced = r, true
		}
		last = err
	}
	var na *NotAppliedError
	raced = raced || errors.Is(last, ErrConflict) || errors.As(last, &na) && na.Overtaken
	return nil, &AttemptsError{Table: p.table.Name(), Partition: p.pk, RowKey: p.h.rk, Attempts: p.s.attempts, Raced: raced, Err: last}
}

// Run runs the head's commit loop: Partition.Run, on this head row.
func (h *Head) Run(ctx context.Context, fn func(ctx context.Context, tx *Txn) error, opts *RunOptions) (*Result, error) {
	return h.p.Run(ctx, fn, opts)
}

// race asks Race about a refusal of one of the caller's rows: for a
// race, the row's *store.Error named by its row (what an AttemptsError
// carries), so that the refusal no longer reads as a duplicate or a
// changed row; nil otherwise.
func (o *RunOptions) race(err error) error {
	if o.Race == nil {
		return nil
	}
	var (
		row Row
		se  *store.Error
		de  *DuplicateError
		ce  *ChangedError
		re  *RowError
	)
	switch {
	case errors.As(err, &de):
		row, se = de.Row, de.Err
	case errors.As(err, &ce):
		row, se = ce.Row, ce.Err
	case errors.As(err, &re):
		row, se = re.Row, re.Err
	default:
		return nil
	}
	if se == nil || !o.Race(row, err) {
		return nil
	}
	return fmt.Errorf("%s lost a race: %w", row, se)
}

// sent is a commit of a Run that the store reported not applied: a copy
// delayed in the network may land yet, until the head moves past its
// base.
type sent struct {
	t     *Txn
	cause *store.Error // the failure, as an unknown outcome should it come to that
}

// landed judges the remembered sends against head state f: the Result of
// one that applied, an UnknownError for one the head can no longer tell,
// and otherwise the sends that may still land (those based on f itself).
func landed(live []sent, f Fence) ([]sent, *Result, error) {
	keep := live[:0]
	for _, s := range live {
		t := s.t
		switch {
		case f.Version == t.base.Version && f.ETag == t.base.ETag:
			keep = append(keep, s)
		case f.Version > t.base.Version:
			w, ok := f.writerOf(t.base.Version + 1)
			if !ok {
				return nil, nil, t.unknown(s.cause, fmt.Sprintf("a send reported not applied may have landed: the %s moved from version %d to %d and no longer records who wrote version %d",
					t.p.what(), t.base.Version, f.Version, t.base.Version+1))
			}
			if w == t.id {
				return nil, t.recovered(f), nil
			}
		case f.Version < t.base.Version:
			return nil, nil, t.unknown(s.cause, fmt.Sprintf("a send reported not applied may have landed: the %s went back from version %d to %d: it was rewritten outside the package",
				t.p.what(), t.base.Version, f.Version))
		}
		// Otherwise the head moved past its base (or was rewritten at the
		// same version): its condition can never hold again.
	}
	return keep, nil, nil
}

// sameAfter returns the ETags whose content the head in state f still
// holds, given the last attempt (nil for none) and those its base held
// (same): all of them when the head has not moved since that base; those
// and the base's own ETag when the head moved once since, by the empty
// commit that shut that attempt out after its answer was lost; none
// otherwise.
func sameAfter(prev *Txn, same []store.ETag, f Fence) []store.ETag {
	switch {
	case prev == nil:
		return nil
	case f.Version == prev.base.Version && f.ETag == prev.base.ETag:
		return same
	case prev.shut == "" || f.Version != prev.base.Version+1:
		return nil
	}
	if w, ok := f.writerOf(f.Version); !ok || w != prev.shut {
		return nil
	}
	if !prev.base.Exists() {
		return same
	}
	return append(same[:len(same):len(same)], prev.base.ETag)
}

// lostCause is the store's error of a send reported not applied, marked
// unknown: what an UnknownError about it carries.
func lostCause(err error) *store.Error {
	var se *store.Error
	if !errors.As(err, &se) {
		se = &store.Error{Code: store.CodeResponseLost, Index: -1, Message: err.Error(), Source: store.SourceClient}
	}
	c := *se
	c.Unknown = true
	return &c
}
