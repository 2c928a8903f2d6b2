package partition

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ErrClaimed matches the error of a Claim or Remove that lost to another
// drainer: the row was claimed (or changed) by someone else since it was
// read. Leave the row to them.
var ErrClaimed = errors.New("partition: outbox row is claimed by another drainer")

// MaxOwnerLen bounds the owner name of a claim, in UTF-16 code units.
const MaxOwnerLen = 256

// Outbox drains the outbox rows of one table: it finds them, claims them
// for a while so that concurrent drainers do not deliver the same message
// at the same time, and removes them once delivered. A claim that runs out
// (its drainer crashed) makes the row claimable again, so delivery is at
// least once: make the delivery idempotent, or check the message's
// Version against the copy it updates.
//
// Claims and removals touch only the outbox row, conditional on its ETag;
// they do not move the partition's fence, so draining never conflicts with
// the partition's writers. An Outbox is safe for concurrent use.
type Outbox struct {
	table store.Table
	s     settings
}

// NewOutbox returns the drainer of tbl's outbox rows. It does no I/O.
// Options.Now is the clock claims are measured with, Options.NewID makes
// claim tokens. A nil tbl (or one holding a nil pointer) and bad Options
// are refused with errors matching store.ErrInvalidInput.
func NewOutbox(tbl store.Table, opts *Options) (*Outbox, error) {
	if isNil(tbl) {
		return nil, fmt.Errorf("partition: outbox: %w", refuse(store.CodeInvalidInput, 400, "the table is nil: give the store.Table whose outbox rows to drain"))
	}
	s, err := opts.settings()
	if err != nil {
		return nil, fmt.Errorf("partition: outbox: %w", err)
	}
	return &Outbox{table: tbl, s: s}, nil
}

// outboxCond selects outbox rows.
func outboxCond() filter.Cond {
	r := outboxRange()
	return filter.RK.Ge(r.Lower).And(filter.RK.Lt(r.Upper))
}

// Pending returns the outbox rows of partition pk, claimed or not, in the
// order they were written: one range query of the partition.
func (o *Outbox) Pending(ctx context.Context, pk string) ([]OutboxRow, error) {
	if err := store.ValidateKeys(pk, ""); err != nil {
		return nil, fmt.Errorf("partition: outbox: %w", err)
	}
	var rows []OutboxRow
	for r, err := range o.query(ctx, filter.PK.Eq(pk).And(outboxCond())) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// ScanOptions shape a table-wide search for outbox rows.
type ScanOptions struct {
	// CreatedBefore, when set, keeps only rows written before it: a sweeper
	// that re-queues messages whose first delivery never happened passes
	// now less the time a delivery normally takes.
	CreatedBefore time.Time
	// PageSize is the $top of each page (0 for the service's maximum).
	PageSize int
	// Claimed lists the rows a drainer has claimed now too: every row
	// still waiting for delivery, for a reader that counts them rather
	// than one that delivers them.
	Claimed bool
}

// Scan returns the outbox rows of every partition that are claimable now
// (never claimed, or their claim ran out; with ScanOptions.Claimed, every
// row), partition by partition. It is a table scan with a RowKey range
// condition: the service reads every partition, so run it as a periodic
// sweep, not per message.
func (o *Outbox) Scan(ctx context.Context, opts ScanOptions) iter.Seq2[OutboxRow, error] {
	c := outboxCond()
	if !opts.Claimed {
		c = c.And(filter.Prop(propClaimedUntil).Le(o.s.now().UTC()))
	}
	if !opts.CreatedBefore.IsZero() {
		c = c.And(filter.Prop(propCreated).Lt(opts.CreatedBefore.UTC()))
	}
	if err := store.ValidateTop(opts.PageSize); err != nil {
		return func(yield func(OutboxRow, error) bool) {
			yield(OutboxRow{}, fmt.Errorf("partition: outbox scan: %w", err))
		}
	}
	return o.queryTop(ctx, c, opts.PageSize)
}

func (o *Outbox) query(ctx context.Context, c filter.Cond) iter.Seq2[OutboxRow, error] {
	return o.queryTop(ctx, c, 0)
}

func (o *Outbox) queryTop(ctx context.Context, c filter.Cond, top int) iter.Seq2[OutboxRow, error] {
	return func(yield func(OutboxRow, error) bool) {
		if err := c.Err(); err != nil {
			yield(OutboxRow{}, fmt.Errorf("partition: outbox: %w", err))
			return
		}
		q := store.Query{Filter: c.String(), Top: top}
		for {
			page, err := o.table.Query(ctx, q)
			if err != nil {
				yield(OutboxRow{}, fmt.Errorf("partition: outbox of table %s: %w", o.table.Name(), err))
				return
			}
			for i := range page.Entities {
				if !yield(outboxRowOf(&page.Entities[i])) {
					return
				}
			}
			if page.Continuation == "" {
				return
			}
			q.Continuation = page.Continuation
		}
	}
}

// Get reads one outbox row.
func (o *Outbox) Get(ctx context.Context, pk, id string) (OutboxRow, error) {
	e, err := o.table.Get(ctx, pk, OutboxPrefix+id, nil)
	if err != nil {
		return OutboxRow{}, fmt.Errorf("partition: outbox row %s of partition %s: %w", quote(id), quote(pk), err)
	}
	return outboxRowOf(&e)
}

// Claim claims row for owner (a name unique to this drainer) until now +
// lease, if no one claimed or
// changed it since it was read (If-Match its ETag), and returns the
// claimed row (its new ETag, Attempts one more). A row still claimed by
// another owner, or claimed by someone since it was read, fails with an
// error matching ErrClaimed; a row already removed, with one matching
// store.ErrNotFound. Claiming again as the same owner extends the claim.
// When the answer is lost, Claim reads the row back: the claim's token
// tells whether it applied.
func (o *Outbox) Claim(ctx context.Context, row OutboxRow, owner string, lease time.Duration) (OutboxRow, error) {
	if n := keys.UTF16Len(owner); n < 1 || n > MaxOwnerLen {
		return row, fmt.Errorf("partition: claim of %s: %w", row, refuse(store.CodeInvalidInput, 400,
			"owner %s is %d characters long: it must be 1 to %d", quote(owner), n, MaxOwnerLen))
	}
	if lease <= 0 {
		return row, fmt.Errorf("partition: claim of %s: %w", row, refuse(store.CodeInvalidInput, 400,
			"lease %s is not positive", lease))
	}
	now := o.s.now().UTC()
	if row.ClaimedUntil.After(now) && row.ClaimedBy != owner {
		return row, fmt.Errorf("%w: %s is claimed by %s until %s", ErrClaimed, row, quote(row.ClaimedBy), row.ClaimedUntil.Format(time.RFC3339Nano))
	}
	token, err := o.s.id()
	if err != nil {
		return row, err
	}
	until := now.Add(lease)
	e := store.Entity{PartitionKey: row.Partition, RowKey: OutboxPrefix + row.ID, Properties: map[string]any{
		propClaimedBy:    owner,
		propClaimedUntil: until,
		propClaim:        token,
		propAttempts:     row.Attempts + 1,
	}}
	etag, err := o.table.Update(ctx, e, store.Merge, row.ETag)
	if errors.Is(err, store.ErrUnknownOutcome) {
		back, gerr := o.Get(ctx, row.Partition, row.ID)
		if gerr == nil && back.claim == token {
			return back, nil
		}
		// Not applied yet, or unreadable: the claim may still land, which
		// only delays the row until the lease ends.
	}
	if err != nil {
		return row, o.claimErr(row, err)
	}
	row.ClaimedBy, row.ClaimedUntil, row.claim, row.Attempts, row.ETag = owner, until, token, row.Attempts+1, etag
	return row, nil
}

func (o *Outbox) claimErr(row OutboxRow, err error) error {
	if store.Status(err) == 412 {
		return fmt.Errorf("%w: %s changed since it was read: %w", ErrClaimed, row, err)
	}
	return fmt.Errorf("partition: claim of %s: %w", row, err)
}

// Remove deletes a delivered row, if it is still as the caller's claim
// left it (If-Match its ETag). A row already gone is not an error. A row
// claimed by someone else since fails with an error matching ErrClaimed:
// they will deliver and remove it. A lost answer is resolved by deleting
// again with the same condition, which either applies or finds the row
// gone.
func (o *Outbox) Remove(ctx context.Context, row OutboxRow) error {
	var err error
	for n := 0; n < o.s.resolveAttempts; n++ {
		if n > 0 {
			if werr := o.s.wait(ctx, n); werr != nil {
				return fmt.Errorf("partition: remove %s: %w", row, err)
			}
		}
		err = o.table.Delete(ctx, row.Partition, OutboxPrefix+row.ID, row.ETag)
		switch {
		case err == nil || (store.Status(err) == 404 && store.Code(err) == store.CodeResourceNotFound):
			return nil
		case store.Status(err) == 412:
			return o.claimErr(row, err)
		case !errors.Is(err, store.ErrUnknownOutcome) && !errors.Is(err, store.ErrTransient):
			return fmt.Errorf("partition: remove %s: %w", row, err)
		}
	}
	return fmt.Errorf("partition: remove %s: gave up after %d attempts: %w", row, o.s.resolveAttempts, err)
}
