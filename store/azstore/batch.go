package azstore

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
)

// Transact implements store.Table: azstore writes the changeset itself
// (changesetBody), with every entity encoded once by store/wire (an action
// with a Source straight from it), sends it through aztables'
// SubmitTransaction (see raw.go) and reads the answer once: the ETag of
// every action on success, and on failure the failing action's code,
// status and index (from the "index:" prefix the service puts on the
// message, or the part's Content-ID).
//
// A transaction is all or nothing. One that may have been applied is never
// sent again unless it is idempotent (store.Idempotent): a replay could
// fail on its own inserts or undo another writer's work. Its rows are
// read back instead (driver.Settle).
func (h *tableHandle) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := store.ValidateTransaction(actions); err != nil {
		return nil, err
	}
	// A Timestamp property is accepted and left out of the body: the
	// service ignores it, and an emulator need not be trusted to.
	actions = driver.WithoutIgnoredActions(actions)
	bp := batchBuffers.Get().(*batchBuffer)
	defer func() {
		if bp != nil {
			batchBuffers.Put(bp)
		}
	}()
	rc := &rawCall{stubStatus: http.StatusAccepted, stubBody: stubTransaction}
	// A transaction of upserts and If-Match * updates only repeats
	// harmlessly, so it may be resent after a lost answer; any other is
	// sent again only when the service certainly did not act on it.
	sctx := ctx
	if !store.Idempotent(actions) {
		sctx = h.s.once(ctx)
	}
	sctx = withRawCall(sctx, rc)
	submit := func() error {
		// The body names the table, whose spelling recase may change.
		body, ct, err := h.changesetBody(bp, h.client.Load().name, actions)
		if err != nil {
			return err
		}
		rc.Data, rc.contentType, rc.resp = body, ct, nil
		_, err = h.cl().SubmitTransaction(sctx, stubActions, nil)
		return err
	}
	what := "transaction on " + quote(h.name)
	err = submit()
	var se *store.Error
	if errors.As(err, &se) {
		return nil, err // refused while encoding: nothing was sent
	}
	if h.recase(ctx, err) {
		err = submit()
	}
	results, err := h.transactResult(ctx, rc, err, what, actions)
	// Azurite reports a table named in another letter case inside the
	// batch answer (TableNotFound at action 0), where nothing was applied.
	if err != nil && h.recase(ctx, err) {
		err = submit()
		results, err = h.transactResult(ctx, rc, err, what, actions)
	}
	if rc.resp == nil || rc.resp.StatusCode != http.StatusAccepted {
		// The transport may not be done with the body: drop it.
		bp = nil
	}
	if err != nil {
		return h.settle(ctx, actions, err)
	}
	return results, nil
}

// stubActions is the stand-in transaction handed to aztables.
var stubActions = []aztables.TransactionAction{{ActionType: aztables.TransactionTypeDelete, Entity: []byte(`{"PartitionKey":"a","RowKey":"a"}`)}}

// transactResult reads the answer to a transaction: the ETags of its
// actions, or the failing action's error. An answer that was cut short or
// cannot be read leaves the outcome unknown (a 202 means the service
// processed the batch).
func (h *tableHandle) transactResult(ctx context.Context, rc *rawCall, err error, what string, actions []store.Action) ([]store.ActionResult, error) {
	raw := rc.resp
	if raw == nil || raw.StatusCode != http.StatusAccepted {
		if err == nil {
			return nil, decodeErr(errors.New("no changeset response"), what, true)
		}
		return nil, azbase.Classify(ctx, err, what, true)
	}
	body, perr := rc.payload()
	if perr != nil {
		return nil, decodeErr(perr, what, true)
	}
	parts, perr := parseChangeset(raw.Header.Get("Content-Type"), body)
	if perr != nil {
		return nil, decodeErr(perr, what, true)
	}
	for _, p := range parts {
		if p.status >= 400 {
			fail := nameAction(p.failure(what, len(actions)), actions)
			if driver.AmbiguousStatus(fail.Status) {
				fail.Unknown = true
			}
			return nil, fail
		}
	}
	if err != nil {
		return nil, azbase.Classify(ctx, err, what, true)
	}
	if len(parts) != len(actions) {
		return nil, decodeErr(errors.New("the changeset response has "+strconv.Itoa(len(parts))+" parts for "+strconv.Itoa(len(actions))+" actions"), what, true)
	}
	results := make([]store.ActionResult, len(actions))
	for i, p := range parts {
		// Responses come in request order; a Content-ID, when present,
		// names the action outright.
		if p.contentID >= 1 && p.contentID <= len(actions) {
			i = p.contentID - 1
		}
		if actions[i].Kind != store.ActionDelete {
			results[i].ETag = store.ETag(p.etag)
		}
	}
	return results, nil
}

// nameAction puts the failing action's keys in a transaction error's
// message: the service's message names neither.
func nameAction(err *store.Error, actions []store.Action) *store.Error {
	if err.Index >= 0 && err.Index < len(actions) {
		e := &actions[err.Index].Entity
		err.Message = "entity (PartitionKey " + quote(e.PartitionKey) + ", RowKey " + quote(e.RowKey) + ") in " + err.Message
	}
	return err
}

// changesetPart is one inner response of a batch.
type changesetPart struct {
	status    int
	etag      string
	contentID int // 1-based, 0 when absent
	body      []byte
}

// failure builds the *store.Error of a failed inner response.
func (p changesetPart) failure(what string, n int) *store.Error {
	code, msg := azbase.ParseServiceError(p.body)
	if code == "" {
		code = azbase.CodeForStatus(p.status)
	}
	index := -1
	if i := strings.IndexByte(msg, ':'); i > 0 {
		if v, err := strconv.Atoi(msg[:i]); err == nil && v >= 0 && v < n {
			index = v
			msg = msg[i+1:]
		}
	}
	if index < 0 && p.contentID > 0 && p.contentID <= n {
		index = p.contentID - 1
	}
	text := what + ": the service answered " + http.StatusText(p.status)
	if msg != "" {
		text += ": " + msg
	}
	return &store.Error{Code: code, Status: p.status, Index: index, Message: text}
}
