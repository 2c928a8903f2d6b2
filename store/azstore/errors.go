package azstore

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
)

// sanitized wraps an SDK or transport error: errors.As still reaches the
// *azcore.ResponseError or *net.OpError, but Error() shows no URL, so no
// SAS signature can leak into a message or log.
type sanitized struct {
	msg string
	err error
}

func (s *sanitized) Error() string { return s.msg }
func (s *sanitized) Unwrap() error { return s.err }

// isDialError reports a connection that was never established: the
// request did not reach the service.
func isDialError(err error) bool {
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

// parseServiceError returns the code and first message line of an error body.
func parseServiceError(body []byte) (code, msg string) {
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

// codeForStatus names a failure the service (or Azurite) sent without a
// code, from its status alone.
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return store.CodeInvalidInput
	case http.StatusNotFound:
		return store.CodeResourceNotFound
	case http.StatusPreconditionFailed:
		return store.CodeUpdateConditionNotSatisfied
	case http.StatusRequestEntityTooLarge:
		return store.CodeRequestBodyTooLarge
	case http.StatusServiceUnavailable:
		return store.CodeServerBusy
	case http.StatusInternalServerError:
		return store.CodeInternalError
	case http.StatusForbidden:
		return store.CodeAuthenticationFailed
	}
	return ""
}

// mapErr turns an SDK error into a *store.Error: an azcore.ResponseError
// keeps the service's code and status, a context error becomes
// OperationTimedOut (as memstore reports it), and a transport failure is
// wrapped with its URL removed. what names the operation and its target.
func mapErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var se *store.Error
	if errors.As(err, &se) {
		return err
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		code, msg := "", ""
		if re.RawResponse != nil {
			if body, berr := runtime.Payload(re.RawResponse); berr == nil {
				code, msg = parseServiceError(body)
			}
		}
		if re.ErrorCode != "" {
			code = re.ErrorCode
		}
		if code == "" {
			code = codeForStatus(re.StatusCode)
		}
		text := what + ": the service answered " + http.StatusText(re.StatusCode)
		if msg != "" {
			text += ": " + msg
		}
		return &store.Error{Code: code, Status: re.StatusCode, Index: -1, Message: text,
			Err: &sanitized{msg: "azcore.ResponseError " + code, err: re}}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &store.Error{Code: store.CodeOperationTimedOut, Status: 500, Index: -1,
			Message: what + ": context done before the service answered", Err: ctxCause(err)}
	}
	return &store.Error{Code: "", Status: 0, Index: -1,
		Message: what + ": no answer from the service (the request may or may not have been applied)",
		Err:     &sanitized{msg: redactURLs(err.Error()), err: err}}
}

func ctxCause(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// redactURLs strips the query of every URL in s (a SAS lives there).
func redactURLs(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		trimmed := strings.Trim(f, `"'`)
		if strings.HasPrefix(trimmed, "http://") || strings.HasPrefix(trimmed, "https://") {
			if u, err := url.Parse(trimmed); err == nil && u.RawQuery != "" {
				u.RawQuery = "REDACTED"
				fields[i] = strings.Replace(f, trimmed, u.String(), 1)
			}
		}
	}
	return strings.Join(fields, " ")
}
