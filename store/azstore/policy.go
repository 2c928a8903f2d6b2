package azstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
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
	ctxQuotedKeys
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

// withQuotedKeys marks a batch whose keys were given with doubled single
// quotes: aztables v1.4.0 puts batch keys into the sub-request URLs
// without the OData escaping (a quote written twice) it applies to single operations,
// so azstore doubles them itself, and tablePolicy restores the single
// quotes in the JSON bodies, where keys are plain JSON strings.
func withQuotedKeys(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxQuotedKeys, true)
}

// withEmptyPK marks a request whose PartitionKey placeholder must be
// restored to "".
func withEmptyPK(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxEmptyPK, true)
}

// tablePolicy rewrites table requests just before they are sent, and for a
// query marked withQueryBody takes the response body (see withQueryBody):
//
//   - for a request marked withEmptyPK, the placeholder key %01 in the URL
//     (and in the sub-request lines of a batch) becomes the empty key, and
//     "PartitionKey":"\u0001" in the JSON becomes "PartitionKey":"";
//   - a body of 64 KiB or more has its non-ASCII characters written as
//     \uXXXX escapes (all of them sit inside JSON strings). Azurite decodes
//     request bodies chunk by chunk and corrupts a character split across
//     a 64 KiB chunk boundary; an ASCII body cannot be split that way, and
//     the service reads the escapes as the same characters.
type tablePolicy struct{}

func (p tablePolicy) Do(req *policy.Request) (*http.Response, error) {
	if rc, ok := req.Raw().Context().Value(ctxRawCall).(*rawCall); ok {
		return p.raw(req, rc)
	}
	if qb, ok := req.Raw().Context().Value(ctxQueryBody).(*queryBody); ok {
		return p.takeQueryBody(req, qb)
	}
	raw := req.Raw()
	emptyPK, _ := raw.Context().Value(ctxEmptyPK).(bool)
	if emptyPK {
		raw.URL.Path = strings.ReplaceAll(raw.URL.Path, "PartitionKey='"+emptyPKPlaceholder+"'", "PartitionKey=''")
		raw.URL.RawPath = strings.ReplaceAll(raw.URL.RawPath, "PartitionKey='%01'", "PartitionKey=''")
	}
	quoted, _ := raw.Context().Value(ctxQuotedKeys).(bool)
	body := req.Body()
	if body == nil || (!emptyPK && !quoted && raw.ContentLength < 64*1024) {
		return req.Next()
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	ascii := len(data) >= 64*1024
	var out []byte
	if strings.HasPrefix(raw.Header.Get("Content-Type"), "multipart/") {
		out = rewriteBatch(data, emptyPK, quoted, ascii)
	} else {
		out = rewriteJSON(data, emptyPK, quoted, ascii)
	}
	if err := req.SetBody(streaming.NopCloser(bytes.NewReader(out)), raw.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	return req.Next()
}

// rewriteJSON applies the rewrites to one JSON entity body.
func rewriteJSON(b []byte, emptyPK, quoted, ascii bool) []byte {
	if emptyPK {
		b = bytes.ReplaceAll(b, []byte(`"PartitionKey":"\u0001"`), []byte(`"PartitionKey":""`))
	}
	if quoted {
		b = undoubleKeyMembers(b)
	}
	if ascii {
		b = asciiJSON(b)
	}
	return b
}

// rewriteBatch applies the rewrites to a $batch body: the placeholder key
// in the sub-request URLs, and rewriteJSON to each sub-request's JSON
// body, whose own Content-Length header it then corrects. The service
// reads each sub-request by that header, so a body that grew (escapes) or
// shrank (undoubled quotes, the empty key) must say its new length. aztables
// writes each JSON body on one line after its headers.
func rewriteBatch(data []byte, emptyPK, quoted, ascii bool) []byte {
	if emptyPK {
		data = bytes.ReplaceAll(data, []byte(`PartitionKey='%01'`), []byte(`PartitionKey=''`))
	}
	lines := bytes.Split(data, []byte("\n"))
	length := -1 // the line of the current sub-request's Content-Length
	for i, line := range lines {
		switch {
		case bytes.HasPrefix(line, []byte("--")):
			length = -1
		case len(line) > len("content-length:") && bytes.EqualFold(line[:len("content-length:")], []byte("content-length:")):
			length = i
		case len(line) > 0 && line[0] == '{':
			body := bytes.TrimSuffix(line, []byte("\r"))
			cr := len(line) > len(body)
			body = rewriteJSON(body, emptyPK, quoted, ascii)
			if cr {
				body = append(body, '\r')
			}
			lines[i] = body
			if length >= 0 {
				lines[length] = fmt.Appendf(nil, "Content-Length: %d\r", len(body)-btoi(cr))
			}
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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

// undoubleKeyMembers turns each doubled quote back into one inside the "PartitionKey" and
// "RowKey" string members of the JSON lines of a batch body.
func undoubleKeyMembers(body []byte) []byte {
	lines := bytes.Split(body, []byte("\n"))
	for i, line := range lines {
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		for _, member := range []string{`"PartitionKey":"`, `"RowKey":"`} {
			line = undoubleMember(line, member)
		}
		lines[i] = line
	}
	return bytes.Join(lines, []byte("\n"))
}

// undoubleMember rewrites the string value that follows member in line.
func undoubleMember(line []byte, member string) []byte {
	at := bytes.Index(line, []byte(member))
	if at < 0 {
		return line
	}
	start := at + len(member)
	end := start
	for end < len(line) && line[end] != '"' {
		if line[end] == '\\' {
			end++
		}
		end++
	}
	if end > len(line) {
		return line
	}
	value := bytes.ReplaceAll(line[start:end], []byte("''"), []byte("'"))
	out := make([]byte, 0, len(line))
	out = append(out, line[:start]...)
	out = append(out, value...)
	return append(out, line[end:]...)
}

// takeQueryBody sends a query and, when it succeeds, moves the response
// body into qb and leaves aztables an empty result with the same headers.
// Error responses pass through untouched so aztables can build its error.
func (tablePolicy) takeQueryBody(req *policy.Request, qb *queryBody) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	qb.data = data
	resp.Body = io.NopCloser(strings.NewReader(emptyQueryResult))
	resp.ContentLength = int64(len(emptyQueryResult))
	return resp, nil
}
