package large

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Encodings of a blob's content.
const (
	// EncodingNone: the blob holds the value's bytes as they are.
	EncodingNone = mapper.BlobEncodingNone
	// EncodingGzip: the blob holds the value's bytes compressed with gzip.
	EncodingGzip = mapper.BlobEncodingGzip
)

// Ref is what a large property holds when its value is in a blob: the
// blob's name, how its content is encoded, and the value's length and
// checksum (mapper.BlobRef, the one reference format, which the entity
// model's blobs use too). Its stored text is
// tkblob:v1;enc=gzip;len=5242880;crc32c=1a2b3c4d;name=<blob>.
type Ref = mapper.BlobRef

// ParseRef reads a reference's stored text.
func ParseRef(s string) (Ref, error) { return mapper.ParseBlobRef(s) }

// stored is the property value of reference r for a property of type
// typ: the other type than the value's.
func stored(r Ref, typ store.EdmType) any {
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
