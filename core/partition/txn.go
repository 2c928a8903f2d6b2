package partition

import (
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// ReservedActions is how many of a transaction's actions the package
// takes for itself on the partition's fence: the fence and the tail. A
// transaction on a Head at another RowKey takes one, the head row.
const ReservedActions = 2

// MaxRows is the most rows of yours, data and outbox together, one
// transaction on the partition's fence can carry: store.MaxBatchActions
// less ReservedActions. Txn.Free tells what a transaction (on the fence
// or on a Head) can still take.
const MaxRows = store.MaxBatchActions - ReservedActions

// Budget is what a transaction can still take.
type Budget struct {
	// Rows is how many more rows (data or outbox) fit.
	Rows int
	// Bytes is how many more request body bytes fit, by the store's size
	// estimate (store.ActionWireSize): a row whose estimate is larger is
	// refused.
	Bytes int
}

// Txn is one entity group transaction on a fenced partition: the data
// rows and outbox rows you add, plus the fence (conditional on the state
// the transaction began from) and the tail. Every add method checks its
// row at once and refuses it, adding nothing, when it would make the
// transaction invalid; Commit sends what was added. A Txn commits once.
//
// A Txn is not safe for concurrent use.
type Txn struct {
	p       *Partition
	base    Fence
	next    Fence          // the fence this commit writes (no ETag yet)
	id      string         // this commit's request id, recorded in the fence
	bounds  []store.Action // the head row (and, for the fence, the tail)
	head    map[string]any // the caller's properties on the head row (SetHead)
	replace bool           // SetHead was called: the head row is replaced
	rows    []Row          // the caller's data rows, in the order added
	data    []store.Action // their actions
	outbox  []store.Action // outbox rows
	ids     []string       // outbox row ids
	keys    map[string]int // RowKey -> position among data rows, or -1 for outbox
	bytes   int            // estimated body size so far
	done    bool

	poisons []string // request ids of the empty commits that shut a lost request out
	shut    string   // the poison that took the version after base, when this commit was shut out by its own resolution

	// In a Run: the earlier attempts on the same base that the store
	// reported not applied and that may land yet (one of them, or this
	// commit, can), and the ETags the head had before the Run's own
	// resolutions moved it without changing what it holds.
	alts []*Txn
	same []store.ETag
}

// Unchanged reports whether the head row, as the transaction began from
// it, holds what it held when its ETag was etag: etag is the base's own
// ETag, or one the head had before the Run that made the transaction
// moved it only to shut out a lost commit of its own (a move that changes
// the head's version and writers, nothing of yours). A caller whose
// write is conditional on an ETag it read checks it here, so that the
// Run's own resolution never makes the condition fail.
func (t *Txn) Unchanged(etag store.ETag) bool {
	return etag != "" && (etag == t.base.ETag || slices.Contains(t.same, etag))
}

func newTxn(p *Partition, f Fence, id string) *Txn {
	v, w := f.next(id, p.s.history)
	t := &Txn{p: p, base: f, next: Fence{Version: v, pk: f.pk, rk: f.rk, writers: w}, id: id,
		bounds: p.h.actions(f, v, w, nil, false), keys: map[string]int{}}
	t.bytes = t.reservedBytes()
	return t
}

// SetHead stores props on the head row, beside the head's own version
// and writers (Head.Properties): the row is replaced with exactly these,
// so set every property it should keep. Without SetHead a commit merges
// the head's own two into the row and keeps what is stored. It is for a
// Head at a RowKey other than FenceKey (the partition's fence carries no
// properties of yours), and refuses, keeping the previous ones, a
// property named like the head's own, one the service refuses, and
// properties that do not fit the budget. The map is not copied: leave it
// unchanged until Commit returns.
func (t *Txn) SetHead(props map[string]any) error {
	if err := t.usable(); err != nil {
		return err
	}
	if t.p.h.fence() {
		return t.refused("", refuse(store.CodeInvalidInput, 400,
			"SetHead on the partition's fence: it carries no properties of yours; use a Head at another RowKey"))
	}
	for _, name := range []string{t.p.h.version, t.p.h.writers} {
		if _, ok := props[name]; ok {
			return t.refused("", refuse(store.CodeInvalidInput, 400,
				"head property %s is the head's own: name your properties so none starts with Options.HeadPrefix", quote(name)))
		}
	}
	b := t.p.h.actions(t.base, t.next.Version, t.next.writers, props, true)
	if err := store.ValidateAction(&b[0]); err != nil {
		return t.refused("", err)
	}
	size := t.bytes - t.reservedBytes() + store.ActionWireSize(&b[0])
	if size >= store.MaxBatchBytes {
		return fmt.Errorf("%w: %w", mapper.ErrBatchFull, t.refused("", refuse(store.CodeRequestBodyTooLarge, 413,
			"the head row's properties would bring the transaction body to about %d bytes: the service's limit is %d", size, store.MaxBatchBytes)))
	}
	t.bounds, t.head, t.replace, t.bytes = b, props, true, size
	return nil
}

// reserved is how many actions the package takes: the head row, and the
// tail for the fence.
func (t *Txn) reserved() int { return len(t.bounds) }

// Base returns the fence state the transaction commits on top of.
func (t *Txn) Base() Fence { return t.base }

// RequestID returns the id this commit records in the fence.
func (t *Txn) RequestID() string { return t.id }

// Len reports how many rows (data and outbox) were added.
func (t *Txn) Len() int { return len(t.data) + len(t.outbox) }

// Free reports how many more rows and body bytes the transaction takes.
func (t *Txn) Free() Budget {
	return Budget{Rows: store.MaxBatchActions - t.reserved() - t.Len(), Bytes: store.MaxBatchBytes - 1 - t.bytes}
}

// Insert adds an insert of e. label names the row in errors (a
// DuplicateError says which unique value was taken); e.PartitionKey may be
// left empty.
func (t *Txn) Insert(label string, e store.Entity) error {
	return t.Add(label, store.Action{Kind: store.ActionInsert, Entity: e})
}

// Update adds a merge or replace of e if its stored ETag is still ifMatch
// (store.ETagAny for any).
func (t *Txn) Update(label string, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) error {
	k := store.ActionUpdateMerge
	if mode == store.Replace {
		k = store.ActionUpdateReplace
	}
	return t.Add(label, store.Action{Kind: k, Entity: e, IfMatch: ifMatch})
}

// Upsert adds an insert-or-merge or insert-or-replace of e.
func (t *Txn) Upsert(label string, e store.Entity, mode store.UpdateMode) error {
	k := store.ActionUpsertMerge
	if mode == store.Replace {
		k = store.ActionUpsertReplace
	}
	return t.Add(label, store.Action{Kind: k, Entity: e})
}

// Delete adds a delete of the row rk if its stored ETag is still ifMatch
// (store.ETagAny for any).
func (t *Txn) Delete(label, rk string, ifMatch store.ETag) error {
	return t.Add(label, store.Action{Kind: store.ActionDelete, Entity: store.Entity{RowKey: rk}, IfMatch: ifMatch})
}

// Add adds any action on a data row. It refuses, naming the value and the
// limit: a row of another partition, a reserved RowKey, a RowKey already
// in the transaction, an entity or If-Match the service would refuse, and
// a row that does not fit the budget (errors.Is mapper.ErrBatchFull).
// Refusals are *store.Error values (errors.As), with nothing added. The
// entity's property map is not copied: leave it unchanged until Commit
// returns.
func (t *Txn) Add(label string, a store.Action) error {
	if err := t.usable(); err != nil {
		return err
	}
	if a.Entity.PartitionKey == "" {
		a.Entity.PartitionKey = t.p.pk
	}
	size, err := t.check(label, &a)
	if err != nil {
		return err
	}
	t.keys[a.Entity.RowKey] = len(t.data)
	t.rows = append(t.rows, Row{Label: label, Index: len(t.data), Kind: a.Kind, RowKey: a.Entity.RowKey})
	t.data = append(t.data, a)
	t.bytes += size
	return nil
}

// usable refuses adds and commits after Commit.
func (t *Txn) usable() error {
	if t.done {
		return t.refused("", refuse(store.CodeInvalidInput, 400, "the transaction was committed already: begin a new one"))
	}
	return nil
}

// check vets one data action before it is added, and returns its share
// of the body.
func (t *Txn) check(label string, a *store.Action) (int, error) {
	rk := a.Entity.RowKey
	if a.Entity.PartitionKey != t.p.pk {
		return 0, t.refused(label, refuse(store.CodeCommandsInBatchActOnDifferentPartitions, 400,
			"row %s is on PartitionKey %s: this transaction covers partition %s only",
			quote(rk), quote(a.Entity.PartitionKey), quote(t.p.pk)))
	}
	if err := store.ValidateAction(a); err != nil {
		return 0, t.refused(label, err)
	}
	if err := checkDataKey(rk); err != nil {
		return 0, t.refused(label, err)
	}
	if rk == t.p.h.rk {
		return 0, t.refused(label, refuse(store.CodeInvalidInput, 400,
			"RowKey %s is the transaction's head row: store its properties with SetHead", quote(rk)))
	}
	if i, dup := t.keys[rk]; dup {
		what := "the outbox"
		if i >= 0 {
			what = fmt.Sprintf("row %d (%s)", i, labelText(t.rows[i].Label))
		}
		return 0, t.refused(label, refuse(store.CodeInvalidDuplicateRow, 400,
			"RowKey %s is written already by %s: a row may appear once per transaction", quote(rk), what))
	}
	size := store.ActionWireSize(a)
	return size, t.fits(label, rk, size)
}

// fits refuses a row that would pass the action or byte budget.
func (t *Txn) fits(label, rk string, size int) error {
	if max := store.MaxBatchActions - t.reserved(); t.Len() >= max {
		return fmt.Errorf("%w: %w", mapper.ErrBatchFull, t.refused(label, refuse(store.CodeInvalidInput, 400,
			"row %s would be row %d: a transaction holds %d actions, %d of them taken by %s, so at most %d rows (data and outbox)",
			quote(rk), t.Len()+1, store.MaxBatchActions, t.reserved(), t.boundsText(), max)))
	}
	if t.bytes+size >= store.MaxBatchBytes {
		return fmt.Errorf("%w: %w", mapper.ErrBatchFull, t.refused(label, refuse(store.CodeRequestBodyTooLarge, 413,
			"row %s of about %d bytes would bring the transaction body to about %d bytes (%d taken by %s): the service's limit is %d",
			quote(rk), size, t.bytes+size, t.reservedBytes(), t.boundsText(), store.MaxBatchBytes)))
	}
	return nil
}

func (t *Txn) reservedBytes() int {
	n := 0
	for i := range t.bounds {
		n += store.ActionWireSize(&t.bounds[i])
	}
	return n
}

// boundsText names the package's own actions in messages.
func (t *Txn) boundsText() string {
	if t.p.h.fence() {
		return "the fence and the tail"
	}
	return "the head row"
}

// refused names the partition and the row in a refusal.
func (t *Txn) refused(label string, err error) error {
	if label == "" {
		return fmt.Errorf("partition %s: %w", quote(t.p.pk), err)
	}
	return fmt.Errorf("partition %s: %s: %w", quote(t.p.pk), labelText(label), err)
}

func labelText(label string) string {
	if label == "" {
		return "unlabelled row"
	}
	return fmt.Sprintf("row %q", label)
}

// actions returns the transaction's actions: fence, tail, data rows,
// outbox rows.
func (t *Txn) actions() []store.Action {
	all := make([]store.Action, 0, t.reserved()+t.Len())
	all = append(all, t.bounds...)
	all = append(all, t.data...)
	return append(all, t.outbox...)
}
