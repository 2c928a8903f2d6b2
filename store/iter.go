package store

import (
	"context"
	"iter"
)

// All returns every entity q selects, across all pages: it follows
// continuation tokens until the last page (q.Continuation, when set, is
// where it starts). q.Top caps each page, not the total. It stops at the
// first error, which it yields with a zero Entity.
//
//	for e, err := range store.All(ctx, tbl, store.Query{Filter: f}) {
//		if err != nil {
//			return err
//		}
//		...
//	}
func All(ctx context.Context, t Table, q Query) iter.Seq2[Entity, error] {
	return func(yield func(Entity, error) bool) {
		for {
			page, err := t.Query(ctx, q)
			if err != nil {
				yield(Entity{}, err)
				return
			}
			for _, e := range page.Entities {
				if !yield(e, nil) {
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
