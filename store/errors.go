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
	CodeTableNotFound                     = "TableNotFound"
	CodeTableAlreadyExists                = "TableAlreadyExists"
	CodeTableBeingDeleted                 = "TableBeingDeleted"
	CodeResourceNotFound                  = "ResourceNotFound"
	CodeEntityAlreadyExists               = "EntityAlreadyExists"
	CodeUpdateConditionNotSatisfied       = "UpdateConditionNotSatisfied"
	CodeInvalidResourceName               = "InvalidResourceName"
	CodeOutOfRangeInput                   = "OutOfRangeInput"
	CodeInvalidInput                      = "InvalidInput"
	CodeInvalidValueType                  = "InvalidValueType"
	CodePropertiesNeedValue               = "PropertiesNeedValue"
	CodeKeyValueTooLarge                  = "KeyValueTooLarge"
	CodeTooManyProperties                 = "TooManyProperties"
	CodePropertyNameTooLong               = "PropertyNameTooLong"
	CodePropertyNameInvalid               = "PropertyNameInvalid"
	CodeDuplicatePropertiesSpecified      = "DuplicatePropertiesSpecified"
	CodePropertyValueTooLarge             = "PropertyValueTooLarge"
	CodeEntityTooLarge                    = "EntityTooLarge"
	CodeCommandsInBatchActOnDifferentPart = "CommandsInBatchActOnDifferentPartitions"
	CodeInvalidDuplicateRow               = "InvalidDuplicateRow"
	CodeRequestBodyTooLarge               = "RequestBodyTooLarge"
	CodeServerBusy                        = "ServerBusy"
	CodeOperationTimedOut                 = "OperationTimedOut"
	CodeInternalError                     = "InternalError"
	CodeAuthenticationFailed              = "AuthenticationFailed"

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
	// ErrThrottled matches throttling and transient server faults (503
	// ServerBusy, 500 OperationTimedOut and InternalError): retry with backoff.
	ErrThrottled = errors.New("throttled or transient")
)

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
}

// Error formats the code, status, index and message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(e.Status))
	b.WriteString(")")
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
		return e.Status == 503 || e.Status == 500 || e.Code == CodeServerBusy ||
			e.Code == CodeOperationTimedOut || e.Code == CodeInternalError
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

// Code returns the service error code carried by err, or "" when err is not
// (and does not wrap) an *Error.
func Code(err error) string {
	var se *Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// invalid, outOfRange and friends keep the rules short.
func invalid(format string, args ...any) *Error {
	return Errorf(CodeInvalidInput, 400, format, args...)
}
