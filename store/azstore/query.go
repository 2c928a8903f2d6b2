package azstore

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/wire"
)

// Entity continuation tokens carry the service's NextPartitionKey and
// NextRowKey (themselves opaque service strings), sealed by
// driver.SealToken: bound to the table and filter they continue, and
// checked for damage.
const entityTokenPrefix = "tka1."

func encodeEntityToken(scope uint64, npk, nrk string) string {
	return driver.SealToken(entityTokenPrefix, scope, npk, nrk)
}

func decodeEntityToken(tok string, scope uint64) (npk, nrk string, err error) {
	parts, err := driver.OpenToken(tok, entityTokenPrefix, scope, 2)
	if err != nil {
		return "", "", err
	}
	if parts[0] == "" {
		return "", "", store.Errorf(store.CodeInvalidInput, 400, "continuation token %s is not one this store issued", quoteTrunc(tok))
	}
	return parts[0], parts[1], nil
}

// Query implements store.Table: one page through aztables' pager, decoded
// from the service's own bytes by store/wire.
//
// The filter is parsed by store/filter before anything is sent, so a bad
// filter fails with InvalidInput as on memstore, and every returned entity
// is checked again with the parsed filter's Match: Azurite compares values
// of different types loosely, and this drops what the service would not
// have matched. $select is sent with the filter's properties added (the
// check needs them) and applied again after the check. A selected property
// the entity lacks is absent from Properties, as on memstore (Azure sends
// it as null).
func (h *tableHandle) Query(ctx context.Context, q store.Query) (store.Page, error) {
	f, body, cont, err := h.page(ctx, q)
	if err != nil {
		return store.Page{}, err
	}
	page := store.Page{Continuation: cont}
	err = wire.EachEntity(body, func(obj []byte) error {
		e, err := wire.DecodeEntity(obj)
		if err != nil {
			return err
		}
		if !f.MatchesAll() && !f.Match(&e) {
			return nil
		}
		project(&e, q.Select)
		page.Entities = append(page.Entities, e)
		return nil
	})
	if err != nil {
		return store.Page{}, decodeErr(err, "query "+quote(h.name), false)
	}
	return page, nil
}

// page sends the request of one page of q for Query and QueryInto alike:
// every check of the request (filter.ParseQuery: $top, $select, the
// filter's length and syntax; the continuation token's seal), the filter
// as the server is sent it (canonical; on an emulator widened, or left
// out when Azurite would match too little), the $select with the
// filter's properties added, the retries and the classification of a
// failure. It returns the parsed filter, which the caller applies to
// every entity of the body, the service's answer and the page's
// continuation token.
func (h *tableHandle) page(ctx context.Context, q store.Query) (*filter.Filter, []byte, string, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	if err := h.ready(); err != nil {
		return nil, nil, "", err
	}
	f, err := filter.ParseQuery(q)
	if err != nil {
		return nil, nil, "", err
	}
	// Minimal metadata (the type annotations) is asked for by the Accept
	// header aztables sends; no $format.
	opts := &aztables.ListEntitiesOptions{}
	if q.Continuation != "" {
		npk, nrk, err := decodeEntityToken(q.Continuation, driver.TokenScope(h.name, q.Filter))
		if err != nil {
			return nil, nil, "", err
		}
		opts.NextPartitionKey = &npk
		if nrk != "" {
			opts.NextRowKey = &nrk
		}
	}
	// The filter goes out in its canonical form (f.String()): the text
	// filter.Parse checked, with no D suffix and no exponent, which Azurite
	// would read as property names. On an emulator, a filter Azurite would
	// match too few entities for is evaluated here alone (emulatorEvaluates).
	sent := f
	if h.s.emulator {
		sent = emulatorFilter(f)
	}
	if !sent.MatchesAll() && !(h.s.emulator && !emulatorEvaluates(f)) {
		opts.Filter = to.Ptr(sent.String())
	}
	if q.Top > 0 {
		opts.Top = to.Ptr(int32(q.Top))
	}
	if len(q.Select) > 0 {
		// The service projects; Match needs the filtered properties too,
		// and the caller drops them again afterwards.
		names := []string{"PartitionKey", "RowKey", "Timestamp"}
		for _, p := range slices.Concat(q.Select, f.Properties()) {
			if !slices.Contains(names, p) {
				names = append(names, p)
			}
		}
		opts.Select = to.Ptr(strings.Join(names, ","))
	}
	resp, body, err := h.fetch(ctx, opts)
	if h.recase(ctx, err) {
		resp, body, err = h.fetch(ctx, opts)
	}
	if err != nil {
		return nil, nil, "", azbase.Classify(ctx, err, "query "+quote(h.name), false)
	}
	var cont string
	if resp.NextPartitionKey != nil && *resp.NextPartitionKey != "" {
		nrk := ""
		if resp.NextRowKey != nil {
			nrk = *resp.NextRowKey
		}
		cont = encodeEntityToken(driver.TokenScope(h.name, q.Filter), *resp.NextPartitionKey, nrk)
	}
	return f, body, cont, nil
}

// fetch reads one page and returns aztables' answer (its continuation
// headers) with the raw response body.
func (h *tableHandle) fetch(ctx context.Context, opts *aztables.ListEntitiesOptions) (aztables.ListEntitiesResponse, []byte, error) {
	var raw *http.Response
	var qb queryBody
	first := withQueryBody(ctx, &qb)
	if opts.Filter != nil {
		first = policy.WithRetryOptions(first, h.s.filterRetry)
	}
	resp, err := h.cl().NewListEntitiesPager(opts).NextPage(policy.WithCaptureResponse(first, &raw))
	if err != nil && opts.Filter != nil && raw != nil && raw.StatusCode == http.StatusInternalServerError {
		// Azurite fails some valid filters (an Int64 literal against an
		// Int32 property) with a 500. The filter was checked by
		// filter.Parse, so read the same key range unfiltered and let
		// Match do the filtering; continuation stays key-based, so the
		// next page may go back to the filtered request.
		unfiltered := *opts
		unfiltered.Filter, unfiltered.Select = nil, nil
		qb = queryBody{}
		resp, err = h.cl().NewListEntitiesPager(&unfiltered).NextPage(withQueryBody(ctx, &qb))
	}
	return resp, qb.data, err
}
