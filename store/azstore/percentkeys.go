package azstore

import (
	"context"
	"errors"
	"strings"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// The Table service has decoded the URL path of point operations (Get,
// Update, Merge, Delete and the upserts) twice, so a key holding '%' was
// read as another key: "Metric%25" became "Metric%" (Azure Storage team,
// "PartitionKey or RowKey containing the percent '%' character causes some
// Windows Azure Tables APIs to fail", 2012). Query Entities and entity
// group transactions carry keys in the query string or the body and were
// not affected. Nothing says every service version has been fixed, so
// azstore sends point operations on such keys through those two instead:
// a read becomes a point query, a write a one-action transaction. The
// results, errors and ETags are the same.

// pathSafe reports whether keys may travel in an entity URL's path.
func pathSafe(pk, rk string) bool {
	return !strings.Contains(pk, "%") && !strings.Contains(rk, "%")
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
