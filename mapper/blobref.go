package mapper

import (
	"fmt"
	"strconv"
	"strings"
)

// Encodings of a blob's content, as a BlobRef names them.
const (
	// BlobEncodingNone: the blob holds the value's bytes as they are.
	BlobEncodingNone = "none"
	// BlobEncodingGzip: the blob holds the value's bytes compressed with gzip.
	BlobEncodingGzip = "gzip"
)

// refPrefix starts every reference; the version lets a later layout be
// told apart.
const refPrefix = "tkblob:v1;"

// BlobRef is what a property holds when its value is in a blob: the
// blob's name, how its content is encoded, and the value's length and
// checksum, so that a read can tell a blob that does not hold the value.
//
// A reference is stored as the other type than the value, so that no
// reader takes it for the value: a string property's reference as
// Edm.Binary (the reference's text as bytes), a binary property's as
// Edm.String. A Repository of the type then refuses the entity with an
// error naming the field rather than decoding the reference as data.
// patterns/large (its Ref) and the entity model's blobs store it.
type BlobRef struct {
	// Blob is the blob's name in the store's container.
	Blob string
	// Encoding is BlobEncodingNone or BlobEncodingGzip.
	Encoding string
	// Size is the value's length in bytes (a string's in UTF-8), before
	// any compression.
	Size int64
	// CRC32C is the Castagnoli CRC-32 of the value, before any
	// compression.
	CRC32C uint32
}

// String is the reference's stored text:
// tkblob:v1;enc=gzip;len=5242880;crc32c=1a2b3c4d;name=<blob>.
func (r BlobRef) String() string {
	return fmt.Sprintf("%senc=%s;len=%d;crc32c=%08x;name=%s", refPrefix, r.Encoding, r.Size, r.CRC32C, r.Blob)
}

// ParseBlobRef reads a reference's stored text.
func ParseBlobRef(s string) (BlobRef, error) {
	var r BlobRef
	rest, ok := strings.CutPrefix(s, refPrefix)
	if !ok {
		return r, fmt.Errorf("mapper: %s is not a blob reference", quoteRef(s))
	}
	parts := strings.SplitN(rest, ";", 4)
	if len(parts) != 4 {
		return r, fmt.Errorf("mapper: blob reference %s has %d fields, want 4", quoteRef(s), len(parts))
	}
	var vals [4]string
	for i, key := range [...]string{"enc=", "len=", "crc32c=", "name="} {
		v, ok := strings.CutPrefix(parts[i], key)
		if !ok {
			return r, fmt.Errorf("mapper: blob reference %s: field %d does not start with %s", quoteRef(s), i+1, key)
		}
		vals[i] = v
	}
	r.Encoding, r.Blob = vals[0], vals[3]
	if r.Encoding != BlobEncodingNone && r.Encoding != BlobEncodingGzip {
		return r, fmt.Errorf("mapper: blob reference %s: unknown encoding %q", quoteRef(s), r.Encoding)
	}
	n, err := strconv.ParseInt(vals[1], 10, 64)
	if err != nil || n < 0 {
		return r, fmt.Errorf("mapper: blob reference %s: bad length %q", quoteRef(s), vals[1])
	}
	r.Size = n
	c, err := strconv.ParseUint(vals[2], 16, 32)
	if err != nil {
		return r, fmt.Errorf("mapper: blob reference %s: bad checksum %q", quoteRef(s), vals[2])
	}
	r.CRC32C = uint32(c)
	if r.Blob == "" {
		return r, fmt.Errorf("mapper: blob reference %s names no blob", quoteRef(s))
	}
	return r, nil
}

// quoteRef quotes a reference's text for a message, cutting a long one.
func quoteRef(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}
