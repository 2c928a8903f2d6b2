package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Service error codes, exactly as the Table, Queue and Blob services send
// them in their error responses.
const (
	CodeTableNotFound                           = "TableNotFound"
	CodeTableAlreadyExists                      = "TableAlreadyExists"
	CodeTableBeingDeleted                       = "TableBeingDeleted"
	CodeResourceNotFound                        = "ResourceNotFound"
	CodeEntityAlreadyExists                     = "EntityAlreadyExists"
	CodeUpdateConditionNotSatisfied             = "UpdateConditionNotSatisfied"
	CodeInvalidResourceName                     = "InvalidResourceName"
	CodeOutOfRangeInput                         = "OutOfRangeInput"
	CodeInvalidInput                            = "InvalidInput"
	CodeInvalidValueType                        = "InvalidValueType"
	CodePropertiesNeedValue                     = "PropertiesNeedValue"
	CodeKeyValueTooLarge                        = "KeyValueTooLarge"
	CodeTooManyProperties                       = "TooManyProperties"
	CodePropertyNameTooLong                     = "PropertyNameTooLong"
	CodePropertyNameInvalid                     = "PropertyNameInvalid"
	CodeDuplicatePropertiesSpecified            = "DuplicatePropertiesSpecified"
	CodePropertyValueTooLarge                   = "PropertyValueTooLarge"
	CodeEntityTooLarge                          = "EntityTooLarge"
	CodeCommandsInBatchActOnDifferentPartitions = "CommandsInBatchActOnDifferentPartitions"
	CodeInvalidDuplicateRow                     = "InvalidDuplicateRow"
	CodeRequestBodyTooLarge                     = "RequestBodyTooLarge"
	CodeServerBusy                              = "ServerBusy"
	CodeOperationTimedOut                       = "OperationTimedOut"
	CodeInternalError                           = "InternalError"
	CodeAuthenticationFailed                    = "AuthenticationFailed"

	// Deprecated: use CodeCommandsInBatchActOnDifferentPartitions, the
	// code's full name.
	CodeCommandsInBatchActOnDifferentPart = CodeCommandsInBatchActOnDifferentPartitions

	// Queue service.
	CodeQueueNotFound      = "QueueNotFound"
	CodeQueueAlreadyExists = "QueueAlreadyExists"
	CodeMessageNotFound    = "MessageNotFound"
	CodePopReceiptMismatch = "PopReceiptMismatch"
	CodeMessageTooLarge    = "MessageTooLarge"

	// Blob service.
	CodeContainerNotFound      = "ContainerNotFound"
	CodeContainerAlreadyExists = "ContainerAlreadyExists"
	CodeBlobNotFound           = "BlobNotFound"
	CodeBlobAlreadyExists      = "BlobAlreadyExists"
	CodeConditionNotMet        = "ConditionNotMet"
)

// Sentinel errors. An *Error matches one of these with errors.Is according
// to its code and status, so callers can branch on the kind of failure
// without knowing every service code.
var (
	// ErrNotFound matches a missing table, entity, queue, message, container or blob.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists matches an insert or create of something that exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrPreconditionFailed matches a failed If-Match or If-None-Match condition.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrInvalidInput matches every 400 the service sends for bad input,
	// including the too-large codes.
	ErrInvalidInput = errors.New("invalid input")
	// ErrTooLarge matches a key, property, entity, batch or message over its size limit.
	ErrTooLarge = errors.New("too large")
	// ErrThrottled matches the service's 503 ServerBusy: it refused the
	// request before doing any work, so nothing was applied; retry with
	// backoff. It never matches a 500, a timeout or a lost answer, which may
	// hide an applied write (see ErrUnknownOutcome).
	ErrThrottled = errors.New("throttled")
	// ErrUnknownOutcome matches a write that may or may not have been
	// applied: the request was sent and no definite answer came back (a 500
	// InternalError or OperationTimedOut, a timeout, a reset connection, an
	// unreadable answer, a context that ended after the request left).
	// Resending such a write is safe only when it is idempotent (an upsert,
	// an update with If-Match *); otherwise read the entity back. The
	// Error's Unknown field carries the same fact.
	ErrUnknownOutcome = errors.New("outcome unknown: the write may have been applied")
	// ErrTransient matches a failure that may pass when the same request is
	// sent again and that left nothing applied: a 503 ServerBusy, a
	// connection that was never made, a 500 or lost answer to a read, or a
	// write whose unknown outcome a read-back resolved as not applied. It
	// never matches an error that also matches ErrUnknownOutcome, so
	// "retry when errors.Is(err, ErrTransient)" never writes twice.
	ErrTransient = errors.New("transient: nothing was applied, retrying may succeed")
)

// tablekit's own codes, for failures that carry no service answer. The
// service never sends them; Source is SourceTransport (or SourceClient).
const (
	// CodeConnectionFailed: no connection to the service could be made
	// (refused, unreachable, DNS failure, TLS handshake): the request never
	// left, so nothing was applied.
	CodeConnectionFailed = "ConnectionFailed"
	// CodeResponseLost: the request was sent (or may have been) and no
	// readable answer came back: a reset or closed connection, a truncated
	// or garbled response, a client-side per-try timeout.
	CodeResponseLost = "ResponseLost"
	// CodeCanceled: the caller's context was canceled. Err wraps
	// context.Canceled; Unknown says whether a write had already been sent.
	CodeCanceled = "Canceled"
	// CodeDeadlineExceeded: the caller's context deadline passed. Err wraps
	// context.DeadlineExceeded; Unknown says whether a write had already
	// been sent.
	CodeDeadlineExceeded = "DeadlineExceeded"
)

// Source says who produced an *Error.
type Source uint8

const (
	// SourceService: the service answered with this error (memstore's
	// engine plays the service). This is the zero value.
	SourceService Source = iota
	// SourceClient: tablekit's own checks refused the input before anything
	// was sent; the service never saw the request.
	SourceClient
	// SourceTransport: no usable answer came from the service: the
	// connection failed or broke, the answer was lost or unreadable, or the
	// context ended.
	SourceTransport
)

// String names the source.
func (s Source) String() string {
	switch s {
	case SourceService:
		return "service"
	case SourceClient:
		return "client"
	case SourceTransport:
		return "transport"
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// Error is the one error type of tablekit's stores. Every backend reports a
// service failure as an *Error with the service's own code and status, so
// the same bad input fails the same way on Azure, Azurite and memstore.
type Error struct {
	// Code is the service's error code, such as "EntityAlreadyExists".
	Code string
	// Status is the HTTP status the service answers with.
	Status int
	// Index is the position of the failing action in a transaction, or -1
	// when the error does not come from a transaction.
	Index int
	// Message explains the failure, naming the offending table, key,
	// property, value and limit. It never contains credentials.
	Message string
	// Err is the underlying cause, if any (a transport error, say).
	Err error
	// Unknown is set when the failed request was a write that may have been
	// applied (see ErrUnknownOutcome). It is false for a read, and for a
	// write the service refused or that never left.
	Unknown bool
	// Source says whether the service, tablekit's own checks or the
	// transport produced the error.
	Source Source
}

// Error formats the code, status, index and message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.Status != 0 {
		b.WriteString(" (")
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteString(")")
	}
	if e.Index >= 0 {
		b.WriteString(" at action ")
		b.WriteString(strconv.Itoa(e.Index))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e belongs to the kind of failure target names.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == 404
	case ErrAlreadyExists:
		return e.Status == 409 && (strings.HasSuffix(e.Code, "AlreadyExists"))
	case ErrPreconditionFailed:
		return e.Status == 412 || e.Code == CodeBlobAlreadyExists
	case ErrInvalidInput:
		return e.Status == 400 || e.Status == 413
	case ErrTooLarge:
		switch e.Code {
		case CodeKeyValueTooLarge, CodePropertyValueTooLarge, CodeEntityTooLarge,
			CodeRequestBodyTooLarge, CodeMessageTooLarge, CodeTooManyProperties:
			return true
		}
		return e.Status == 413
	case ErrThrottled:
		return !e.Unknown && (e.Status == 503 || e.Code == CodeServerBusy)
	case ErrUnknownOutcome:
		return e.Unknown
	case ErrTransient:
		return !e.Unknown && e.transient()
	}
	return false
}

// transient reports a failure that may pass on a resend.
func (e *Error) transient() bool {
	switch e.Code {
	case CodeConnectionFailed, CodeResponseLost, CodeServerBusy, CodeOperationTimedOut, CodeInternalError:
		return true
	case CodeCanceled, CodeDeadlineExceeded:
		return false
	}
	switch e.Status {
	case 408, 500, 502, 503, 504:
		return true
	}
	return false
}

// Errorf builds an *Error with the given code and status, outside any
// transaction (Index -1).
func Errorf(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Index: -1, Message: fmt.Sprintf(format, args...)}
}

// WithIndex returns a copy of err positioned at action i of a transaction.
// A non-*Error is wrapped as an InternalError.
func WithIndex(err error, i int) *Error {
	var se *Error
	if errors.As(err, &se) {
		c := *se
		c.Index = i
		return &c
	}
	return &Error{Code: CodeInternalError, Status: 500, Index: i, Message: "transaction action failed", Err: err}
}

// EntityNotFound reports an error that says an entity is absent from a
// table that exists: a 404 other than TableNotFound. The patterns read
// it as "the row is gone" and a missing table as a failure.
func EntityNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) && Code(err) != CodeTableNotFound
}

// Code returns the error code carried by err, or "" when err is not (and
// does not wrap) an *Error.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// Status returns the HTTP status carried by err, or 0 when err is not (and
// does not wrap) an *Error or no answer came from the service.
func Status(err error) int {
	if err == nil {
		return 0
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// Index returns the position of the failing action of a transaction
// carried by err, or -1 when err names none.
func Index(err error) int {
	var se *Error
	if errors.As(err, &se) {
		return se.Index
	}
	return -1
}

// SourceOf returns who produced err: the service, tablekit's own checks or
// the transport. An error that is not (and does not wrap) an *Error is
// SourceClient: it was made before anything was sent.
func SourceOf(err error) Source {
	var se *Error
	if errors.As(err, &se) {
		return se.Source
	}
	return SourceClient
}

// refuse builds the *Error of one of tablekit's own checks: nothing was
// sent (Source is SourceClient).
func refuse(code string, status int, format string, args ...any) *Error {
	e := Errorf(code, status, format, args...)
	e.Source = SourceClient
	return e
}

// invalid keeps the rules short.
func invalid(format string, args ...any) *Error {
	return refuse(CodeInvalidInput, 400, format, args...)
}
