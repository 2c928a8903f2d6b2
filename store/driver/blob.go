package driver

import "github.com/tablekit/tablekit/store"

// Rules of blob listings, append blobs and ranged reads, shared by every
// backend.

// ResolveBlobListSize resolves store.BlobListOptions.MaxResults to a page
// size: 0 means the service's maximum, more than store.MaxBlobListResults
// is capped as the service caps it, and a negative value is refused as the
// service refuses maxresults <= 0.
func ResolveBlobListSize(max int) (int, error) {
	switch {
	case max < 0:
		return 0, refuse(store.CodeOutOfRangeQueryParameterValue, 400,
			"MaxResults %d is out of range: use 1 to %d, or 0 for the maximum", max, store.MaxBlobListResults)
	case max == 0 || max > store.MaxBlobListResults:
		return store.MaxBlobListResults, nil
	}
	return max, nil
}

// ValidateAppend checks an append before it is sent: the blob name, a
// block of 1 byte to store.MaxAppendBlockSize (an empty block is the
// service's InvalidHeaderValue 400 for Content-Length 0; a larger one its
// RequestBodyTooLarge 413), and conditions that are not negative.
func ValidateAppend(name string, block []byte, opts *store.AppendOptions) error {
	if err := store.ValidateBlobName(name); err != nil {
		return err
	}
	switch {
	case len(block) == 0:
		return refuse(store.CodeInvalidHeaderValue, 400,
			"append to blob %s: the block is empty (Content-Length 0): a block holds 1 to %d bytes", quoteTrunc(name), store.MaxAppendBlockSize)
	case len(block) > store.MaxAppendBlockSize:
		return refuse(store.CodeRequestBodyTooLarge, 413,
			"append to blob %s: a block of %d bytes is over the limit of %d bytes (100 MiB) per Append Block", quoteTrunc(name), len(block), store.MaxAppendBlockSize)
	}
	if opts == nil {
		return nil
	}
	if p := opts.AppendPosition; p != nil && *p < 0 {
		return refuse(store.CodeInvalidHeaderValue, 400,
			"append to blob %s: AppendPosition %d is negative: it is the blob's expected length in bytes", quoteTrunc(name), *p)
	}
	if m := opts.MaxSize; m != nil && *m < 0 {
		return refuse(store.CodeInvalidHeaderValue, 400,
			"append to blob %s: MaxSize %d is negative: it is the blob's largest allowed length in bytes", quoteTrunc(name), *m)
	}
	if opts.IfMatch != "" {
		return store.ValidateETag(opts.IfMatch)
	}
	return nil
}

// ValidateRange checks the offset and count of a ranged read: neither may
// be negative (count 0 means "to the end").
func ValidateRange(name string, offset, count int64) error {
	if err := store.ValidateBlobName(name); err != nil {
		return err
	}
	if offset < 0 || count < 0 {
		return invalid("read of blob %s: offset %d and count %d must not be negative (count 0 reads to the end)", quoteTrunc(name), offset, count)
	}
	return nil
}

// RangeNotSatisfiable is the service's answer to a ranged read that starts
// at or past the end of a blob of size bytes. Backends use it where the
// server answers otherwise (Azurite returns an empty body for a range that
// starts exactly at the end).
func RangeNotSatisfiable(container, name string, offset, size int64) *store.Error {
	return store.Errorf(store.CodeInvalidRange, 416,
		"read of blob %s in container %q from offset %d: the blob is %d bytes long, so the range is not satisfiable", quoteTrunc(name), container, offset, size)
}
