package azstore

import (
	"context"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// emptyPKPlaceholder stands for an empty PartitionKey where aztables
// v1.4.0 refuses one (it rejects "" when it builds an entity URL). It is a
// control character, which store's rules refuse in every real key, so it
// can never collide with one; tablePolicy turns it back into "" in the URL
// and the body of the request before it is sent.
const emptyPKPlaceholder = "\x01"

type ctxKey int

const (
	ctxEmptyPK ctxKey = iota + 1
	ctxQueryBody
)

// queryBody receives the raw body of a successful query response.
type queryBody struct{ data []byte }

// withQueryBody marks a query whose successful response body tablePolicy
// hands to qb and replaces with an empty result before aztables sees it.
// aztables v1.4.0 decodes every page with encoding/json into maps and
// marshals each entity back to bytes, which costs more CPU than the
// request; azstore decodes the original bytes itself with store/wire, so
// aztables only needs the status and the continuation headers.
func withQueryBody(ctx context.Context, qb *queryBody) context.Context {
	return context.WithValue(ctx, ctxQueryBody, qb)
}

// emptyQueryResult is what aztables parses instead of a stolen body.
const emptyQueryResult = `{"value":[]}`

// withEmptyPK marks a request whose PartitionKey placeholder must be
// restored to "".
func withEmptyPK(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxEmptyPK, true)
}

// tablePolicy sits in the SDK pipeline of every table request, before the
// retries and the authentication:
//
//   - a request marked withRawCall gets the body azstore encoded and its
//     answer is kept for azstore (raw.go);
//   - a query marked withQueryBody has its response body taken (see
//     withQueryBody);
//   - for a request marked withEmptyPK, the placeholder key %01 in the URL
//     becomes the empty key.
//
// azstore writes a body of 64 KiB or more with its non-ASCII characters as
// \uXXXX escapes (asciiJSON; all of them sit inside JSON strings): Azurite
// decodes request bodies chunk by chunk and corrupts a character split
// across a 64 KiB chunk boundary; an ASCII body cannot be split that way,
// and the service reads the escapes as the same characters.
type tablePolicy struct{}

func (p tablePolicy) Do(req *policy.Request) (*http.Response, error) {
	if rc, ok := req.Raw().Context().Value(ctxRawCall).(*rawCall); ok {
		return p.raw(req, rc)
	}
	if qb, ok := req.Raw().Context().Value(ctxQueryBody).(*queryBody); ok {
		return p.takeQueryBody(req, qb)
	}
	raw := req.Raw()
	if emptyPK, _ := raw.Context().Value(ctxEmptyPK).(bool); emptyPK {
		raw.URL.Path = strings.ReplaceAll(raw.URL.Path, "PartitionKey='"+emptyPKPlaceholder+"'", "PartitionKey=''")
		raw.URL.RawPath = strings.ReplaceAll(raw.URL.RawPath, "PartitionKey='%01'", "PartitionKey=''")
	}
	return req.Next()
}

// asciiJSON writes every non-ASCII character of a JSON text as a \uXXXX
// escape (a surrogate pair beyond the BMP). Non-ASCII bytes occur only
// inside JSON strings, where the escape means the same character.
func asciiJSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	if i == len(b) {
		return b
	}
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, len(b)+len(b)/2)
	out = append(out, b[:i]...)
	esc := func(r rune) {
		out = append(out, '\\', 'u', hexd[r>>12&15], hexd[r>>8&15], hexd[r>>4&15], hexd[r&15])
	}
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			esc(0xD800 + (r>>10)&0x3FF)
			esc(0xDC00 + r&0x3FF)
			continue
		}
		esc(r)
	}
	return out
}

// takeQueryBody sends a query and, when it succeeds, moves the response
// body into qb and leaves aztables an empty result with the same headers.
// Error responses pass through untouched so aztables can build its error.
func (tablePolicy) takeQueryBody(req *policy.Request, qb *queryBody) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	// The SDK's pipeline has read the body already (its body download
	// policy runs inside the retries, so an answer cut short is sent
	// again): take those bytes rather than copy them.
	data, err := runtime.Payload(resp)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	qb.data = data
	resp.Body = io.NopCloser(strings.NewReader(emptyQueryResult))
	resp.ContentLength = int64(len(emptyQueryResult))
	return resp, nil
}
