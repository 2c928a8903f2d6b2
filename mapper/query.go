package mapper

import (
	"context"
	"iter"
	"strconv"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Page is one page of a paged query: the items, and the opaque token that
// continues the query ("" on the last page).
type Page[T any] struct {
	// Items are the entities of the page, in key order.
	Items []T
	// Next continues the query (see QueryPage); it is "" on the last page.
	Next string
}

// Query returns every entity matching all of where (every entity when
// where is empty), decoded as T, across every page (over a
// store.TypedTable each page is read straight into values of T; see
// ReadPage): it follows
// continuation tokens until the service has no more, so short and empty
// pages are invisible to the caller. Only T's properties are requested
// ($select), unless T has an extra field or WithoutSelect was given.
//
// A failed request yields its error and ends the sequence; an entity that
// does not decode yields its error and the sequence goes on if the loop
// continues. Nothing is sent when a condition carries an error.
func (r *Repository[T]) Query(ctx context.Context, where ...Cond[T]) iter.Seq2[T, error] {
	return r.query(ctx, and(where))
}

func (r *Repository[T]) query(ctx context.Context, where Cond[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		q, err := r.storeQuery(where)
		if err != nil {
			yield(zero, err)
			return
		}
		q.Top = r.opts.pageSize
		ctx, fin := store.Observe(ctx, r.table, store.Operation{Name: "mapper.Query", Table: tableName(r.table)})
		n := 0
		defer func() { fin.Finish(err, n) }()
		var rows []Row[T]
		for {
			var cont string
			rows, cont, err = readPage(ctx, r.c, r.table, r.typed, q, rows[:0])
			if err != nil {
				yield(zero, err)
				return
			}
			n += len(rows)
			for i := range rows {
				if !yield(rows[i].Value, rows[i].Err) {
					return
				}
			}
			if cont == "" {
				return
			}
			q.Continuation = cont
		}
	}
}

// storeQuery checks the condition and builds the store query.
func (r *Repository[T]) storeQuery(where Cond[T]) (store.Query, error) {
	if r.err != nil {
		return store.Query{}, r.err
	}
	if err := where.Err(); err != nil {
		return store.Query{}, err
	}
	// A type of a declared kind reads only rows of its kind.
	if kc := r.c.kindCond(); kc.String() != "" {
		f := filter.And(kc, where.c)
		if err := f.Err(); err != nil {
			return store.Query{}, err
		}
		return store.Query{Filter: f.String(), Select: r.selectNames()}, nil
	}
	return store.Query{Filter: where.String(), Select: r.selectNames()}, nil
}

// QueryPage returns one screen of entities matching all of where: up to
// size items (1 to 1,000) starting at token ("" for the first page), and
// the token of the next page ("" after the last). It follows the service's
// continuation tokens until it has size items or the results end, so a
// page is short only at the end. The token is opaque and stays valid
// across writes: the next page resumes at the key that followed this page
// when it was read, so a row written later with a key between the last
// one returned and that one is not returned. It belongs to this query: a
// token used with another table or condition is refused (InvalidInput).
func (r *Repository[T]) QueryPage(ctx context.Context, token string, size int, where ...Cond[T]) (Page[T], error) {
	return r.queryPage(ctx, token, size, and(where))
}

func (r *Repository[T]) queryPage(ctx context.Context, token string, size int, where Cond[T]) (p Page[T], err error) {
	ctx, fin := store.Observe(ctx, r.table, store.Operation{Name: "mapper.QueryPage", Table: tableName(r.table)})
	defer func() { fin.Finish(err, len(p.Items)) }()
	q, err := r.storeQuery(where)
	if err != nil {
		return p, err
	}
	if size < 1 || size > store.MaxPageSize {
		return p, &Error{Type: r.c.typ, Msg: "QueryPage: size " + strconv.Itoa(size) + " is out of range: it must be 1 to " + strconv.Itoa(store.MaxPageSize)}
	}
	q.Continuation = token
	var rows []Row[T]
	for {
		q.Top = size - len(p.Items)
		var cont string
		rows, cont, err = readPage(ctx, r.c, r.table, r.typed, q, rows[:0])
		if err != nil {
			return Page[T]{}, err
		}
		for i := range rows {
			if rows[i].Err != nil {
				return Page[T]{}, rows[i].Err
			}
			p.Items = append(p.Items, rows[i].Value)
		}
		p.Next = cont
		if p.Next == "" || len(p.Items) >= size {
			return p, nil
		}
		q.Continuation = p.Next
	}
}
