package store

import (
	"context"
	"errors"
)

// CheckContext is the check every operation of a backend starts with: a
// nil context is refused (InvalidInput, SourceClient), and a context that
// is done already gives ContextError with sent false. It returns nil for a
// live context.
func CheckContext(ctx context.Context) error {
	if ctx == nil {
		return refuse(CodeInvalidInput, 400, "context is nil: pass context.Background() or a request's context")
	}
	if err := ctx.Err(); err != nil {
		return ContextError(err, false, false, "")
	}
	return nil
}

// ContextError reports an operation ended by its context: CodeCanceled
// or CodeDeadlineExceeded, wrapping ctxErr so that errors.Is(err,
// context.Canceled) and errors.Is(err, context.DeadlineExceeded) work.
// sent says whether the request had left; a write that had is Unknown.
// what names the operation and its target ("insert into T (...)").
func ContextError(ctxErr error, sent, write bool, what string) *Error {
	code, cause := CodeCanceled, context.Canceled
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		code, cause = CodeDeadlineExceeded, context.DeadlineExceeded
	}
	msg := "the context ended before the request was sent: nothing was applied"
	switch {
	case sent && write:
		msg = "the context ended after the request was sent: it may have been applied"
	case sent:
		msg = "the context ended before the answer came"
	}
	if what != "" {
		msg = what + ": " + msg
	}
	return &Error{Code: code, Index: -1, Message: msg, Err: cause, Unknown: sent && write, Source: SourceTransport}
}
