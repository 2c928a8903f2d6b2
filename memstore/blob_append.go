package memstore

import (
	"context"
	"errors"
	"slices"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// The blob operations a FaultFunc sees; its second argument is then the
// container's name. Put, DeleteBlob and List meet no faults.
const (
	// OpCreateAppendBlob is Container.CreateAppend.
	OpCreateAppendBlob Operation = "CreateAppendBlob"
	// OpAppendBlock is one Append Block request of Container.AppendBlock
	// (a resend after a lost answer is another).
	OpAppendBlock Operation = "AppendBlock"
	// OpGetBlob is Container.Get or Container.GetRange, including the
	// read-back that settles a lost append.
	OpGetBlob Operation = "GetBlob"
)

// writeFaults returns the faults of one blob write.
func (s *blobService) writeFaults(op Operation, container string) (before, after error) {
	if s.faults == nil {
		return nil, nil
	}
	return s.faults(op, container)
}

// readFault returns the fault of one blob read: its error, applied or not.
func (s *blobService) readFault(container string) error {
	before, after := s.writeFaults(OpGetBlob, container)
	if before != nil {
		return before
	}
	return after
}

// sendBlob sends one blob write through the fault schedule as a client
// sees it: apply runs it on the blob service.
func sendBlob[T any](s *blobService, op Operation, container string, apply func() (T, error)) (T, error) {
	var zero T
	before, after := s.writeFaults(op, container)
	if before != nil {
		return zero, seenByClient(before)
	}
	res, err := apply()
	if err != nil || after == nil {
		return res, err
	}
	return zero, seenByClient(after)
}

// checkType refuses a write that would change a blob's type: Azure
// answers InvalidBlobType (409) to a Put over an append blob and to a
// Create Append Blob over a block blob.
func checkType(container, name string, old *blobState, want store.BlobType, op string) error {
	if old == nil || old.kind == want {
		return nil
	}
	return store.Errorf(store.CodeInvalidBlobType, 409,
		"%s blob %q in container %q: it is a %s, and a %s cannot replace it: delete it first", op, clip(name), container, old.kind, want)
}

// CreateAppend implements store.Container: an empty append blob, replacing
// an append blob of that name unless opts forbid it. An unconditional
// create whose answer is lost is sent again (it is idempotent); a
// conditional one reports its outcome unknown.
func (h *containerHandle) CreateAppend(ctx context.Context, name string, opts *store.BlobPutOptions) (store.BlobProps, error) {
	if err := h.precheckBlob(ctx, name); err != nil {
		return store.BlobProps{}, err
	}
	var cond store.BlobPutOptions
	if opts != nil {
		cond = *opts
	}
	if cond.IfMatch != "" {
		if err := store.ValidateETag(cond.IfMatch); err != nil {
			return store.BlobProps{}, err
		}
	}
	conditional := cond.IfMatch != "" || cond.IfNoneMatchAny
	for attempt := 1; ; attempt++ {
		p, err := sendBlob(h.s, OpCreateAppendBlob, h.name, func() (store.BlobProps, error) { return h.createAppend(name, cond) })
		if err == nil || conditional || attempt == idempotentAttempts {
			return p, err
		}
		if !errors.Is(err, store.ErrUnknownOutcome) && !errors.Is(err, store.ErrTransient) {
			return p, err
		}
	}
}

func (h *containerHandle) createAppend(name string, cond store.BlobPutOptions) (store.BlobProps, error) {
	c, unlock, err := h.s.open(h.name, true)
	if err != nil {
		return store.BlobProps{}, err
	}
	defer unlock()
	old := c.blobs[name]
	if err := checkWrite(h.name, name, old, cond.IfMatch, cond.IfNoneMatchAny); err != nil {
		return store.BlobProps{}, err
	}
	if err := checkType(h.name, name, old, store.AppendBlob, "create append"); err != nil {
		return store.BlobProps{}, err
	}
	now := h.s.tick()
	b := &blobState{data: []byte{}, etag: blobETag(now), modified: now, kind: store.AppendBlob}
	c.blobs[name] = b
	if old == nil {
		i, _ := slices.BinarySearch(c.names, name)
		c.names = slices.Insert(c.names, i, name)
	}
	return b.props(name), nil
}

// AppendBlock implements store.Container. The checks run in the order
// Azurite runs them: the blob (BlobNotFound 404), its type
// (InvalidBlobType 409), its block count (BlockCountExceedsLimit 409),
// then If-Match, the append position and the size limit (412). A lost
// answer is settled by driver.SettleAppend, as azstore does.
func (h *containerHandle) AppendBlock(ctx context.Context, name string, block []byte, opts *store.AppendOptions) (store.AppendResult, error) {
	if err := h.precheck(ctx); err != nil {
		return store.AppendResult{}, err
	}
	if err := driver.ValidateAppend(name, block, opts); err != nil {
		return store.AppendResult{}, err
	}
	var o store.AppendOptions
	if opts != nil {
		o = *opts
	}
	once := func(context.Context) (store.AppendResult, error) {
		return sendBlob(h.s, OpAppendBlock, h.name, func() (store.AppendResult, error) { return h.appendBlock(name, block, o) })
	}
	res, err := once(ctx)
	if err == nil || !errors.Is(err, store.ErrUnknownOutcome) {
		return res, err
	}
	// The settling is what a client does next, with a context of its own
	// if the caller's is done.
	return driver.SettleAppend(context.WithoutCancel(ctx), h, name, block, o, err, once)
}

func (h *containerHandle) appendBlock(name string, block []byte, o store.AppendOptions) (store.AppendResult, error) {
	c, unlock, err := h.s.open(h.name, true)
	if err != nil {
		return store.AppendResult{}, err
	}
	defer unlock()
	b := c.blobs[name]
	size := int64(0)
	if b != nil {
		size = int64(len(b.data))
	}
	switch {
	case b == nil:
		return store.AppendResult{}, store.Errorf(store.CodeBlobNotFound, 404,
			"append to blob %q in container %q: the blob does not exist: create it with CreateAppend first", clip(name), h.name)
	case b.kind != store.AppendBlob:
		return store.AppendResult{}, store.Errorf(store.CodeInvalidBlobType, 409,
			"append to blob %q in container %q: it is a %s; only an append blob takes blocks", clip(name), h.name, b.kind)
	case b.blocks >= store.MaxAppendBlocks:
		return store.AppendResult{}, store.Errorf(store.CodeBlockCountExceedsLimit, 409,
			"append to blob %q in container %q: it holds %d committed blocks, the limit", clip(name), h.name, b.blocks)
	case o.IfMatch != "" && !etagMatches(o.IfMatch, b.etag):
		return store.AppendResult{}, store.Errorf(store.CodeConditionNotMet, 412,
			"append to blob %q in container %q: it has ETag %s, not the If-Match %s", clip(name), h.name, b.etag, o.IfMatch)
	case o.AppendPosition != nil && *o.AppendPosition != size:
		return store.AppendResult{}, store.Errorf(store.CodeAppendPositionConditionNotMet, 412,
			"append to blob %q in container %q at position %d: the blob is %d bytes long", clip(name), h.name, *o.AppendPosition, size)
	case o.MaxSize != nil && size+int64(len(block)) > *o.MaxSize:
		return store.AppendResult{}, store.Errorf(store.CodeMaxBlobSizeConditionNotMet, 412,
			"append to blob %q in container %q: %d bytes after %d would make it %d bytes, over MaxSize %d", clip(name), h.name, len(block), size, size+int64(len(block)), *o.MaxSize)
	}
	now := h.s.tick()
	b.data = append(b.data, block...)
	b.blocks++
	b.etag = blobETag(now)
	b.modified = now
	return store.AppendResult{Offset: size, Size: int64(len(b.data)), Blocks: b.blocks, ETag: b.etag, LastModified: now}, nil
}

// GetRange implements store.Container: a copy of the bytes from offset,
// count of them or to the end; InvalidRange (416) from the end on, except
// for offset 0 with count 0.
func (h *containerHandle) GetRange(ctx context.Context, name string, offset, count int64) ([]byte, store.BlobProps, error) {
	if err := h.precheck(ctx); err != nil {
		return nil, store.BlobProps{}, err
	}
	if err := driver.ValidateRange(name, offset, count); err != nil {
		return nil, store.BlobProps{}, err
	}
	if err := h.s.readFault(h.name); err != nil {
		return nil, store.BlobProps{}, err
	}
	c, unlock, err := h.s.open(h.name, false)
	if err != nil {
		return nil, store.BlobProps{}, err
	}
	defer unlock()
	b := c.blobs[name]
	if b == nil {
		return nil, store.BlobProps{}, store.Errorf(store.CodeBlobNotFound, 404,
			"blob %q does not exist in container %q", clip(name), h.name)
	}
	size := int64(len(b.data))
	if offset >= size && (offset != 0 || count != 0) {
		return nil, store.BlobProps{}, driver.RangeNotSatisfiable(h.name, name, offset, size)
	}
	end := size
	if count > 0 && count < end-offset {
		end = offset + count
	}
	return append([]byte{}, b.data[offset:end]...), b.props(name), nil
}
