package store

import "time"

// Append blobs: a blob written only by adding blocks at its end, one
// request per block, each block atomic. Log data goes there (see
// patterns/logdata).

// Codes of the Blob service for append blobs and ranged reads.
const (
	// CodeAppendPositionConditionNotMet (412): AppendOptions.AppendPosition
	// is not the blob's length.
	CodeAppendPositionConditionNotMet = "AppendPositionConditionNotMet"
	// CodeMaxBlobSizeConditionNotMet (412): the block would take the blob
	// past AppendOptions.MaxSize, or it is past it already.
	CodeMaxBlobSizeConditionNotMet = "MaxBlobSizeConditionNotMet"
	// CodeBlockCountExceedsLimit (409): the append blob holds
	// MaxAppendBlocks committed blocks; it takes no more.
	CodeBlockCountExceedsLimit = "BlockCountExceedsLimit"
	// CodeInvalidBlobType (409): the operation does not apply to a blob of
	// this type (an append to a block blob, a Put or CreateAppend over a
	// blob of the other type).
	CodeInvalidBlobType = "InvalidBlobType"
	// CodeInvalidRange (416): a ranged read starts at or past the blob's end.
	CodeInvalidRange = "InvalidRange"
	// CodeInvalidHeaderValue (400): a request header holds a value the
	// service refuses, such as the Content-Length 0 of an empty block.
	CodeInvalidHeaderValue = "InvalidHeaderValue"
)

// Append blob limits.
const (
	// MaxAppendBlockSize is the largest block one Append Block takes, 100
	// MiB, for service version 2022-11-02 and later (the official SDK
	// sends a later one). Larger blocks are refused before they are sent
	// with RequestBodyTooLarge (413).
	MaxAppendBlockSize = 100 << 20
	// MaxAppendBlockSizeLegacy is the limit of service versions before
	// 2022-11-02, 4 MiB; Azure's scalability targets still list it as
	// the append block size, so a writer that must run everywhere keeps
	// its blocks within it.
	MaxAppendBlockSizeLegacy = 4 << 20
	// MaxAppendBlocks is the most committed blocks an append blob holds:
	// the 50,001st append fails with BlockCountExceedsLimit (409).
	MaxAppendBlocks = 50_000
)

// BlobType is the type of a blob: block blobs are written whole by Put,
// append blobs grow by AppendBlock.
type BlobType string

// The blob types tablekit writes.
const (
	// BlockBlob is a blob written whole (Container.Put).
	BlockBlob BlobType = "BlockBlob"
	// AppendBlob is a blob created empty (Container.CreateAppend) that
	// grows by blocks added at its end (Container.AppendBlock).
	AppendBlob BlobType = "AppendBlob"
)

// AppendOptions make an append conditional. The pointers are the
// service's optional headers: nil sends none (new(n) sets one).
type AppendOptions struct {
	// AppendPosition appends only when the blob is exactly this many bytes
	// long (x-ms-blob-condition-appendpos); otherwise 412
	// AppendPositionConditionNotMet. It also makes the append safe to
	// resend after a lost answer: the backends then resend it and read the
	// blob back to tell whether the first attempt landed (store/driver's
	// SettleAppend). Without it a lost answer stays unknown.
	AppendPosition *int64
	// MaxSize appends only when the blob, block included, stays within
	// this many bytes (x-ms-blob-condition-maxsize); otherwise 412
	// MaxBlobSizeConditionNotMet.
	MaxSize *int64
	// IfMatch appends only when the blob's ETag matches (412
	// ConditionNotMet otherwise).
	IfMatch ETag
}

// AppendResult is the answer to an append.
type AppendResult struct {
	// Offset is where the block was committed: the blob's length before it
	// (x-ms-blob-append-offset).
	Offset int64
	// Size is the blob's length after the block, Offset + the block's size.
	Size int64
	// Blocks is the number of committed blocks after the append
	// (x-ms-blob-committed-block-count).
	Blocks int
	// ETag is the blob's new ETag. After a lost answer resolved by a
	// read-back, ETag and Blocks are as read back, possibly after other
	// writers' appends.
	ETag ETag
	// LastModified is the time of the append.
	LastModified time.Time
}
