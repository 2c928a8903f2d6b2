package memstore

import (
	"context"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Query implements store.Table. It visits only the key ranges the filter's
// plan allows (a point, a row range, a partition or a range of
// partitions); over several partitions it seeks past the rows outside the
// RowKey bounds (filter.KeyRange.Next) instead of walking them. It
// evaluates the whole filter on each entity it visits, and returns at most
// Top (or 1,000) entities with a token that resumes after the last key it
// examined. The token is a key, not a position, so it stays
// valid across concurrent writes.
func (h *tableHandle) Query(ctx context.Context, q store.Query) (store.Page, error) {
	matched, cont, err := h.page(ctx, q)
	if err != nil {
		return store.Page{}, err
	}
	page := store.Page{Continuation: cont}
	if len(matched) > 0 {
		page.Entities = make([]store.Entity, len(matched))
		for i, r := range matched {
			page.Entities[i] = r.entity(q.Select)
		}
	}
	return page, nil
}

// page runs one page of q for Query and QueryInto alike: every check of
// the request (filter.ParseQuery, the continuation token's seal), the
// injected fault, the throughput model's admission and charge, and the
// walk of the key ranges. It returns the matching records, whose bytes
// never change, for the caller to decode after the lock is released, and
// the page's continuation token.
func (h *tableHandle) page(ctx context.Context, q store.Query) ([]record, string, error) {
	f, plan, err := h.s.filters.parse(q)
	if err != nil {
		return nil, "", err
	}
	var fromPK, fromRK string
	resume := q.Continuation != ""
	scope := driver.TokenScope(h.name, q.Filter)
	if resume {
		if fromPK, fromRK, err = decodeEntityToken(q.Continuation, scope); err != nil {
			return nil, "", err
		}
	}
	t, err := h.begin(ctx, OpQuery)
	if err == nil {
		err = h.s.admitQuery(h.name, plan)
	}
	// One page is one request, answered here.
	driver.ReportTryErr(ctx, err)
	if err != nil {
		return nil, "", err
	}
	limit := q.Top
	if limit == 0 {
		limit = store.MaxPageSize
	}
	limit, empty := h.s.pageCut(limit)

	var cont string
	// Match sees a view of each visited record holding only the properties
	// the filter compares, decoded into one reused map, so a record that
	// does not match costs no full decode.
	names := f.Properties()
	var scratch map[string]any
	if len(names) > 0 {
		scratch = make(map[string]any, len(names))
	}
	// One view for the page: Match takes a pointer, which would otherwise
	// move a view per record to the heap.
	view := new(store.Entity)
	// Matching records are collected under the read lock and decoded after
	// it: their bytes never change, and writers wait less.
	matched := make([]record, 0, min(limit, 64))
	t.mu.RLock()
	for _, kr := range plan.Ranges {
		startPK, startRK, bounded := kr.Start()
		if resume && (!bounded || compareKeys(fromPK, fromRK, startPK, startRK) > 0) {
			startPK, startRK = fromPK, fromRK
		}
		done := false
		for seek := true; seek && !done; {
			seek = false
			outside := 0
			t.tree.ascend(startPK, startRK, func(r record) bool {
				if h.s.visits != nil {
					h.s.visits()
				}
				if kr.Past(r.pk(), r.rk()) {
					return false
				}
				if empty || len(matched) == limit {
					cont = encodeEntityToken(scope, r.pk(), r.rk())
					done = true
					return false
				}
				if npk, nrk, out := kr.Next(r.pk(), r.rk()); out {
					// Outside the RowKey bounds: after a few such rows in a
					// row, seek past them rather than walk the partition.
					if outside++; outside >= seekAfter {
						startPK, startRK, seek = npk, nrk, true
						return false
					}
					return true
				}
				outside = 0
				*view = r.matchView(names, scratch)
				if !f.Match(view) {
					return true
				}
				matched = append(matched, r)
				return true
			})
		}
		if done {
			break
		}
	}
	t.mu.RUnlock()
	h.s.payQuery(h.name, plan, matched)
	return matched, cont, nil
}

// seekAfter is how many consecutive rows outside a range's RowKey bounds a
// query walks before it seeks to where the range continues. A seek costs a
// descent of the tree, so partitions of a row or two are cheaper to walk.
const seekAfter = 8

func compareKeys(pk1, rk1, pk2, rk2 string) int {
	if c := store.CompareOrdinal(pk1, pk2); c != 0 {
		return c
	}
	return store.CompareOrdinal(rk1, rk2)
}

// pageCut applies WithShortPages: it may shorten a page or make it empty,
// as Azure does when a query crosses a partition-server boundary or runs
// out of time.
func (s *Store) pageCut(limit int) (int, bool) {
	if s.opts.shortPages == nil {
		return limit, false
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	switch s.opts.shortPages.IntN(4) {
	case 0:
		return limit, true
	case 1:
		return 1 + s.opts.shortPages.IntN(limit), false
	}
	return limit, false
}
