package azstore

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/wire"
)

// tableHandle is one table of the account; it implements store.Table.
type tableHandle struct {
	s    *Store
	name string
	// client addresses the table; recase may switch it to the name's
	// creation case on Azurite. Nil without a table endpoint.
	client atomic.Pointer[boundTable]
}

// boundTable is the client of one spelling of the table's name.
type boundTable struct {
	name string
	c    *aztables.Client
}

// Table implements store.Store. It does no I/O.
func (s *Store) Table(name string) store.Table {
	h := &tableHandle{s: s, name: name}
	if s.tables != nil {
		h.client.Store(&boundTable{name: name, c: s.tables.NewClient(name)})
	}
	return h
}

func (h *tableHandle) cl() *aztables.Client {
	if b := h.client.Load(); b != nil {
		return b.c
	}
	return nil
}

// Name implements store.Table.
func (h *tableHandle) Name() string { return h.name }

// ready checks what every entity operation needs before a request.
func (h *tableHandle) ready() error {
	if err := store.ValidateTableName(h.name); err != nil {
		return err
	}
	if h.cl() == nil {
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
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return store.Entity{}, err
	}
	if err := h.ready(); err != nil {
		return store.Entity{}, err
	}
	sel, err := store.ValidateGet(pk, rk, opts)
	if err != nil {
		return store.Entity{}, err
	}
	if !pathSafe(h.name, pk, rk) {
		return h.getByQuery(ctx, pk, rk, sel)
	}
	var raw *http.Response
	kctx, kpk := keyCtx(ctx, pk)
	get := func() (aztables.GetEntityResponse, error) {
		raw = nil
		return h.cl().GetEntity(runtime.WithCaptureResponse(kctx, &raw), kpk, rk,
			&aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatMinimal)})
	}
	resp, err := get()
	if h.recase(ctx, err) {
		resp, err = get()
	}
	if err != nil {
		return store.Entity{}, azbase.Classify(ctx, err, h.what("get from", pk, rk), false)
	}
	// Decode the service's own bytes: aztables re-marshals the entity
	// through map[string]any, which turns a whole Double 1.0 into 1.
	body, err := runtime.Payload(raw)
	if err != nil {
		return store.Entity{}, azbase.Classify(ctx, err, h.what("get from", pk, rk), false)
	}
	e, err := wire.DecodeEntity(body)
	if err != nil {
		return store.Entity{}, decodeErr(err, h.what("get from", pk, rk), false)
	}
	if resp.ETag != "" {
		e.ETag = store.ETag(resp.ETag)
	}
	project(&e, sel)
	return e, nil
}

// decodeErr reports an answer that could not be read (cut short, or
// garbled): as a lost answer, Unknown for a write.
func decodeErr(err error, what string, write bool) error {
	e := azbase.Lost(what, write, err)
	e.Message = what + ": the service's answer could not be read"
	if write {
		e.Message += " (it may have been applied)"
	}
	return e
}

// settle resolves a write whose outcome classify found unknown by reading
// its rows back (store.Settle); other errors pass through. A caller's
// context that ended leaves the outcome unknown: it said to stop.
func (h *tableHandle) settle(ctx context.Context, actions []store.Action, err error) ([]store.ActionResult, error) {
	if !errors.Is(err, store.ErrUnknownOutcome) || ctx.Err() != nil {
		return nil, err
	}
	return store.Settle(ctx, h, actions, err)
}

// settleOne is settle for a single write: the ETag it left.
func (h *tableHandle) settleOne(ctx context.Context, a store.Action, err error) (store.ETag, error) {
	res, err := h.settle(ctx, []store.Action{a}, err)
	if err != nil || len(res) == 0 {
		return "", err
	}
	return res[0].ETag, nil
}

// project keeps only the selected properties (keys, Timestamp and ETag
// always stay), as memstore does.
// Properties is never nil, as on memstore.
func project(e *store.Entity, sel []string) {
	if len(sel) == 0 {
		if e.Properties == nil {
			e.Properties = map[string]any{}
		}
		return
	}
	keep := make(map[string]any, len(sel))
	for _, n := range sel {
		if v, ok := e.Properties[n]; ok {
			keep[n] = v
		}
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
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return "", err
	}
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
	add := func() (aztables.AddEntityResponse, error) {
		return h.cl().AddEntity(h.s.once(ctx), body, &aztables.AddEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)})
	}
	resp, err := add()
	if h.recase(ctx, err) {
		resp, err = add()
	}
	if err != nil {
		err = azbase.Classify(ctx, err, h.what("insert into", e.PartitionKey, e.RowKey), true)
		return h.settleOne(ctx, store.Action{Kind: store.ActionInsert, Entity: e}, err)
	}
	return store.ETag(resp.ETag), nil
}

// Update implements store.Table. An update conditional on an ETag is
// retried only when refused outright: a replay after a lost response
// would fail its own condition.
func (h *tableHandle) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return "", err
	}
	if err := h.ready(); err != nil {
		return "", err
	}
	if err := store.ValidateEntity(&e); err != nil {
		return "", err
	}
	if err := store.ValidateETag(ifMatch); err != nil {
		return "", err
	}
	kind := store.ActionUpdateMerge
	if mode == store.Replace {
		kind = store.ActionUpdateReplace
	}
	if !pathSafe(h.name, e.PartitionKey, e.RowKey) {
		return h.writeByTransaction(ctx, store.Action{Kind: kind, Entity: e, IfMatch: ifMatch})
	}
	kctx, body, err := encodeKeyed(ctx, &e)
	if err != nil {
		return "", err
	}
	if ifMatch != store.ETagAny {
		kctx = h.s.once(kctx)
	}
	update := func() (aztables.UpdateEntityResponse, error) {
		return h.cl().UpdateEntity(kctx, body, &aztables.UpdateEntityOptions{
			IfMatch:    to.Ptr(azcore.ETag(ifMatch)),
			UpdateMode: updateMode(mode),
		})
	}
	resp, err := update()
	if h.recase(ctx, err) {
		resp, err = update()
	}
	if err != nil {
		err = azbase.Classify(ctx, err, h.what("update", e.PartitionKey, e.RowKey), true)
		return h.settleOne(ctx, store.Action{Kind: kind, Entity: e, IfMatch: ifMatch}, err)
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
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return "", err
	}
	if err := h.ready(); err != nil {
		return "", err
	}
	if err := store.ValidateEntity(&e); err != nil {
		return "", err
	}
	kind := store.ActionUpsertMerge
	if mode == store.Replace {
		kind = store.ActionUpsertReplace
	}
	if !pathSafe(h.name, e.PartitionKey, e.RowKey) {
		return h.writeByTransaction(ctx, store.Action{Kind: kind, Entity: e})
	}
	kctx, body, err := encodeKeyed(ctx, &e)
	if err != nil {
		return "", err
	}
	upsert := func() (aztables.UpsertEntityResponse, error) {
		return h.cl().UpsertEntity(kctx, body, &aztables.UpsertEntityOptions{UpdateMode: updateMode(mode)})
	}
	resp, err := upsert()
	if h.recase(ctx, err) {
		resp, err = upsert()
	}
	if err != nil {
		err = azbase.Classify(ctx, err, h.what("upsert into", e.PartitionKey, e.RowKey), true)
		return h.settleOne(ctx, store.Action{Kind: kind, Entity: e}, err)
	}
	return store.ETag(resp.ETag), nil
}

// Delete implements store.Table. A delete is retried only when refused
// outright: a replay after a lost response would report ResourceNotFound.
func (h *tableHandle) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	if err := store.ValidateKeys(pk, rk); err != nil {
		return err
	}
	if err := store.ValidateETag(ifMatch); err != nil {
		return err
	}
	if !pathSafe(h.name, pk, rk) {
		_, err := h.writeByTransaction(ctx, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, IfMatch: ifMatch})
		return err
	}
	kctx, kpk := keyCtx(ctx, pk)
	del := func() error {
		_, err := h.cl().DeleteEntity(h.s.once(kctx), kpk, rk, &aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETag(ifMatch))})
		return err
	}
	err = del()
	if h.recase(ctx, err) {
		err = del()
	}
	if err != nil {
		err = azbase.Classify(ctx, err, h.what("delete from", pk, rk), true)
		_, err = h.settleOne(ctx, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, IfMatch: ifMatch}, err)
	}
	return err
}

// keyCtx substitutes the empty-PartitionKey placeholder (see policy.go).
func keyCtx(ctx context.Context, pk string) (context.Context, string) {
	if pk == "" {
		return withEmptyPK(ctx), emptyPKPlaceholder
	}
	return ctx, pk
}

// encodeKeyed encodes an entity addressed by key in the URL (update,
// upsert), with the placeholder for an empty PartitionKey.
func encodeKeyed(ctx context.Context, e *store.Entity) (context.Context, []byte, error) {
	if e.PartitionKey != "" {
		body, err := encode(e)
		return ctx, body, err
	}
	c := *e
	c.PartitionKey = emptyPKPlaceholder
	body, err := encode(&c)
	return withEmptyPK(ctx), body, err
}
