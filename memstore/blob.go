package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// blobService holds the store's blob containers. Lock order:
// blobService.mu, then a containerState's mu.
type blobService struct {
	tick func() time.Time
	// faults, when set, is the store's fault schedule (Store.faultFor).
	faults func(op Operation, container string) (before, after error)

	mu         sync.Mutex
	containers map[string]*containerState
}

func newBlobService(tick func() time.Time) *blobService {
	return &blobService{tick: tick, containers: make(map[string]*containerState)}
}

// container returns a handle; it does no I/O and looks the container up on
// each call.
func (s *blobService) container(name string) store.Container {
	return &containerHandle{s: s, name: name}
}

// containerState is one container: its blobs by name, and their names in
// ordinal order for listing.
type containerState struct {
	mu      sync.RWMutex
	deleted bool
	blobs   map[string]*blobState
	names   []string // sorted
}

type blobState struct {
	data     []byte
	etag     store.ETag
	modified time.Time
	kind     store.BlobType
	blocks   int // committed blocks of an append blob
}

func (b *blobState) props(name string) store.BlobProps {
	return store.BlobProps{Name: name, ETag: b.etag, Size: int64(len(b.data)), LastModified: b.modified, Type: b.kind, Blocks: b.blocks}
}

// listed is a blob's props as a listing reports them: no block count.
func (b *blobState) listed(name string) store.BlobProps {
	p := b.props(name)
	p.Blocks = 0
	return p
}

// open finds a live container and returns it locked (for writing when
// write is set); the caller unlocks it.
func (s *blobService) open(name string, write bool) (*containerState, func(), error) {
	s.mu.Lock()
	c := s.containers[name]
	s.mu.Unlock()
	if c != nil {
		lock, unlock := c.mu.RLock, c.mu.RUnlock
		if write {
			lock, unlock = c.mu.Lock, c.mu.Unlock
		}
		lock()
		if !c.deleted {
			return c, unlock, nil
		}
		unlock()
	}
	return nil, nil, store.Errorf(store.CodeContainerNotFound, 404, "container %q does not exist", name)
}

type containerHandle struct {
	s    *blobService
	name string
}

var _ store.Container = (*containerHandle)(nil)

// Name implements store.Container.
func (h *containerHandle) Name() string { return h.name }

func (h *containerHandle) precheck(ctx context.Context) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	return store.ValidateContainerName(h.name)
}

// precheckBlob also validates a blob name.
func (h *containerHandle) precheckBlob(ctx context.Context, blob string) error {
	if err := h.precheck(ctx); err != nil {
		return err
	}
	return store.ValidateBlobName(blob)
}

// Create implements store.Container: it creates the container unless it
// exists (Azure answers ContainerAlreadyExists, which the contract's
// create-if-missing semantics absorb).
func (h *containerHandle) Create(ctx context.Context) error {
	if err := h.precheck(ctx); err != nil {
		return err
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if _, ok := h.s.containers[h.name]; !ok {
		h.s.containers[h.name] = &containerState{blobs: make(map[string]*blobState)}
	}
	return nil
}

// Delete implements store.Container: ContainerNotFound (404) when missing.
func (h *containerHandle) Delete(ctx context.Context) error {
	if err := h.precheck(ctx); err != nil {
		return err
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	c := h.s.containers[h.name]
	if c == nil {
		return store.Errorf(store.CodeContainerNotFound, 404, "container %q does not exist", h.name)
	}
	delete(h.s.containers, h.name)
	c.mu.Lock()
	c.deleted = true
	c.mu.Unlock()
	return nil
}

// Put implements store.Container. With IfNoneMatchAny the blob must not
// exist (409 BlobAlreadyExists); with IfMatch it must exist with that ETag
// (412 ConditionNotMet otherwise, also when it is missing). An append blob
// of that name is not replaced: InvalidBlobType (409), as on Azure. The
// data is copied.
func (h *containerHandle) Put(ctx context.Context, name string, data []byte, opts *store.BlobPutOptions) (store.BlobProps, error) {
	if err := h.precheckBlob(ctx, name); err != nil {
		return store.BlobProps{}, err
	}
	var cond store.BlobPutOptions
	if opts != nil {
		cond = *opts
	}
	c, unlock, err := h.s.open(h.name, true)
	if err != nil {
		return store.BlobProps{}, err
	}
	defer unlock()
	old := c.blobs[name]
	if err := checkWrite(h.name, name, old, cond.IfMatch, cond.IfNoneMatchAny); err != nil {
		return store.BlobProps{}, err
	}
	if err := checkType(h.name, name, old, store.BlockBlob, "put"); err != nil {
		return store.BlobProps{}, err
	}
	now := h.s.tick()
	b := &blobState{data: append([]byte{}, data...), etag: blobETag(now), modified: now, kind: store.BlockBlob}
	c.blobs[name] = b
	if old == nil {
		i, _ := slices.BinarySearch(c.names, name)
		c.names = slices.Insert(c.names, i, name)
	}
	return b.props(name), nil
}

// checkWrite evaluates a write's conditions against the blob (nil when
// missing).
func checkWrite(container, name string, b *blobState, ifMatch store.ETag, ifNoneMatchAny bool) error {
	if b != nil && ifNoneMatchAny {
		return store.Errorf(store.CodeBlobAlreadyExists, 409,
			"blob %q in container %q already exists (If-None-Match: *)", clip(name), container)
	}
	if ifMatch == "" {
		return nil
	}
	if b == nil {
		return store.Errorf(store.CodeConditionNotMet, 412,
			"blob %q in container %q does not exist, so If-Match %s cannot match", clip(name), container, ifMatch)
	}
	if !etagMatches(ifMatch, b.etag) {
		return store.Errorf(store.CodeConditionNotMet, 412,
			"blob %q in container %q has ETag %s, not the If-Match %s", clip(name), container, b.etag, ifMatch)
	}
	return nil
}

// Get implements store.Container: BlobNotFound (404) when missing. The
// returned data is a copy.
func (h *containerHandle) Get(ctx context.Context, name string) ([]byte, store.BlobProps, error) {
	if err := h.precheckBlob(ctx, name); err != nil {
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
	return append([]byte{}, b.data...), b.props(name), nil
}

// DeleteBlob implements store.Container. Without ifMatch a missing blob is
// BlobNotFound (404); with it, a missing blob or another ETag is
// ConditionNotMet (412).
func (h *containerHandle) DeleteBlob(ctx context.Context, name string, ifMatch store.ETag) error {
	if err := h.precheckBlob(ctx, name); err != nil {
		return err
	}
	c, unlock, err := h.s.open(h.name, true)
	if err != nil {
		return err
	}
	defer unlock()
	b := c.blobs[name]
	if b == nil && ifMatch == "" {
		return store.Errorf(store.CodeBlobNotFound, 404, "blob %q does not exist in container %q", clip(name), h.name)
	}
	if err := checkWrite(h.name, name, b, ifMatch, false); err != nil {
		return err
	}
	delete(c.blobs, name)
	if i, ok := slices.BinarySearch(c.names, name); ok {
		c.names = slices.Delete(c.names, i, i+1)
	}
	return nil
}

// List implements store.Container: one page of blobs whose names start
// with Prefix, in ordinal name order, at most MaxResults (default and cap
// 5,000). NextMarker, when set, resumes at the next name even across
// concurrent writes.
func (h *containerHandle) List(ctx context.Context, opts store.BlobListOptions) (store.BlobPage, error) {
	if err := h.precheck(ctx); err != nil {
		return store.BlobPage{}, err
	}
	limit, err := driver.ResolveBlobListSize(opts.MaxResults)
	if err != nil {
		return store.BlobPage{}, err
	}
	from := opts.Prefix
	if opts.Marker != "" {
		next, err := decodeMarker(opts.Marker)
		if err != nil {
			return store.BlobPage{}, err
		}
		from = max(from, next)
	}
	c, unlock, err := h.s.open(h.name, false)
	if err != nil {
		return store.BlobPage{}, err
	}
	defer unlock()
	var page store.BlobPage
	i, _ := slices.BinarySearch(c.names, from)
	for ; i < len(c.names) && strings.HasPrefix(c.names[i], opts.Prefix); i++ {
		if len(page.Blobs) == limit {
			page.NextMarker = encodeMarker(c.names[i])
			break
		}
		page.Blobs = append(page.Blobs, c.blobs[c.names[i]].listed(c.names[i]))
	}
	return page, nil
}
