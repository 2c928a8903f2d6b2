package partition

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// Head is a head row at a RowKey of the caller's choosing: the one
// mechanism of the patterns for writing several rows of a partition
// together. It is the partition's fence generalised: the row keeps a
// version and the request ids of its recent writers, every transaction
// on it replaces (or merges) the row conditional on the state it began
// from, and a commit whose answer was lost is resolved exactly by one
// read of the row, never sent again: Commit returns the Result
// (Recovered) if it applied, a NotAppliedError if it did not (moving the
// head past it so it never can), an UnknownError with Resolve otherwise.
//
// Heads at different RowKeys of one partition are independent: writers
// of one never conflict with writers of another, nor with the
// partition's fence (the head at FenceKey, which [New] returns). A head
// at another RowKey writes no tail row; its transaction carries the head
// and up to store.MaxBatchActions-1 rows of yours, which may lie
// anywhere in the partition but on the head's own RowKey, FenceKey and
// the keys from TailKey up. The head row may carry properties of yours
// too (Txn.SetHead), beside its own two, named after Options.HeadPrefix.
//
// A Head holds no state between calls and is safe for concurrent use.
type Head struct {
	p *Partition
}

// NewHead returns the head row rk of partition pk of tbl. It does no
// I/O. rk "" is the partition's fence, as New gives it (with its tail
// row); rk may not be a reserved key from TailKey up. It fails for a nil
// tbl, keys the service refuses and bad Options, with errors matching
// store.ErrInvalidInput.
func NewHead(tbl store.Table, pk, rk string, opts *Options) (*Head, error) {
	if rk == FenceKey {
		p, err := New(tbl, pk, opts)
		if err != nil {
			return nil, err
		}
		return &Head{p: p}, nil
	}
	if isNil(tbl) {
		return nil, fmt.Errorf("partition: %w", refuse(store.CodeInvalidInput, 400, "the table is nil: give the store.Table the head lives in"))
	}
	if err := store.ValidateKeys(pk, rk); err != nil {
		return nil, fmt.Errorf("partition: head: %w", err)
	}
	if IsReserved(rk) {
		return nil, fmt.Errorf("partition: %w", refuse(store.CodeInvalidInput, 400,
			"head RowKey %s is reserved for the tail and outbox rows: a head lies in %s, or at the fence's \"\"", quote(rk), dataRangeText))
	}
	s, err := opts.settings()
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	if s.headPrefix == "" {
		s.headPrefix = DefaultHeadPrefix
	}
	h := head{rk: rk, version: s.headPrefix + "Version", writers: s.headPrefix + "Writers"}
	return &Head{p: &Partition{table: tbl, pk: pk, h: h, s: s}}, nil
}

// Key returns the PartitionKey.
func (h *Head) Key() string { return h.p.pk }

// RowKey returns the head row's RowKey.
func (h *Head) RowKey() string { return h.p.h.rk }

// Table returns the table.
func (h *Head) Table() store.Table { return h.p.table }

// Properties returns the names of the two properties the head keeps for
// itself: its version and its writers.
func (h *Head) Properties() (version, writers string) { return h.p.h.version, h.p.h.writers }

// Fence reads the head row: one point read. A head that was never
// written is the Fence of version 0, which Exists reports false.
func (h *Head) Fence(ctx context.Context) (Fence, error) { return h.p.Fence(ctx) }

// Begin reads the head row and starts a transaction on top of it: the
// transaction commits only if no other writer of the head commits first.
func (h *Head) Begin(ctx context.Context) (*Txn, error) { return h.p.Begin(ctx) }

// BeginAt starts a transaction on top of a state of the head the caller
// holds (from Fence, or from the Result of the previous commit) without
// reading it again: the commit fails with a ConflictError if anyone
// committed on the head after f.
func (h *Head) BeginAt(f Fence) (*Txn, error) { return h.p.BeginAt(f) }

// Absent is the state of the head while its row does not exist: what a
// read that found no row decodes to, and the RunOptions.Start of an
// insert that begins without a read (its commit is refused on the head,
// nothing applied, if the row exists after all).
func (h *Head) Absent() Fence { return Fence{pk: h.p.pk, rk: h.p.h.rk} }

// FenceOf decodes the state of the head from its row as the caller read
// it (a Get or a query that selected at least the head's two properties,
// Head.Properties), or nil for a head row that does not exist (Absent):
// for a caller that reads the head row together with properties of its
// own. A row of another RowKey or partition, or one whose head
// properties the package did not write, is refused (ErrCorrupt for the
// latter).
func (h *Head) FenceOf(e *store.Entity) (Fence, error) {
	if e == nil {
		return h.Absent(), nil
	}
	if e.PartitionKey != h.p.pk || e.RowKey != h.p.h.rk {
		return Fence{pk: h.p.pk, rk: h.p.h.rk}, refuse(store.CodeInvalidInput, 400, "FenceOf was given a row that is not the head %s of partition %s", quote(h.p.h.rk), quote(h.p.pk))
	}
	return h.p.h.decode(e)
}
