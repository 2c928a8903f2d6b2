package mapper

import (
	"context"
	"iter"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Partition is a repository scoped to one PartitionKey: reads take only a
// RowKey, queries are restricted to the partition (a partition scan, or a
// row range when the condition bounds the RowKey), and writes refuse a
// value of another partition.
type Partition[T any] struct {
	r  *Repository[T]
	pk string
}

// Partition returns the handle of partition pk. It does no I/O.
func (r *Repository[T]) Partition(pk string) *Partition[T] { return &Partition[T]{r: r, pk: pk} }

// Key returns the PartitionKey.
func (p *Partition[T]) Key() string { return p.pk }

// Get reads the entity with RowKey rk.
func (p *Partition[T]) Get(ctx context.Context, rk string) (T, error) { return p.r.Get(ctx, p.pk, rk) }

// check refuses a value whose PartitionKey is not the handle's.
func (p *Partition[T]) check(v *T) error {
	_, rv, err := p.r.encodeKeys(v)
	if err != nil {
		return err
	}
	pk, _, err := p.r.c.keysOf(rv)
	if err != nil {
		return err
	}
	if pk != p.pk {
		return &Error{Type: p.r.c.typ, Msg: "write refused", Err: refuseCode(store.CodeInvalidInput, 400,
			"value of PartitionKey %s written through the handle of partition %s", quote(pk), quote(p.pk))}
	}
	return nil
}

// Insert inserts *v, which must be in the partition.
func (p *Partition[T]) Insert(ctx context.Context, v *T) error {
	if err := p.check(v); err != nil {
		return err
	}
	return p.r.Insert(ctx, v)
}

// Update updates *v conditional on its ETag, as Repository.Update.
func (p *Partition[T]) Update(ctx context.Context, v *T, mode store.UpdateMode) error {
	if err := p.check(v); err != nil {
		return err
	}
	return p.r.Update(ctx, v, mode)
}

// UpdateUnconditional updates *v whatever the stored version.
func (p *Partition[T]) UpdateUnconditional(ctx context.Context, v *T, mode store.UpdateMode) error {
	if err := p.check(v); err != nil {
		return err
	}
	return p.r.UpdateUnconditional(ctx, v, mode)
}

// Upsert inserts or merges/replaces *v.
func (p *Partition[T]) Upsert(ctx context.Context, v *T, mode store.UpdateMode) error {
	if err := p.check(v); err != nil {
		return err
	}
	return p.r.Upsert(ctx, v, mode)
}

// Delete deletes *v conditional on its ETag.
func (p *Partition[T]) Delete(ctx context.Context, v *T) error {
	if err := p.check(v); err != nil {
		return err
	}
	return p.r.Delete(ctx, v)
}

// DeleteKey deletes the entity with RowKey rk whatever its version.
func (p *Partition[T]) DeleteKey(ctx context.Context, rk string) error {
	return p.r.DeleteKey(ctx, p.pk, rk)
}

// scope ANDs the partition condition with where.
func (p *Partition[T]) scope(where []Cond[T]) Cond[T] {
	return Cond[T]{c: filter.PK.Eq(p.pk)}.And(where...)
}

// Query returns every entity of the partition matching all of where.
func (p *Partition[T]) Query(ctx context.Context, where ...Cond[T]) iter.Seq2[T, error] {
	return p.r.query(ctx, p.scope(where))
}

// QueryPage returns one screen of the partition, as Repository.QueryPage.
func (p *Partition[T]) QueryPage(ctx context.Context, token string, size int, where ...Cond[T]) (Page[T], error) {
	return p.r.queryPage(ctx, token, size, p.scope(where))
}

// Batch starts a transaction on the partition.
func (p *Partition[T]) Batch() *Batch[T] {
	return &Batch[T]{r: p.r, t: txn{table: p.r.table, pk: p.pk, fixed: true}}
}
