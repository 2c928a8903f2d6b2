package store

import (
	"context"
	"time"
)

// Queue limits.
const (
	// MaxMessageSize is the largest message body, 64 KiB.
	MaxMessageSize = 64 * 1024
	// MaxVisibilityTimeout is the longest a message can be hidden, 7 days.
	MaxVisibilityTimeout = 7 * 24 * time.Hour
	// MaxMessagesPerGet is the most messages one Get returns.
	MaxMessagesPerGet = 32
	// DefaultMessageTTL is the time to live of a message put without one.
	DefaultMessageTTL = 7 * 24 * time.Hour
	// NeverExpires as a TTL keeps the message until it is deleted.
	NeverExpires time.Duration = -1
)

// Message is one queue message as returned by Get or Peek.
type Message struct {
	// ID identifies the message in its queue.
	ID string
	// PopReceipt is needed to delete or update the message; every Get
	// issues a new one and invalidates the last. Peek returns none.
	PopReceipt string
	// DequeueCount counts the Gets that have received the message so far,
	// this one included.
	DequeueCount int64
	// InsertionTime is when the message was put.
	InsertionTime time.Time
	// ExpirationTime is when the message's time to live ends (the end of
	// 9999 for NeverExpires).
	ExpirationTime time.Time
	// NextVisible is when the message reappears unless deleted.
	NextVisible time.Time
	// Body is the message content, at most MaxMessageSize bytes.
	Body []byte
}

// PutOptions shape a Put.
type PutOptions struct {
	// VisibilityDelay hides the new message for this long (0 to 7 days).
	VisibilityDelay time.Duration
	// TTL is the message's time to live; 0 means DefaultMessageTTL and
	// NeverExpires keeps it forever.
	TTL time.Duration
}

// Queue is a message queue, used by the eventually consistent patterns.
type Queue interface {
	// Name returns the queue's name.
	Name() string
	// Create creates the queue if it does not exist.
	Create(ctx context.Context) error
	// Delete deletes the queue and its messages.
	Delete(ctx context.Context) error
	// Put adds a message; the returned Message has its ID, pop receipt and
	// times, but no body.
	Put(ctx context.Context, body []byte, opts *PutOptions) (Message, error)
	// Get receives 1 to 32 visible messages and hides them for visibility
	// (1 s to 7 days, whole seconds); each gets a new pop receipt.
	Get(ctx context.Context, n int, visibility time.Duration) ([]Message, error)
	// Peek returns 1 to 32 visible messages without hiding them; peeked
	// messages carry no pop receipt and no next-visible time.
	Peek(ctx context.Context, n int) ([]Message, error)
	// Update changes a received message's visibility and, when body is
	// non-nil, its content; it returns the new pop receipt and next visible time.
	Update(ctx context.Context, id, popReceipt string, body []byte, visibility time.Duration) (Message, error)
	// DeleteMessage deletes a received message; the pop receipt must be the latest.
	DeleteMessage(ctx context.Context, id, popReceipt string) error
}

// BlobProps describe a stored blob.
type BlobProps struct {
	// Name is the blob's name in its container.
	Name string
	// ETag changes on every write; pass it as BlobPutOptions.IfMatch.
	ETag ETag
	// Size is the content length in bytes.
	Size int64
	// LastModified is the time of the last write.
	LastModified time.Time
	// Type is the blob's type: BlockBlob or AppendBlob ("" when the backend
	// did not say).
	Type BlobType
	// Blocks is the committed block count of an append blob, as Get,
	// GetRange and CreateAppend report it; listings and block blobs carry 0.
	Blocks int
}

// BlobPutOptions make a blob write conditional.
type BlobPutOptions struct {
	// IfMatch writes only when the blob's ETag matches (412 ConditionNotMet otherwise).
	IfMatch ETag
	// IfNoneMatchAny writes only when the blob does not exist (409 BlobAlreadyExists otherwise).
	IfNoneMatchAny bool
}

// BlobListOptions page through a container's blobs in name order.
type BlobListOptions struct {
	// Prefix keeps only blobs whose name starts with it.
	Prefix string
	// MaxResults caps the page size, 1 to MaxBlobListResults; 0 means the maximum.
	MaxResults int
	// Marker resumes after the previous page (its NextMarker).
	Marker string
}

// BlobPage is one page of a blob listing.
type BlobPage struct {
	// Blobs are in lexical name order.
	Blobs []BlobProps
	// NextMarker is "" on the last page; otherwise pass it as Marker.
	NextMarker string
}

// Container is a blob container, used by the large-entity patterns and,
// through its append blobs, by log data.
type Container interface {
	// Name returns the container's name.
	Name() string
	// Create creates the container if it does not exist.
	Create(ctx context.Context) error
	// Delete deletes the container and its blobs.
	Delete(ctx context.Context) error
	// Put writes a whole blob.
	Put(ctx context.Context, name string, data []byte, opts *BlobPutOptions) (BlobProps, error)
	// Get reads a whole blob; BlobNotFound (404) when missing.
	Get(ctx context.Context, name string) ([]byte, BlobProps, error)
	// DeleteBlob deletes a blob; ifMatch "" is unconditional.
	DeleteBlob(ctx context.Context, name string, ifMatch ETag) error
	// List returns one page of blobs in lexical name order.
	List(ctx context.Context, opts BlobListOptions) (BlobPage, error)

	// CreateAppend creates an empty append blob. Over an append blob it
	// replaces it with an empty one unless opts say otherwise
	// (IfNoneMatchAny: 409 BlobAlreadyExists; IfMatch: 412
	// ConditionNotMet); over a block blob it fails with InvalidBlobType
	// (409). An unconditional create is resent after a lost answer, a
	// conditional one is not (its outcome is reported unknown).
	CreateAppend(ctx context.Context, name string, opts *BlobPutOptions) (BlobProps, error)
	// AppendBlock commits block (1 byte to MaxAppendBlockSize) at the end
	// of an existing append blob, atomically, under opts' conditions:
	// BlobNotFound (404) when it is missing, InvalidBlobType (409) for a
	// block blob, BlockCountExceedsLimit (409) past MaxAppendBlocks,
	// AppendPositionConditionNotMet, MaxBlobSizeConditionNotMet or
	// ConditionNotMet (412). An append is not idempotent: after a lost
	// answer it is resent only when it has an AppendPosition, and then
	// settled by reading the blob back (store/driver's SettleAppend).
	AppendBlock(ctx context.Context, name string, block []byte, opts *AppendOptions) (AppendResult, error)
	// GetRange reads count bytes of a blob from offset, fewer when the
	// blob ends first; count 0 reads to the end. An offset at or past the
	// end is InvalidRange (416), except offset 0 with count 0, which reads
	// a blob of any length as Get does. The props are the whole blob's.
	GetRange(ctx context.Context, name string, offset, count int64) ([]byte, BlobProps, error)
}
