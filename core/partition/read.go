package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ErrInconsistentRead matches the error of a Read that never saw one
// state: a writer committed during every one of its attempts.
var ErrInconsistentRead = errors.New("partition: writers kept changing the partition during the read")

// ReadOptions shape a consistent read. The zero value reads every data
// row of the partition.
type ReadOptions struct {
	// Range restricts the read to these RowKeys (within DataRange; the
	// zero Range is all of it).
	Range keys.Range
	// Where is an extra condition on the data rows (the zero Cond for
	// none).
	Where filter.Cond
	// Select projects the data rows to these properties (nil for all).
	Select []string
	// PageSize is the $top of each page request, 1 to 1,000 (0 for the
	// service's maximum).
	PageSize int
}

// Snapshot is a consistent read of a partition: rows that were all
// current at one moment, the moment when the partition had Fence.Version.
type Snapshot struct {
	// Fence is the fence the rows belong to: BeginAt(Fence) starts a
	// transaction that commits only if nothing changed since the read.
	Fence Fence
	// Rows are the data rows read, in RowKey order; never a reserved row.
	Rows []store.Entity
	// Attempts is how many times the partition was read (1 unless a
	// writer raced the read).
	Attempts int
	// Requests counts the requests made: pages and fence reads, over all
	// attempts.
	Requests int
}

// Read returns the partition's data rows as one consistent state: when a
// writer commits while the pages of the read are being fetched, the read
// sees it and starts again, up to Options.ReadAttempts times (then an
// error matching ErrInconsistentRead).
//
// A read of the whole data range fetches the fence and the tail in the
// same pages as the data (they sort first and last), so it costs no
// request more than a plain partition scan: the pages are one state when
// the fence and the tail carry the same version. A read of a narrower
// Range reads the fence before and after its pages instead (two point
// reads more). Either way the proof holds only if every writer of the
// partition commits through a Txn.
func (p *Partition) Read(ctx context.Context, opts *ReadOptions) (*Snapshot, error) {
	var o ReadOptions
	if opts != nil {
		o = *opts
	}
	if err := store.ValidateTop(o.PageSize); err != nil {
		return nil, p.wrap("read", err)
	}
	if err := store.ValidateSelect(o.Select); err != nil {
		return nil, p.wrap("read", err)
	}
	rng, whole := clampRange(o.Range)
	r := reader{p: p, opts: &o, rng: rng, whole: whole}
	if err := r.plan(); err != nil {
		return nil, p.wrap("read", err)
	}
	why := ""
	for n := 1; n <= p.s.readAttempts; n++ {
		if n > 1 {
			if err := p.s.wait(ctx, n-1); err != nil {
				return nil, p.wrap("read", err)
			}
		}
		snap, torn, err := r.once(ctx)
		if err != nil {
			return nil, p.wrap("read", err)
		}
		if torn == "" {
			snap.Attempts, snap.Requests = n, r.requests
			return snap, nil
		}
		why = torn
	}
	return nil, p.wrap("read", fmt.Errorf("%w: %d attempts, the last one because %s", ErrInconsistentRead, p.s.readAttempts, why))
}

// clampRange intersects rng with DataRange and reports whether the result
// is all of it.
func clampRange(rng keys.Range) (keys.Range, bool) {
	data := DataRange()
	if keys.Compare(rng.Lower, data.Lower) < 0 {
		rng.Lower = data.Lower
	}
	if !rng.HasUpper || keys.Compare(rng.Upper, data.Upper) >= 0 {
		rng.Upper, rng.HasUpper, rng.UpperIncluded = data.Upper, true, false
	}
	return rng, rng == data
}

// reader is one Read in progress.
type reader struct {
	p        *Partition
	opts     *ReadOptions
	rng      keys.Range
	whole    bool
	query    store.Query
	extra    []string // properties selected only for the boundary rows
	requests int
}

// plan builds the query. A whole read takes the fence and the tail along:
// "RowKey le '\uFFFD'" reads from "" up to the tail and no outbox row; a
// Where condition is ORed with the two boundary keys so that they still
// come back. A narrower read is a plain range query.
func (r *reader) plan() error {
	pk := r.p.pk
	var c filter.Cond
	if r.whole {
		c = filter.PK.Eq(pk).And(filter.RK.Le(TailKey))
		if r.opts.Where.String() != "" || r.opts.Where.Err() != nil {
			c = c.And(filter.Or(filter.RK.Eq(FenceKey), filter.RK.Eq(TailKey), r.opts.Where))
		}
		if len(r.opts.Select) > 0 {
			sel := slices.Clone(r.opts.Select)
			for _, name := range []string{propVersion, propWriters} {
				if !slices.Contains(sel, name) {
					sel = append(sel, name)
					r.extra = append(r.extra, name)
				}
			}
			r.query.Select = sel
		}
	} else {
		c = filter.PK.Eq(pk).And(filter.RK.Ge(r.rng.Lower))
		if r.rng.UpperIncluded {
			c = c.And(filter.RK.Le(r.rng.Upper))
		} else {
			c = c.And(filter.RK.Lt(r.rng.Upper))
		}
		c = c.And(r.opts.Where)
		r.query.Select = r.opts.Select
	}
	if err := c.Err(); err != nil {
		return err
	}
	r.query.Filter, r.query.Top = c.String(), r.opts.PageSize
	return nil
}

// once reads the partition one time. torn is "" when the rows are one
// state, and otherwise says why they may not be.
func (r *reader) once(ctx context.Context) (snap *Snapshot, torn string, err error) {
	if r.rng.Empty() {
		f, err := r.fence(ctx)
		return &Snapshot{Fence: f}, "", err
	}
	if !r.whole {
		return r.bracketed(ctx)
	}
	var head, tail *store.Entity
	snap = &Snapshot{}
	err = r.pages(ctx, func(e *store.Entity) {
		switch e.RowKey {
		case FenceKey:
			head = e
		case TailKey:
			tail = e
		default:
			for _, name := range r.extra {
				delete(e.Properties, name)
			}
			snap.Rows = append(snap.Rows, *e)
		}
	})
	if err != nil {
		return nil, "", err
	}
	switch {
	case head == nil && tail == nil:
		snap.Fence = Fence{pk: r.p.pk}
		return snap, "", nil
	case head == nil:
		return nil, "the tail row was read but not the fence row (a first commit landed during the read)", nil
	case tail == nil:
		return nil, "the fence row was read but not the tail row (it was deleted outside the package; the next commit writes it again)", nil
	}
	if snap.Fence, err = fenceOf(head); err != nil {
		return nil, "", err
	}
	tv, err := versionOf(tail)
	if err != nil {
		return nil, "", err
	}
	if tv != snap.Fence.Version {
		return nil, fmt.Sprintf("the fence row said version %d and the tail row, read later, version %d", snap.Fence.Version, tv), nil
	}
	return snap, "", nil
}

// bracketed reads a narrower range between two reads of the fence.
func (r *reader) bracketed(ctx context.Context) (*Snapshot, string, error) {
	before, err := r.fence(ctx)
	if err != nil {
		return nil, "", err
	}
	snap := &Snapshot{}
	if err := r.pages(ctx, func(e *store.Entity) { snap.Rows = append(snap.Rows, *e) }); err != nil {
		return nil, "", err
	}
	if snap.Fence, err = r.fence(ctx); err != nil {
		return nil, "", err
	}
	if snap.Fence.Version != before.Version || snap.Fence.ETag != before.ETag {
		return nil, fmt.Sprintf("the fence moved from version %d to %d during the read", before.Version, snap.Fence.Version), nil
	}
	return snap, "", nil
}

func (r *reader) fence(ctx context.Context) (Fence, error) {
	r.requests++
	return r.p.h.read(ctx, r.p.table, r.p.pk)
}

// pages follows the query's continuation tokens, handing each entity to
// row.
func (r *reader) pages(ctx context.Context, row func(e *store.Entity)) error {
	q := r.query
	for {
		r.requests++
		page, err := r.p.table.Query(ctx, q)
		if err != nil {
			return err
		}
		for i := range page.Entities {
			row(&page.Entities[i])
		}
		if page.Continuation == "" {
			return nil
		}
		q.Continuation = page.Continuation
	}
}
