package azstore

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Two limits of the service apply to keys in an entity's URL path, which
// point operations (Get, Update, Merge, Delete and the upserts) use and
// Query Entities and entity group transactions do not (they carry keys in
// the query string or the body):
//
//   - The Table service has decoded that path twice, so a key holding '%'
//     was read as another key: "Metric%25" became "Metric%" (Azure Storage
//     team, "PartitionKey or RowKey containing the percent '%' character
//     causes some Windows Azure Tables APIs to fail", 2012).
//   - The path segment Table(PartitionKey='...',RowKey='...') is subject to
//     the HTTP front end's URL segment limit (260 characters by default in
//     HTTP.sys), and older Table documentation warns that entities whose keys
//     total more than about 256 characters cannot be read with a point GET.
//
// Nothing says every service version is free of either, so azstore sends
// point operations on such keys through the unaffected operations: a read
// becomes a point query, a write a one-action transaction. The results,
// errors and ETags are the same.

// maxEntitySegment is the longest entity path segment azstore sends.
const maxEntitySegment = 255

// pathSafe reports whether keys may travel in the entity path of table.
func pathSafe(table, pk, rk string) bool {
	if strings.Contains(pk, "%") || strings.Contains(rk, "%") {
		return false
	}
	seg := len(table) + len("(PartitionKey='',RowKey='')") + segmentLen(pk) + segmentLen(rk)
	return seg <= maxEntitySegment
}

// segmentLen is a key's length in an entity path: an OData literal (a
// quote doubled) percent-encoded as a path segment.
func segmentLen(k string) int {
	return len(url.PathEscape(strings.ReplaceAll(k, "'", "''")))
}

// getByQuery reads one entity with a point query.
func (h *tableHandle) getByQuery(ctx context.Context, pk, rk string, sel []string) (store.Entity, error) {
	q := store.Query{Filter: filter.And(filter.PK.Eq(pk), filter.RK.Eq(rk)).String(), Select: sel}
	for {
		page, err := h.Query(ctx, q)
		if err != nil {
			return store.Entity{}, err
		}
		if len(page.Entities) > 0 {
			return page.Entities[0], nil
		}
		if page.Continuation == "" {
			return store.Entity{}, store.Errorf(store.CodeResourceNotFound, 404,
				"entity (PartitionKey %q, RowKey %q) does not exist in table %q", pk, rk, h.name)
		}
		q.Continuation = page.Continuation
	}
}

// writeByTransaction runs one write as a one-action transaction and
// reports it as a single operation (no action index).
func (h *tableHandle) writeByTransaction(ctx context.Context, a store.Action) (store.ETag, error) {
	res, err := h.Transact(ctx, []store.Action{a})
	if err != nil {
		var se *store.Error
		if errors.As(err, &se) && se.Index == 0 {
			c := *se
			c.Index = -1
			return "", &c
		}
		return "", err
	}
	return res[0].ETag, nil
}
