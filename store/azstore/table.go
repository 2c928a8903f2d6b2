package azstore

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
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
	sel, err := driver.ValidateGet(pk, rk, opts)
	if err != nil {
		return store.Entity{}, err
	}
	if !pathSafe(h.name, pk, rk) {
		return h.getByQuery(ctx, pk, rk, sel)
	}
	body, etag, err := h.getBody(ctx, pk, rk)
	if err != nil {
		return store.Entity{}, err
	}
	e, err := wire.DecodeEntity(body)
	if err != nil {
		return store.Entity{}, decodeErr(err, h.what("get from", pk, rk), false)
	}
	if etag != "" {
		e.ETag = store.ETag(etag)
	}
	project(&e, sel)
	return e, nil
}

// GetInto implements store.TypedTable: the service's answer is read once,
// straight into r.
func (h *tableHandle) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, r store.EntityReader) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	sel, err := driver.ValidateGet(pk, rk, opts)
	if err != nil {
		return err
	}
	if !pathSafe(h.name, pk, rk) {
		e, err := h.getByQuery(ctx, pk, rk, sel)
		if err != nil {
			return err
		}
		return driver.ReadEntity(&e, r)
	}
	body, etag, err := h.getBody(ctx, pk, rk)
	if err != nil {
		return err
	}
	if len(sel) > 0 {
		r = &selectReader{EntityReader: r, sel: sel}
	}
	if err := wire.ReadEntity(body, r); err != nil {
		var me *wire.MalformedError
		if errors.As(err, &me) {
			return decodeErr(err, h.what("get from", pk, rk), false)
		}
		return err
	}
	if etag != "" {
		return r.SetETag(store.ETag(etag))
	}
	return nil
}

// getBody reads one entity and returns the service's bytes and ETag
// header, which aztables never decodes (see raw.go).
func (h *tableHandle) getBody(ctx context.Context, pk, rk string) ([]byte, string, error) {
	// An empty stand-in answer: aztables decodes no map for it.
	rc := &rawCall{stubStatus: http.StatusOK}
	kctx, kpk := keyCtx(ctx, pk)
	kctx = withRawCall(kctx, rc)
	get := func() error {
		rc.resp = nil
		// aztables asks for minimal metadata in the Accept header, so the
		// answer carries the type annotations without a $format.
		_, err := h.cl().GetEntity(kctx, kpk, rk, nil)
		return err
	}
	err := get()
	if h.recase(ctx, err) {
		err = get()
	}
	if err != nil {
		return nil, "", azbase.Classify(ctx, err, h.what("get from", pk, rk), false)
	}
	body, err := rc.payload()
	if err != nil {
		return nil, "", azbase.Classify(ctx, err, h.what("get from", pk, rk), false)
	}
	return body, rc.etag(), nil
}

// selectReader passes on only the selected properties (keys, Timestamp
// and ETag always), as project does.
type selectReader struct {
	store.EntityReader
	sel []string
}

func (s *selectReader) ok(name string) bool { return slices.Contains(s.sel, name) }

func (s *selectReader) SetString(name, v string) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetString(name, v)
}

func (s *selectReader) SetBinary(name string, v []byte) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetBinary(name, v)
}

func (s *selectReader) SetBool(name string, v bool) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetBool(name, v)
}

func (s *selectReader) SetInt32(name string, v int32) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetInt32(name, v)
}

func (s *selectReader) SetInt64(name string, v int64) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetInt64(name, v)
}

func (s *selectReader) SetDouble(name string, v float64) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetDouble(name, v)
}

func (s *selectReader) SetTime(name string, v time.Time) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetTime(name, v)
}

func (s *selectReader) SetGUID(name string, v store.GUID) error {
	if !s.ok(name) {
		return nil
	}
	return s.EntityReader.SetGUID(name, v)
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
// its rows back (driver.Settle); other errors pass through. A caller's
// context that ended leaves the outcome unknown: it said to stop.
func (h *tableHandle) settle(ctx context.Context, actions []store.Action, err error) ([]store.ActionResult, error) {
	if !errors.Is(err, store.ErrUnknownOutcome) || ctx.Err() != nil {
		return nil, err
	}
	return driver.Settle(ctx, h, actions, err)
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

// Insert implements store.Table. An insert is not idempotent: it is
// retried only when the service refused it outright (see docs/azure.md).
func (h *tableHandle) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	return h.Write(ctx, store.Action{Kind: store.ActionInsert, Entity: e})
}

// Update implements store.Table. An update conditional on an ETag is
// retried only when refused outright: a replay after a lost response
// would fail its own condition.
func (h *tableHandle) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	kind := store.ActionUpdateMerge
	if mode == store.Replace {
		kind = store.ActionUpdateReplace
	}
	return h.Write(ctx, store.Action{Kind: kind, Entity: e, IfMatch: ifMatch})
}

// Upsert implements store.Table. Upserts are idempotent and retried.
func (h *tableHandle) Upsert(ctx context.Context, e store.Entity, mode store.UpdateMode) (store.ETag, error) {
	kind := store.ActionUpsertMerge
	if mode == store.Replace {
		kind = store.ActionUpsertReplace
	}
	return h.Write(ctx, store.Action{Kind: kind, Entity: e})
}

// Write implements store.TypedTable, and Insert, Update and Upsert: the
// entity (from a.Source, checked as it is written, or from a.Entity,
// validated first) is encoded once by store/wire, and those bytes are the
// request body the service receives.
func (h *tableHandle) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	if a.Kind == store.ActionDelete {
		return "", h.Delete(ctx, a.Entity.PartitionKey, a.Entity.RowKey, a.IfMatch)
	}
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return "", err
	}
	if err := h.ready(); err != nil {
		return "", err
	}
	if a.Kind < store.ActionInsert || a.Kind > store.ActionDelete {
		return "", store.Errorf(store.CodeInvalidInput, 400, "unknown action kind %d", int(a.Kind))
	}
	pk, rk := a.Entity.PartitionKey, a.Entity.RowKey
	var body []byte
	if a.Source != nil {
		if a.Entity.Properties != nil {
			return "", store.Errorf(store.CodeInvalidInput, 400, "entity (PartitionKey %s, RowKey %s): an action has both Source and Entity.Properties: set one", quote(pk), quote(rk))
		}
		if body, err = wire.AppendSource(make([]byte, 0, 512), pk, rk, a.Source, false); err != nil {
			return "", err
		}
	} else {
		if err := store.ValidateEntity(&a.Entity); err != nil {
			return "", err
		}
		// A Timestamp property is accepted and left out of the body: the
		// service ignores it, and an emulator need not be trusted to.
		a.Entity.Properties = driver.WithoutIgnored(a.Entity.Properties)
		if body, err = encode(&a.Entity); err != nil {
			return "", err
		}
	}
	if a.Kind.NeedsIfMatch() {
		if err := store.ValidateETag(a.IfMatch); err != nil {
			return "", err
		}
	}
	if a.Kind != store.ActionInsert && !pathSafe(h.name, pk, rk) {
		return h.writeByTransaction(ctx, a)
	}
	if len(body) >= asciiThreshold {
		body = asciiJSON(body)
	}
	rc := &rawCall{Body: azbase.Body{Data: body}, stubStatus: http.StatusNoContent}
	var send func() error
	var op string // names the write in an error (h.what, built only then)
	switch a.Kind {
	case store.ActionInsert:
		op = "insert into"
		rc.contentType, rc.prefer = "application/json", "return-no-content"
		sctx := h.s.once(withRawCall(ctx, rc))
		send = func() error {
			rc.resp, rc.sent, rc.err = nil, false, nil
			_, err := h.cl().AddEntity(sctx, insertStub, nil)
			return rc.outcome(err)
		}
	case store.ActionUpdateMerge, store.ActionUpdateReplace:
		op = "update"
		kctx, stub := keyedStub(ctx, pk, rk)
		if a.IfMatch != store.ETagAny {
			kctx = h.s.once(kctx)
		}
		kctx = withRawCall(kctx, rc)
		send = func() error {
			_, err := h.cl().UpdateEntity(kctx, stub, &aztables.UpdateEntityOptions{
				IfMatch:    to.Ptr(azcore.ETag(a.IfMatch)),
				UpdateMode: updateMode(a.Kind == store.ActionUpdateReplace),
			})
			return err
		}
	default:
		op = "upsert into"
		kctx, stub := keyedStub(ctx, pk, rk)
		kctx = withRawCall(kctx, rc)
		send = func() error {
			_, err := h.cl().UpsertEntity(kctx, stub, &aztables.UpsertEntityOptions{UpdateMode: updateMode(a.Kind == store.ActionUpsertReplace)})
			return err
		}
	}
	err = send()
	if h.recase(ctx, err) {
		err = send()
	}
	if err != nil {
		err = azbase.Classify(ctx, err, h.what(op, pk, rk), true)
		return h.settleOne(ctx, a, err)
	}
	return store.ETag(rc.etag()), nil
}

// encode writes an entity's request body.
func encode(e *store.Entity) ([]byte, error) {
	body, err := wire.AppendEntity(make([]byte, 0, 512), e)
	if err != nil {
		return nil, store.Errorf(store.CodeInvalidValueType, 400, "%v", err)
	}
	return body, nil
}

// asciiThreshold is the body size from which non-ASCII characters are
// written as escapes (see tablePolicy).
const asciiThreshold = 64 * 1024

// insertStub is the stand-in of an insert. aztables posts to the table's
// URL, so the entity's keys do not matter, and JSON null is the stand-in
// it decodes and encodes for nothing (a nil map: no request body, which
// the policy then sets). Its only use of the entity is to replace an
// error with "PartitionKey or RowKey missing" when the entity lacks them,
// which null does: rawCall.outcome gives back the real error.
var insertStub = []byte(`null`)

// keyedStub is the stand-in (see raw.go) of a write addressed by key in the URL: the
// keys alone, with the placeholder for an empty PartitionKey, which
// aztables reads to build the URL.
func keyedStub(ctx context.Context, pk, rk string) (context.Context, []byte) {
	kctx, kpk := keyCtx(ctx, pk)
	return kctx, wire.AppendEntityEnd(wire.AppendEntityStart(make([]byte, 0, 32+len(kpk)+len(rk)), kpk, rk))
}

func updateMode(replace bool) aztables.UpdateMode {
	if replace {
		return aztables.UpdateModeReplace
	}
	return aztables.UpdateModeMerge
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
