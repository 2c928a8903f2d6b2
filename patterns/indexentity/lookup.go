package indexentity

import (
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/store"
)

// Keys returns the keys listed under value in list, in key order, as the
// list holds them now: for SamePartition the entities of partition pk,
// for the other placements those of the whole table (pass pk ""). With
// InBlobs and SeparatePartition the list may lag behind the entities
// until the engine has run the latest writes' steps.
func (x *Table[T]) Keys(ctx context.Context, pk, list, value string) ([]Key, error) {
	entries, err := x.entries(ctx, pk, list, value)
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(entries))
	for i, e := range entries {
		out[i] = e.Key
	}
	return out, nil
}

// entries reads a list: sorted, each id once.
func (x *Table[T]) entries(ctx context.Context, pk, list, value string) ([]entry, error) {
	if _, err := x.spec(list); err != nil {
		return nil, err
	}
	switch {
	case x.o.Placement == SamePartition:
		if err := store.ValidateKeys(pk, ""); err != nil {
			return nil, err
		}
	case pk != "":
		return nil, refuse("%s lists cover the whole table: pass the PartitionKey \"\", not %q", x.o.Placement, naming.Cut(pk))
	}
	if value == "" {
		return nil, nil // never listed
	}
	ref, err := x.refOf(list, value, pk)
	if err != nil {
		return nil, err
	}
	entries, err := x.lists.readAll(ctx, ref)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, entry.less)
	return slices.CompactFunc(entries, func(a, b entry) bool { return a.Key == b.Key }), nil
}

// FindAll returns the entities listed under value in list, in key order:
// for SamePartition those of partition pk, for the other placements
// those of the whole table (pass pk ""). It reads the list, then the
// entities, Options.PageSize ids at a time with Options.Concurrency
// point reads at once, yielding each page in order before reading the
// next. Each entity is checked against the list: one that is gone, or
// whose value is no longer value (a list the engine has not caught up
// with yet), is skipped, so FindAll never yields an entity that does not
// hold the value. A failed read yields its error and ends the sequence.
func (x *Table[T]) FindAll(ctx context.Context, pk, list, value string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		entries, err := x.entries(ctx, pk, list, value)
		if err != nil {
			yield(zero, err)
			return
		}
		sp, _ := x.spec(list)
		for start := 0; start < len(entries); start += x.o.PageSize {
			page := entries[start:min(start+x.o.PageSize, len(entries))]
			got, ok, err := x.fetch(ctx, page)
			if err != nil {
				yield(zero, err)
				return
			}
			for i := range page {
				if !ok[i] || sp.value(&got[i]) != value {
					continue // gone, or moved to another list
				}
				if !yield(got[i], nil) {
					return
				}
			}
		}
	}
}

// fetch reads a page of entities, Concurrency at once; ok[i] is false for
// one that does not exist.
func (x *Table[T]) fetch(ctx context.Context, page []entry) ([]T, []bool, error) {
	got := make([]T, len(page))
	ok := make([]bool, len(page))
	errs := make([]error, len(page))
	sem := make(chan struct{}, x.o.Concurrency)
	var wg sync.WaitGroup
	for i := range page {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			v, err := x.repo.Get(ctx, page[i].PartitionKey, page[i].RowKey)
			switch {
			case err == nil:
				got[i], ok[i] = v, true
			case store.EntityNotFound(err):
			default:
				errs[i] = err
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return got, ok, nil
}
