package large

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// Encodings of a blob's content.
const (
	// EncodingNone: the blob holds the value's bytes as they are.
	EncodingNone = "none"
	// EncodingGzip: the blob holds the value's bytes compressed with gzip.
	EncodingGzip = "gzip"
)

// refPrefix starts every reference; the version lets a later layout be
// told apart.
const refPrefix = "tkblob:v1;"

// Ref is what a large property holds when its value is in a blob: the
// blob's name, how its content is encoded, and the value's length and
// checksum, so that a read can tell a blob that does not hold the value.
//
// A reference is stored as the other type than the value, so that no
// reader takes it for the value: a string property's reference as
// Edm.Binary (the reference's text as bytes), a binary property's as
// Edm.String. A Repository of the type then refuses the entity with an
// error naming the field rather than decoding the reference as data.
type Ref struct {
	// Blob is the blob's name in the store's container.
	Blob string
	// Encoding is EncodingNone or EncodingGzip.
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
func (r Ref) String() string {
	return fmt.Sprintf("%senc=%s;len=%d;crc32c=%08x;name=%s", refPrefix, r.Encoding, r.Size, r.CRC32C, r.Blob)
}

// ParseRef reads a reference's stored text.
func ParseRef(s string) (Ref, error) {
	var r Ref
	rest, ok := strings.CutPrefix(s, refPrefix)
	if !ok {
		return r, fmt.Errorf("large: %s is not a blob reference", quote(s))
	}
	parts := strings.SplitN(rest, ";", 4)
	if len(parts) != 4 {
		return r, fmt.Errorf("large: blob reference %s has %d fields, want 4", quote(s), len(parts))
	}
	var vals [4]string
	for i, key := range [...]string{"enc=", "len=", "crc32c=", "name="} {
		v, ok := strings.CutPrefix(parts[i], key)
		if !ok {
			return r, fmt.Errorf("large: blob reference %s: field %d does not start with %s", quote(s), i+1, key)
		}
		vals[i] = v
	}
	r.Encoding, r.Blob = vals[0], vals[3]
	if r.Encoding != EncodingNone && r.Encoding != EncodingGzip {
		return r, fmt.Errorf("large: blob reference %s: unknown encoding %q", quote(s), r.Encoding)
	}
	n, err := strconv.ParseInt(vals[1], 10, 64)
	if err != nil || n < 0 {
		return r, fmt.Errorf("large: blob reference %s: bad length %q", quote(s), vals[1])
	}
	r.Size = n
	c, err := strconv.ParseUint(vals[2], 16, 32)
	if err != nil {
		return r, fmt.Errorf("large: blob reference %s: bad checksum %q", quote(s), vals[2])
	}
	r.CRC32C = uint32(c)
	if r.Blob == "" {
		return r, fmt.Errorf("large: blob reference %s names no blob", quote(s))
	}
	return r, nil
}

// stored is the property value of reference r for a property of type
// typ: the other type than the value's.
func (r Ref) stored(typ store.EdmType) any {
	if typ == store.EdmBinary {
		return r.String()
	}
	return []byte(r.String())
}

// refOf reads the value of property of type typ: a reference (the other
// type) or an inline value (ok false, and no error).
func refOf(v any, typ store.EdmType) (r Ref, isRef bool, err error) {
	var text string
	switch x := v.(type) {
	case []byte:
		if typ == store.EdmBinary {
			return r, false, nil
		}
		text = string(x)
	case string:
		if typ != store.EdmBinary {
			return r, false, nil
		}
		text = x
	default:
		return r, false, nil // a value of another type: the mapper's decode names the mismatch
	}
	r, err = ParseRef(text)
	return r, err == nil, err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the CRC-32C of data.
func checksum(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// sampleSize is the part of a large value compressed first to tell
// whether compressing all of it is worth it.
const sampleSize = 64 * 1024

// encode returns the blob content of value data: gzip-compressed when
// compress is set and that makes it smaller. A value of more than four
// samples whose first sample does not shrink by a twentieth (an image, a
// compressed archive) is stored as it is without compressing the rest.
func encode(data []byte, compress bool) (body []byte, encoding string) {
	if !compress || len(data) == 0 {
		return data, EncodingNone
	}
	if len(data) > 4*sampleSize {
		if z := gzipped(data[:sampleSize]); len(z) > sampleSize*19/20 {
			return data, EncodingNone
		}
	}
	if z := gzipped(data); len(z) < len(data) {
		return z, EncodingGzip
	}
	return data, EncodingNone
}

// gzipped compresses data with gzip.
func gzipped(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(data) // a bytes.Buffer does not fail
	_ = w.Close()
	return b.Bytes()
}

// decode turns blob content back into the value r describes, checking
// its length and checksum.
func decode(body []byte, r Ref) ([]byte, error) {
	data := body
	if r.Encoding == EncodingGzip {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		// Read at most one byte more than recorded: a longer value is
		// refused without inflating all of it.
		data, err = io.ReadAll(io.LimitReader(zr, r.Size+1))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
	}
	if int64(len(data)) != r.Size {
		return nil, fmt.Errorf("the value is %d bytes, the reference records %d", len(data), r.Size)
	}
	if c := checksum(data); c != r.CRC32C {
		return nil, fmt.Errorf("the value's CRC-32C is %08x, the reference records %08x", c, r.CRC32C)
	}
	return data, nil
}
