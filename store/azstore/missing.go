package azstore

import (
	"context"
	"time"

	"github.com/tablekit/tablekit/store"
)

// missingQueue and missingContainer are the handles of a service the
// store was built without: every call fails with an error that says how
// to add it, before anything is sent.
type missingQueue string

func noService(service, pkg, ctor string) error {
	e := store.Errorf(store.CodeInvalidInput, 400,
		"azstore: this store has no %s service: import %q and pass %s in azstore.Options.Services", service, pkg, ctor)
	e.Source = store.SourceClient
	return e
}

func (q missingQueue) err() error {
	return noService("queue", "github.com/tablekit/tablekit/store/azstore/azqueues", "azqueues.Service()")
}

func (q missingQueue) Name() string                                        { return string(q) }
func (q missingQueue) Create(context.Context) error                        { return q.err() }
func (q missingQueue) Delete(context.Context) error                        { return q.err() }
func (q missingQueue) DeleteMessage(context.Context, string, string) error { return q.err() }
func (q missingQueue) Put(context.Context, []byte, *store.PutOptions) (store.Message, error) {
	return store.Message{}, q.err()
}
func (q missingQueue) Get(context.Context, int, time.Duration) ([]store.Message, error) {
	return nil, q.err()
}
func (q missingQueue) Peek(context.Context, int) ([]store.Message, error) { return nil, q.err() }
func (q missingQueue) Update(context.Context, string, string, []byte, time.Duration) (store.Message, error) {
	return store.Message{}, q.err()
}

type missingContainer string

func (c missingContainer) err() error {
	return noService("blob", "github.com/tablekit/tablekit/store/azstore/azblobs", "azblobs.Service()")
}

func (c missingContainer) Name() string                 { return string(c) }
func (c missingContainer) Create(context.Context) error { return c.err() }
func (c missingContainer) Delete(context.Context) error { return c.err() }
func (c missingContainer) Put(context.Context, string, []byte, *store.BlobPutOptions) (store.BlobProps, error) {
	return store.BlobProps{}, c.err()
}
func (c missingContainer) Get(context.Context, string) ([]byte, store.BlobProps, error) {
	return nil, store.BlobProps{}, c.err()
}
func (c missingContainer) DeleteBlob(context.Context, string, store.ETag) error { return c.err() }
func (c missingContainer) List(context.Context, store.BlobListOptions) (store.BlobPage, error) {
	return store.BlobPage{}, c.err()
}
func (c missingContainer) CreateAppend(context.Context, string, *store.BlobPutOptions) (store.BlobProps, error) {
	return store.BlobProps{}, c.err()
}
func (c missingContainer) AppendBlock(context.Context, string, []byte, *store.AppendOptions) (store.AppendResult, error) {
	return store.AppendResult{}, c.err()
}
func (c missingContainer) GetRange(context.Context, string, int64, int64) ([]byte, store.BlobProps, error) {
	return nil, store.BlobProps{}, c.err()
}
