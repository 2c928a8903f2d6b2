package azblobs

import (
	"bytes"
	"context"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
)

// containerHandle is one blob container; it implements store.Container.
type containerHandle struct {
	svc    *service
	name   string
	client *container.Client
}

// Name implements store.Container.
func (h *containerHandle) Name() string { return h.name }

func (h *containerHandle) ready() error {
	if err := store.ValidateContainerName(h.name); err != nil {
		return err
	}
	if h.client == nil {
		return azbase.ErrNoEndpoint("blob")
	}
	return nil
}

func (h *containerHandle) readyBlob(name string) error {
	if err := h.ready(); err != nil {
		return err
	}
	return store.ValidateBlobName(name)
}

func (h *containerHandle) what(op, name string) string {
	return op + " blob " + azbase.Quote(name) + " in container " + azbase.Quote(h.name)
}

// Create implements store.Container; an existing container is not an error.
func (h *containerHandle) Create(ctx context.Context) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.Create(ctx, nil)
	err = azbase.Classify(ctx, err, "create container "+azbase.Quote(h.name), true)
	if store.Code(err) == store.CodeContainerAlreadyExists {
		return nil
	}
	return err
}

// Delete implements store.Container.
func (h *containerHandle) Delete(ctx context.Context) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.Delete(azbase.Once(ctx, h.svc.writeRetry), nil)
	return azbase.Classify(ctx, err, "delete container "+azbase.Quote(h.name), true)
}

// Put implements store.Container. A conditional put is retried only when
// refused outright; an unconditional one is idempotent and retried.
func (h *containerHandle) Put(ctx context.Context, name string, data []byte, opts *store.BlobPutOptions) (store.BlobProps, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return store.BlobProps{}, err
	}
	if err := h.readyBlob(name); err != nil {
		return store.BlobProps{}, err
	}
	o := &blockblob.UploadOptions{}
	if opts != nil && (opts.IfMatch != "" || opts.IfNoneMatchAny) {
		mac := &blob.ModifiedAccessConditions{}
		if opts.IfMatch != "" {
			if err := store.ValidateETag(opts.IfMatch); err != nil {
				return store.BlobProps{}, err
			}
			mac.IfMatch = to.Ptr(azcore.ETag(opts.IfMatch))
		}
		if opts.IfNoneMatchAny {
			mac.IfNoneMatch = to.Ptr(azcore.ETagAny)
		}
		o.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: mac}
		ctx = azbase.Once(ctx, h.svc.writeRetry)
	}
	resp, err := h.client.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), o)
	if err != nil {
		return store.BlobProps{}, azbase.Classify(ctx, err, h.what("put", name), true)
	}
	p := store.BlobProps{Name: name, Size: int64(len(data)), Type: store.BlockBlob}
	if resp.ETag != nil {
		p.ETag = store.ETag(*resp.ETag)
	}
	p.LastModified = azbase.DerefTime(resp.LastModified)
	return p, nil
}

// Get implements store.Container.
func (h *containerHandle) Get(ctx context.Context, name string) ([]byte, store.BlobProps, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, store.BlobProps{}, err
	}
	if err := h.readyBlob(name); err != nil {
		return nil, store.BlobProps{}, err
	}
	return h.download(ctx, name, blob.HTTPRange{})
}

// DeleteBlob implements store.Container.
func (h *containerHandle) DeleteBlob(ctx context.Context, name string, ifMatch store.ETag) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.readyBlob(name); err != nil {
		return err
	}
	var o *blob.DeleteOptions
	if ifMatch != "" {
		if err := store.ValidateETag(ifMatch); err != nil {
			return err
		}
		o = &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(ifMatch))}}}
	}
	_, err = h.client.NewBlobClient(name).Delete(azbase.Once(ctx, h.svc.writeRetry), o)
	return azbase.Classify(ctx, err, h.what("delete", name), true)
}

// List implements store.Container: one page in name order. The marker is
// the service's own NextMarker.
func (h *containerHandle) List(ctx context.Context, opts store.BlobListOptions) (store.BlobPage, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return store.BlobPage{}, err
	}
	if err := h.ready(); err != nil {
		return store.BlobPage{}, err
	}
	size, err := driver.ResolveBlobListSize(opts.MaxResults)
	if err != nil {
		return store.BlobPage{}, err
	}
	lo := &container.ListBlobsFlatOptions{MaxResults: to.Ptr(int32(size))}
	if opts.Prefix != "" {
		lo.Prefix = &opts.Prefix
	}
	if opts.Marker != "" {
		lo.Marker = &opts.Marker
	}
	resp, err := h.client.NewListBlobsFlatPager(lo).NextPage(ctx)
	if err != nil {
		return store.BlobPage{}, azbase.Classify(ctx, err, "list container "+azbase.Quote(h.name), false)
	}
	var page store.BlobPage
	if resp.Segment != nil {
		for _, b := range resp.Segment.BlobItems {
			if b == nil || b.Name == nil {
				continue
			}
			p := store.BlobProps{Name: *b.Name}
			if b.Properties != nil {
				if b.Properties.ETag != nil {
					p.ETag = listedETag(string(*b.Properties.ETag))
				}
				if b.Properties.ContentLength != nil {
					p.Size = *b.Properties.ContentLength
				}
				p.LastModified = azbase.DerefTime(b.Properties.LastModified)
				if b.Properties.BlobType != nil {
					p.Type = store.BlobType(*b.Properties.BlobType)
				}
			}
			page.Blobs = append(page.Blobs, p)
		}
	}
	page.NextMarker = azbase.Deref(resp.NextMarker)
	return page, nil
}

// listedETag returns a List Blobs ETag in the quoted form the service's
// ETag headers carry. The listing's <Etag> element holds the bare value
// (0x8DA70795BA89795, on Azure and Azurite alike) while Put and Get answer
// "0x8DA70795BA89795": quoting it gives one ETag per blob version, usable
// as an If-Match condition.
func listedETag(v string) store.ETag {
	if v == "" || v == string(store.ETagAny) || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, `W/"`) {
		return store.ETag(v)
	}
	return store.ETag(`"` + v + `"`)
}
