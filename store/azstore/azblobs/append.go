package azblobs

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
)

// CreateAppend implements store.Container with Create Append Blob. An
// unconditional create is idempotent and retried by the client's policy;
// a conditional one is sent once and a lost answer is reported unknown.
func (h *containerHandle) CreateAppend(ctx context.Context, name string, opts *store.BlobPutOptions) (store.BlobProps, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return store.BlobProps{}, err
	}
	if err := h.readyBlob(name); err != nil {
		return store.BlobProps{}, err
	}
	o := &appendblob.CreateOptions{}
	if opts != nil && (opts.IfMatch != "" || opts.IfNoneMatchAny) {
		mac, err := conditions(opts.IfMatch, opts.IfNoneMatchAny)
		if err != nil {
			return store.BlobProps{}, err
		}
		o.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: mac}
		ctx = azbase.Once(ctx, h.svc.writeRetry)
	}
	resp, err := h.client.NewAppendBlobClient(name).Create(ctx, o)
	if err != nil {
		return store.BlobProps{}, azbase.Classify(ctx, err, h.what("create append", name), true)
	}
	p := store.BlobProps{Name: name, Type: store.AppendBlob, LastModified: azbase.DerefTime(resp.LastModified)}
	if resp.ETag != nil {
		p.ETag = store.ETag(*resp.ETag)
	}
	return p, nil
}

// conditions builds the If-Match / If-None-Match headers of a write.
func conditions(ifMatch store.ETag, ifNoneMatchAny bool) (*blob.ModifiedAccessConditions, error) {
	mac := &blob.ModifiedAccessConditions{}
	if ifMatch != "" {
		if err := store.ValidateETag(ifMatch); err != nil {
			return nil, err
		}
		mac.IfMatch = to.Ptr(azcore.ETag(ifMatch))
	}
	if ifNoneMatchAny {
		mac.IfNoneMatch = to.Ptr(azcore.ETagAny)
	}
	return mac, nil
}

// AppendBlock implements store.Container with Append Block. The request
// is never resent by the client's retry policy except when refused
// outright (503, no connection); a lost answer is settled by
// driver.SettleAppend, which resends it only when it carries an append
// position. A caller's context that ended leaves the outcome unknown.
func (h *containerHandle) AppendBlock(ctx context.Context, name string, block []byte, opts *store.AppendOptions) (store.AppendResult, error) {
	first, err := azbase.Begin(ctx)
	if err != nil {
		return store.AppendResult{}, err
	}
	if err := h.ready(); err != nil {
		return store.AppendResult{}, err
	}
	if err := driver.ValidateAppend(name, block, opts); err != nil {
		return store.AppendResult{}, err
	}
	var o store.AppendOptions
	if opts != nil {
		o = *opts
	}
	once := func(ctx context.Context) (store.AppendResult, error) {
		ctx, err := azbase.Begin(ctx) // a fresh record of this request
		if err != nil {
			return store.AppendResult{}, err
		}
		return h.appendOnce(ctx, name, block, o)
	}
	res, err := h.appendOnce(first, name, block, o)
	if err == nil || !errors.Is(err, store.ErrUnknownOutcome) || ctx.Err() != nil {
		return res, err
	}
	return driver.SettleAppend(ctx, h, name, block, o, err, once)
}

// appendOnce sends one Append Block request.
func (h *containerHandle) appendOnce(ctx context.Context, name string, block []byte, o store.AppendOptions) (store.AppendResult, error) {
	ao := &appendblob.AppendBlockOptions{}
	if o.AppendPosition != nil || o.MaxSize != nil {
		ao.AppendPositionAccessConditions = &appendblob.AppendPositionAccessConditions{AppendPosition: o.AppendPosition, MaxSize: o.MaxSize}
	}
	if o.IfMatch != "" {
		ao.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(o.IfMatch))}}
	}
	ctx = azbase.Once(ctx, h.svc.writeRetry)
	resp, err := h.client.NewAppendBlobClient(name).AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(block)), ao)
	if err != nil {
		return store.AppendResult{}, azbase.Classify(ctx, err, h.what("append to", name), true)
	}
	r := store.AppendResult{LastModified: azbase.DerefTime(resp.LastModified)}
	if resp.ETag != nil {
		r.ETag = store.ETag(*resp.ETag)
	}
	if resp.BlobCommittedBlockCount != nil {
		r.Blocks = int(*resp.BlobCommittedBlockCount)
	}
	if resp.BlobAppendOffset != nil {
		off, perr := strconv.ParseInt(*resp.BlobAppendOffset, 10, 64)
		if perr != nil {
			// The block was committed; only its offset is unreadable.
			return store.AppendResult{}, azbase.Lost(h.what("append to", name)+": unreadable x-ms-blob-append-offset "+azbase.Quote(*resp.BlobAppendOffset), true, perr)
		}
		r.Offset = off
	} else if o.AppendPosition != nil {
		r.Offset = *o.AppendPosition
	}
	r.Size = r.Offset + int64(len(block))
	return r, nil
}

// GetRange implements store.Container with a ranged Get Blob. A range that
// starts at or past the end is InvalidRange (416) as on Azure, also where
// Azurite answers it with an empty body.
func (h *containerHandle) GetRange(ctx context.Context, name string, offset, count int64) ([]byte, store.BlobProps, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, store.BlobProps{}, err
	}
	if err := h.ready(); err != nil {
		return nil, store.BlobProps{}, err
	}
	if err := driver.ValidateRange(name, offset, count); err != nil {
		return nil, store.BlobProps{}, err
	}
	data, p, err := h.download(ctx, name, blob.HTTPRange{Offset: offset, Count: count})
	if err != nil {
		return nil, store.BlobProps{}, err
	}
	if offset >= p.Size && (offset != 0 || count != 0) {
		return nil, store.BlobProps{}, driver.RangeNotSatisfiable(h.name, name, offset, p.Size)
	}
	return data, p, nil
}

// download reads a blob or a range of it, with the whole blob's props.
func (h *containerHandle) download(ctx context.Context, name string, r blob.HTTPRange) ([]byte, store.BlobProps, error) {
	resp, err := h.client.NewBlobClient(name).DownloadStream(ctx, &blob.DownloadStreamOptions{Range: r})
	if err != nil {
		return nil, store.BlobProps{}, azbase.Classify(ctx, err, h.what("get", name), false)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if resp.ContentLength != nil && *resp.ContentLength > 0 {
		buf.Grow(int(*resp.ContentLength))
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, store.BlobProps{}, azbase.Classify(ctx, err, h.what("get", name), false)
	}
	p := store.BlobProps{Name: name, Size: int64(buf.Len()), LastModified: azbase.DerefTime(resp.LastModified)}
	if total, ok := rangeTotal(azbase.Deref(resp.ContentRange)); ok {
		p.Size = total
	}
	if resp.ETag != nil {
		p.ETag = store.ETag(*resp.ETag)
	}
	if resp.BlobType != nil {
		p.Type = store.BlobType(*resp.BlobType)
	}
	if resp.BlobCommittedBlockCount != nil {
		p.Blocks = int(*resp.BlobCommittedBlockCount)
	}
	return buf.Bytes(), p, nil
}

// rangeTotal reads the blob's full length from a Content-Range header
// ("bytes 0-9/100").
func rangeTotal(cr string) (int64, bool) {
	_, total, ok := strings.Cut(cr, "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	return n, err == nil && n >= 0
}
