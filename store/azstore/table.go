package azstore

import (
	"context"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/wire"
)

// tableHandle is one table of the account; it implements store.Table.
type tableHandle struct {
	s      *Store
	name   string
	client *aztables.Client // nil without a table endpoint
}

// Table implements store.Store. It does no I/O.
func (s *Store) Table(name string) store.Table {
	h := &tableHandle{s: s, name: name}
	if s.tables != nil {
		h.client = s.tables.NewClient(name)
	}
	return h
}

// Name implements store.Table.
func (h *tableHandle) Name() string { return h.name }

// ready checks what every entity operation needs before a request.
func (h *tableHandle) ready() error {
	if err := store.ValidateTableName(h.name); err != nil {
		return err
	}
	if h.client == nil {
		return errNoEndpoint("table")
	}
	return nil
}

func (h *tableHandle) what(op string, pk, rk string) string {
	return op + " " + quote(h.name) + " (PartitionKey " + quote(pk) + ", RowKey " + quote(rk) + ")"
}

// Get implements store.Table. The service's point read has no $select, so
// a projection is applied to the entity read.
func (h *tableHandle) Get(ctx context.Context, pk, rk string, opts *store.GetOptions) (store.Entity, error) {
	if err := h.ready(); err != nil {
		return store.Entity{}, err
	}
	if err := store.ValidateKeys(pk, rk); err != nil {
		return store.Entity{}, err
	}
	var sel []string
	if opts != nil {
		if err := store.ValidateSelect(opts.Select); err != nil {
			return store.Entity{}, err
		}
		sel = opts.Select
	}
	if pk == "" {
		// aztables v1.4.0 refuses an empty PartitionKey in a point URL;
		// the service accepts it in a filter.
		e, err := h.getByQuery(ctx, pk, rk)
		if err != nil {
			return store.Entity{}, err
		}
		project(&e, sel)
		return e, nil
	}
	var raw *http.Response
	resp, err := h.client.GetEntity(runtime.WithCaptureResponse(ctx, &raw), pk, rk,
		&aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatMinimal)})
	if err != nil {
		return store.Entity{}, mapErr(err, h.what("get from", pk, rk))
	}
	// Decode the service's own bytes: aztables re-marshals the entity
	// through map[string]any, which turns a whole Double 1.0 into 1.
	body, err := runtime.Payload(raw)
	if err != nil {
		return store.Entity{}, mapErr(err, h.what("get from", pk, rk))
	}
	e, err := wire.DecodeEntity(body)
	if err != nil {
		return store.Entity{}, decodeErr(err, h.what("get from", pk, rk))
	}
	if resp.ETag != "" {
		e.ETag = store.ETag(resp.ETag)
	}
	project(&e, sel)
	return e, nil
}

// decodeErr reports a response the wire codec could not read.
func decodeErr(err error, what string) error {
	return &store.Error{Code: store.CodeInternalError, Status: 500, Index: -1,
		Message: what + ": unreadable response", Err: err}
}

// project keeps only the selected properties (keys, Timestamp and ETag
// always stay), as memstore does.
func project(e *store.Entity, sel []string) {
	if len(sel) == 0 || e.Properties == nil {
		return
	}
	keep := make(map[string]any, len(sel))
	for _, n := range sel {
		if v, ok := e.Properties[n]; ok {
			keep[n] = v
		}
	}
	if len(keep) == 0 {
		keep = nil
	}
	e.Properties = keep
}

// encode writes an entity's request body.
func encode(e *store.Entity) ([]byte, error) {
	body, err := wire.AppendEntity(make([]byte, 0, 256), e)
	if err != nil {
		return nil, store.Errorf(store.CodeInvalidValueType, 400, "%v", err)
	}
	return body, nil
}

// Insert implements store.Table. An insert is not idempotent: it is
// retried only when the service refused it outright (see docs/azure.md).
func (h *tableHandle) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	if err := h.ready(); err != nil {
		return "", err
	}
	if err := store.ValidateEntity(&e); err != nil {
		return "", err
	}
	body, err := encode(&e)
	if err != nil {
		return "", err
	}
	resp, err := h.client.AddEntity(h.s.once(ctx), body,
		&aztables.AddEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)})
	if err != nil {
		return "", mapErr(err, h.what("insert into", e.PartitionKey, e.RowKey))
	}
	return store.ETag(resp.ETag), nil
}

// Update implements store.Table. An update conditional on an ETag is
// retried only when refused outright: a replay after a lost response
// would fail its own condition.
func (h *tableHandle) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	if err := h.ready(); err != nil {
		return "", err
	}
	if err := store.ValidateEntity(&e); err != nil {
		return "", err
	}
	if err := store.ValidateETag(ifMatch); err != nil {
		return "", err
	}
	body, err := encode(&e)
	if err != nil {
		return "", err
	}
	if e.PartitionKey == "" {
		return "", h.errEmptyPK("update")
	}
	if ifMatch != store.ETagAny {
		ctx = h.s.once(ctx)
	}
	resp, err := h.client.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{
		IfMatch:    to.Ptr(azcore.ETag(ifMatch)),
		UpdateMode: updateMode(mode),
	})
	if err != nil {
		return "", mapErr(err, h.what("update", e.PartitionKey, e.RowKey))
	}
	return store.ETag(resp.ETag), nil
}

func updateMode(m store.UpdateMode) aztables.UpdateMode {
	if m == store.Replace {
		return aztables.UpdateModeReplace
	}
	return aztables.UpdateModeMerge
}

// Upsert implements store.Table. Upserts are idempotent and retried.
func (h *tableHandle) Upsert(ctx context.Context, e store.Entity, mode store.UpdateMode) (store.ETag, error) {
	if err := h.ready(); err != nil {
		return "", err
	}
	if err := store.ValidateEntity(&e); err != nil {
		return "", err
	}
	body, err := encode(&e)
	if err != nil {
		return "", err
	}
	if e.PartitionKey == "" {
		return "", h.errEmptyPK("upsert")
	}
	resp, err := h.client.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: updateMode(mode)})
	if err != nil {
		return "", mapErr(err, h.what("upsert into", e.PartitionKey, e.RowKey))
	}
	return store.ETag(resp.ETag), nil
}

// Delete implements store.Table. A delete is retried only when refused
// outright: a replay after a lost response would report ResourceNotFound.
func (h *tableHandle) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	if err := h.ready(); err != nil {
		return err
	}
	if err := store.ValidateKeys(pk, rk); err != nil {
		return err
	}
	if err := store.ValidateETag(ifMatch); err != nil {
		return err
	}
	if pk == "" {
		return h.errEmptyPK("delete")
	}
	_, err := h.client.DeleteEntity(h.s.once(ctx), pk, rk,
		&aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETag(ifMatch))})
	return mapErr(err, h.what("delete from", pk, rk))
}

// getByQuery reads one entity through a query on its two keys.
func (h *tableHandle) getByQuery(ctx context.Context, pk, rk string) (store.Entity, error) {
	f := filter.And(filter.PK.Eq(pk), filter.RK.Eq(rk))
	q := store.Query{Filter: f.String()}
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
				"entity (PartitionKey %s, RowKey %s) does not exist in table %s", quote(pk), quote(rk), quote(h.name))
		}
		q.Continuation = page.Continuation
	}
}

// errEmptyPK reports the one key aztables cannot address.
func (h *tableHandle) errEmptyPK(op string) error {
	return store.Errorf(store.CodeInvalidInput, 400,
		"%s in table %s: azstore cannot address an entity with an empty PartitionKey (aztables v1.4.0 refuses it in the request URL); insert, query and get work", op, quote(h.name))
}
