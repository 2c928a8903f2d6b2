package azbase

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Sanitized wraps an SDK or transport error: errors.As still reaches the
// *azcore.ResponseError or *net.OpError, but Error() shows no URL, so no
// SAS signature can leak into a message or log.
type Sanitized struct {
	// Msg is the error's text, without URLs' queries.
	Msg string
	// Err is the original error.
	Err error
}

// Error returns the redacted text.
func (s *Sanitized) Error() string { return s.Msg }

// Unwrap returns the original error.
func (s *Sanitized) Unwrap() error { return s.Err }

// IsDialError reports a connection that was never established: the
// request did not reach the service.
func IsDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// serviceError is the body of a Table service error
// ({"odata.error":{"code":..,"message":{"value":..}}}), of a Queue/Blob
// one (<Error><Code>..</Code><Message>..</Message></Error>), or of a Table
// service error in XML (<error><code>..</code><message>..</message></error>,
// which the service writes where it has no JSON request to answer in
// kind, such as a changeset it could not read).
type serviceError struct {
	OData struct {
		Code    string `json:"code"`
		Message struct {
			Value string `json:"value"`
		} `json:"message"`
	} `json:"odata.error"`
	XMLCode         string `xml:"Code"`
	XMLMessage      string `xml:"Message"`
	ODataXMLCode    string `xml:"code"`
	ODataXMLMessage string `xml:"message"`
}

// utf8BOM opens the XML error bodies of the Queue and Blob services.
const utf8BOM = "\ufeff"

// ParseServiceError returns the code and first message line of an error body.
func ParseServiceError(body []byte) (code, msg string) {
	var se serviceError
	trimmed := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(body)), utf8BOM))
	switch {
	case strings.HasPrefix(trimmed, "{"):
		if json.Unmarshal([]byte(trimmed), &se) == nil {
			code, msg = se.OData.Code, se.OData.Message.Value
		}
	case strings.HasPrefix(trimmed, "<"):
		if xml.Unmarshal([]byte(trimmed), &se) == nil {
			code, msg = se.XMLCode, se.XMLMessage
			if code == "" && msg == "" {
				code, msg = se.ODataXMLCode, se.ODataXMLMessage
			}
		}
	}
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = msg[:i]
	}
	return code, msg
}

// CodeForStatus names a failure the service (or Azurite) sent without a
// code, from its status alone.
func CodeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return store.CodeInvalidInput
	case http.StatusNotFound:
		return store.CodeResourceNotFound
	case http.StatusPreconditionFailed:
		return store.CodeUpdateConditionNotSatisfied
	case http.StatusRequestEntityTooLarge:
		return store.CodeRequestBodyTooLarge
	case http.StatusRequestURITooLong, http.StatusRequestHeaderFieldsTooLarge:
		return store.CodeInvalidInput
	case http.StatusServiceUnavailable:
		return store.CodeServerBusy
	case http.StatusInternalServerError:
		return store.CodeInternalError
	case http.StatusForbidden:
		return store.CodeAuthenticationFailed
	}
	return ""
}

// Begin is how every store method starts: a nil context is refused, a
// done one fails before anything is sent, and the context handed to the
// SDK carries the record of whether a request got a connection (track),
// which classify reads.
func Begin(ctx context.Context) (context.Context, error) {
	if err := store.CheckContext(ctx); err != nil {
		return nil, err
	}
	ctx, _ = track(ctx)
	return ctx, nil
}

// Classify turns the error of one call into a *store.Error by what is
// known about it. ctx is the context the call was made with (begin's);
// write says whether the request changes data, so that an answer that
// never came leaves its outcome unknown. what names the operation and its
// target.
//
//   - the service answered: its code and status; a 500, 502 or 504 to a
//     write is Unknown (it may have been applied);
//   - no request got a connection (refused, unreachable, DNS):
//     CodeConnectionFailed, nothing was applied;
//   - the caller's context ended: CodeCanceled or CodeDeadlineExceeded
//     wrapping the context's error, Unknown for a write that had left;
//   - a request left and no readable answer came (reset, EOF, a per-try
//     timeout): CodeResponseLost, Unknown for a write.
func Classify(ctx context.Context, err error, what string, write bool) error {
	if err == nil {
		return nil
	}
	var se *store.Error
	if errors.As(err, &se) {
		return err
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		e := serviceErr(re, what, write)
		if a := attemptOf(ctx); write && !e.Unknown && a != nil && a.ambiguous.Load() {
			// An earlier try of this call may have been applied.
			e.Unknown = true
			e.Message += " (after an earlier try went unanswered: it may have been applied)"
		}
		return e
	}
	connected := true // without a record, assume the worst: it may have left
	if a := attemptOf(ctx); a != nil {
		connected = a.connected.Load()
	} else if IsDialError(err) {
		connected = false
	}
	if ctx != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return store.ContextError(ctx.Err(), connected, write, what)
	}
	cause := &Sanitized{Msg: RedactURLs(err.Error()), Err: err}
	if !connected {
		return &store.Error{Code: store.CodeConnectionFailed, Index: -1, Source: store.SourceTransport, Err: cause,
			Message: what + ": could not connect to the service: the request was not sent, nothing was applied"}
	}
	return Lost(what, write, cause)
}

// Lost reports a request that left and got no readable answer.
func Lost(what string, write bool, cause error) *store.Error {
	msg := what + ": no answer from the service"
	if write {
		msg += " (the request was sent: it may have been applied)"
	}
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Source: store.SourceTransport, Unknown: write, Message: msg, Err: cause}
}

// serviceErr maps an answer of the service.
func serviceErr(re *azcore.ResponseError, what string, write bool) *store.Error {
	code, msg := "", ""
	if re.RawResponse != nil {
		if body, berr := runtime.Payload(re.RawResponse); berr == nil {
			code, msg = ParseServiceError(body)
		}
	}
	if re.ErrorCode != "" {
		code = re.ErrorCode
	}
	if code == "" {
		code = CodeForStatus(re.StatusCode)
	}
	text := what + ": the service answered " + http.StatusText(re.StatusCode)
	if msg != "" {
		text += ": " + msg
	}
	unknown := write && driver.AmbiguousStatus(re.StatusCode)
	if unknown {
		text += " (it may have been applied)"
	}
	return &store.Error{Code: code, Status: re.StatusCode, Index: -1, Message: text, Unknown: unknown,
		Err: &Sanitized{Msg: "azcore.ResponseError " + code, Err: re}}
}

// RedactURLs strips the query of every URL in s (a SAS lives there).
func RedactURLs(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		trimmed := strings.TrimRight(strings.TrimLeft(f, `"'(`), `"'):,;`)
		if strings.HasPrefix(trimmed, "http://") || strings.HasPrefix(trimmed, "https://") {
			if u, err := url.Parse(trimmed); err == nil && u.RawQuery != "" {
				u.RawQuery = "REDACTED"
				fields[i] = strings.Replace(f, trimmed, u.String(), 1)
			}
		}
	}
	return strings.Join(fields, " ")
}
