package azstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"

	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
)

// tablekit's own bodies through the SDK's pipeline.
//
// aztables v1.4.0 takes an entity as JSON bytes and decodes them into a
// map, which it encodes again for the request (losing, among other things,
// the ".0" of a whole Double), and it decodes every answer into maps that
// it encodes once more; for a transaction it builds the changeset with
// the standard library's multipart writer and parses the answer with its
// multipart and HTTP readers. azstore still makes every request through an
// aztables call, so the SDK's pipeline does the authentication (shared key,
// token or SAS), the retries, the logging and the transport, but it hands
// the call a tiny stand-in and tablePolicy swaps in the body azstore
// encoded: those bytes are what the service receives. On the way back the
// policy keeps the service's answer for azstore, which reads it once, and
// gives aztables an equally tiny stand-in answer to decode.

// rawCall is one aztables call that carries tablekit's own body (nil
// keeps the SDK's) and brings back the service's answer.
type rawCall struct {
	azbase.Body
	// contentType replaces the SDK's Content-Type when set (a batch's
	// multipart boundary).
	contentType string
	// stubStatus and stubBody are the stand-in success answer aztables
	// decodes instead of the service's.
	stubStatus int
	stubBody   string
	// prefer, when set, is sent as the Prefer header (an insert asks for
	// no echo of the entity).
	prefer string
	// resp is the service's last answer, its body read.
	resp *http.Response
	// sent records that the request reached the pipeline, and err the
	// pipeline's error (after its retries), for a call whose aztables
	// error says nothing (see insertStub).
	sent bool
	err  error
}

const ctxRawCall ctxKey = 100

// withRawCall marks ctx's aztables call as carrying rc.
func withRawCall(ctx context.Context, rc *rawCall) context.Context {
	ctx = context.WithValue(ctx, ctxRawCall, rc)
	if rc.Data != nil {
		ctx = azbase.WithBody(ctx, &rc.Body)
	}
	return ctx
}

// Stand-in answers.
const (
	// stubTransaction is the smallest batch answer aztables accepts: one
	// changeset with one successful part.
	stubTransaction = "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n\r\n--c--\r\n--b--\r\n"
)

// raw sends a request marked withRawCall: the body swapped in, the answer
// kept. An error answer reaches aztables unchanged, so its error is the
// one it always built.
func (p tablePolicy) raw(req *policy.Request, rc *rawCall) (*http.Response, error) {
	raw := req.Raw()
	if emptyPK, _ := raw.Context().Value(ctxEmptyPK).(bool); emptyPK {
		raw.URL.Path = strings.ReplaceAll(raw.URL.Path, "PartitionKey='"+emptyPKPlaceholder+"'", "PartitionKey=''")
		raw.URL.RawPath = strings.ReplaceAll(raw.URL.RawPath, "PartitionKey='%01'", "PartitionKey=''")
	}
	if rc.Data != nil {
		ct := rc.contentType
		if ct == "" {
			ct = raw.Header.Get("Content-Type")
		}
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(rc.Data)), ct); err != nil {
			return nil, err
		}
	}
	if rc.prefer != "" {
		raw.Header["Prefer"] = []string{rc.prefer}
	}
	rc.sent = true
	resp, err := req.Next()
	if err != nil {
		rc.err = err
		return resp, err
	}
	rc.resp = resp
	if resp.StatusCode >= 300 {
		return resp, nil
	}
	stub := *resp
	// aztables reads the stand-in's headers into a response azstore does
	// not look at (it parses the Date, among others): it gets none. A nil
	// Header answers every Get with "" before canonicalising the name,
	// which an empty one does first (an allocation per name); aztables
	// only reads the stand-in's headers.
	stub.Header = nil
	stub.StatusCode = rc.stubStatus
	stub.Body = io.NopCloser(strings.NewReader(rc.stubBody))
	stub.ContentLength = int64(len(rc.stubBody))
	return &stub, nil
}

// outcome returns the error of a call whose stand-in tells aztables
// nothing about the entity (insertStub), so that aztables replaces any
// error with its own "no PartitionKey or RowKey" one: the pipeline's
// error, or the error answer the service gave, as aztables would have
// built it. err is aztables' error; nil means success.
func (rc *rawCall) outcome(err error) error {
	switch {
	case err == nil:
		return nil
	case !rc.sent:
		return fmt.Errorf("azstore: aztables did not send the request: %w", err)
	case rc.err != nil:
		return rc.err
	case rc.resp != nil && rc.resp.StatusCode >= 300:
		return runtime.NewResponseError(rc.resp)
	}
	return err
}

// payload returns the body of the kept answer.
func (rc *rawCall) payload() ([]byte, error) {
	if rc.resp == nil {
		return nil, io.ErrUnexpectedEOF
	}
	return runtime.Payload(rc.resp)
}

// etag returns the ETag header of the kept answer.
func (rc *rawCall) etag() string {
	if rc.resp == nil {
		return ""
	}
	return rc.resp.Header.Get("ETag")
}
