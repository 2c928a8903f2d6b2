package memstore

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// blobETag makes a blob's ETag from its write time: the time in .NET ticks
// (100 ns since year 1) in hex, quoted, the shape Azure's blob ETags have
// ("0x8DC..."). The store's clock is strictly increasing at 100 ns
// precision, so every write gets a distinct ETag.
func blobETag(t time.Time) store.ETag {
	const unixEpochTicks = 621355968000000000
	ticks := t.Unix()*10_000_000 + int64(t.Nanosecond()/100) + unixEpochTicks
	return store.ETag(fmt.Sprintf(`"0x%X"`, ticks))
}

// etagMatches compares an If-Match value with a blob's ETag. The service
// accepts the ETag with or without quotes, and "*" matches any blob.
func etagMatches(cond, etag store.ETag) bool {
	if cond == store.ETagAny {
		return true
	}
	return strings.Trim(string(cond), `"`) == strings.Trim(string(etag), `"`)
}

// markerPrefix versions the marker format.
const markerPrefix = "1!"

// encodeMarker makes the opaque marker that resumes a listing at name.
func encodeMarker(name string) string {
	return markerPrefix + base64.RawURLEncoding.EncodeToString([]byte(name))
}

// decodeMarker reads a marker made by encodeMarker.
func decodeMarker(m string) (string, error) {
	rest, ok := strings.CutPrefix(m, markerPrefix)
	if ok {
		if b, err := base64.RawURLEncoding.DecodeString(rest); err == nil {
			return string(b), nil
		}
	}
	return "", store.Errorf(store.CodeInvalidQueryParameterValue, 400,
		"marker %q is malformed: pass the NextMarker of the previous page unchanged", clip(m))
}

// clip shortens a long value for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("...(%d bytes)", len(s))
}
