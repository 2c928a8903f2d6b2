package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestErrorIsSentinels(t *testing.T) {
	cases := []struct {
		err  *Error
		is   []error
		isnt []error
	}{
		{Errorf(CodeResourceNotFound, 404, "x"), []error{ErrNotFound}, []error{ErrAlreadyExists, ErrInvalidInput, ErrThrottled}},
		{Errorf(CodeTableNotFound, 404, "x"), []error{ErrNotFound}, []error{ErrPreconditionFailed}},
		{Errorf(CodeEntityAlreadyExists, 409, "x"), []error{ErrAlreadyExists}, []error{ErrNotFound, ErrPreconditionFailed}},
		{Errorf(CodeTableAlreadyExists, 409, "x"), []error{ErrAlreadyExists}, []error{ErrInvalidInput}},
		{Errorf(CodeTableBeingDeleted, 409, "x"), nil, []error{ErrAlreadyExists, ErrNotFound}},
		{Errorf(CodeUpdateConditionNotSatisfied, 412, "x"), []error{ErrPreconditionFailed}, []error{ErrAlreadyExists}},
		{Errorf(CodeConditionNotMet, 412, "x"), []error{ErrPreconditionFailed}, nil},
		{Errorf(CodeBlobAlreadyExists, 409, "x"), []error{ErrPreconditionFailed, ErrAlreadyExists}, nil},
		{Errorf(CodeEntityTooLarge, 400, "x"), []error{ErrInvalidInput, ErrTooLarge}, []error{ErrThrottled}},
		{Errorf(CodeKeyValueTooLarge, 400, "x"), []error{ErrInvalidInput, ErrTooLarge}, nil},
		{Errorf(CodeRequestBodyTooLarge, 413, "x"), []error{ErrInvalidInput, ErrTooLarge}, nil},
		{Errorf(CodeOutOfRangeInput, 400, "x"), []error{ErrInvalidInput}, []error{ErrTooLarge}},
		{Errorf(CodeServerBusy, 503, "x"), []error{ErrThrottled, ErrTransient}, []error{ErrInvalidInput, ErrUnknownOutcome}},
		// A 500 is never "throttled": for a write it may hide an applied
		// request. To a read (Unknown unset) it is transient.
		{Errorf(CodeOperationTimedOut, 500, "x"), []error{ErrTransient}, []error{ErrThrottled, ErrUnknownOutcome}},
		{Errorf(CodeInternalError, 500, "x"), []error{ErrTransient}, []error{ErrThrottled, ErrUnknownOutcome}},
		{&Error{Code: CodeInternalError, Status: 500, Unknown: true}, []error{ErrUnknownOutcome}, []error{ErrThrottled, ErrTransient}},
		{&Error{Code: CodeOperationTimedOut, Status: 500, Unknown: true}, []error{ErrUnknownOutcome}, []error{ErrThrottled, ErrTransient}},
		{&Error{Code: CodeResponseLost, Unknown: true}, []error{ErrUnknownOutcome}, []error{ErrThrottled, ErrTransient, ErrInvalidInput, ErrNotFound}},
		{&Error{Code: CodeResponseLost}, []error{ErrTransient}, []error{ErrThrottled, ErrUnknownOutcome}},
		{&Error{Code: CodeConnectionFailed}, []error{ErrTransient}, []error{ErrThrottled, ErrUnknownOutcome}},
		{&Error{Code: CodeCanceled, Err: context.Canceled}, []error{context.Canceled}, []error{ErrTransient, ErrThrottled, ErrUnknownOutcome}},
		{&Error{Code: CodeDeadlineExceeded, Unknown: true, Err: context.DeadlineExceeded}, []error{context.DeadlineExceeded, ErrUnknownOutcome}, []error{ErrTransient, ErrThrottled}},
		{&Error{Code: CodeServerBusy, Status: 503, Unknown: true}, []error{ErrUnknownOutcome}, []error{ErrTransient, ErrThrottled}},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("context: %w", c.err)
		for _, s := range c.is {
			if !errors.Is(wrapped, s) {
				t.Errorf("%s (%d) should match %v", c.err.Code, c.err.Status, s)
			}
		}
		for _, s := range c.isnt {
			if errors.Is(wrapped, s) {
				t.Errorf("%s (%d) should not match %v", c.err.Code, c.err.Status, s)
			}
		}
	}
}

// TestErrorFormatWithoutStatus: an error with no service answer prints no
// "(0)".
func TestErrorFormatWithoutStatus(t *testing.T) {
	e := &Error{Code: CodeConnectionFailed, Index: -1, Message: "insert into T: could not connect; nothing was applied", Source: SourceTransport}
	want := "ConnectionFailed: insert into T: could not connect; nothing was applied"
	if e.Error() != want {
		t.Fatalf("Error() = %q, want %q", e.Error(), want)
	}
}

// TestErrorHelpers: Status, Index and SourceOf read through wrapping, and
// tablekit's own checks say so.
func TestErrorHelpers(t *testing.T) {
	e := fmt.Errorf("wrapped: %w", &Error{Code: CodeEntityAlreadyExists, Status: 409, Index: 4})
	if Status(e) != 409 || Index(e) != 4 || SourceOf(e) != SourceService {
		t.Fatalf("Status %d Index %d Source %v; want 409, 4, service", Status(e), Index(e), SourceOf(e))
	}
	plain := errors.New("plain")
	if Status(plain) != 0 || Index(plain) != -1 || SourceOf(plain) != SourceClient {
		t.Fatalf("plain error: Status %d Index %d Source %v; want 0, -1, client", Status(plain), Index(plain), SourceOf(plain))
	}
	err := ValidateKeys("a/b", "r")
	if SourceOf(err) != SourceClient {
		t.Fatalf("a rule's refusal has source %v, want client", SourceOf(err))
	}
	err = ValidateTransaction([]Action{
		{Kind: ActionInsert, Entity: Entity{PartitionKey: "a", RowKey: "1"}},
		{Kind: ActionInsert, Entity: Entity{PartitionKey: "b", RowKey: "1"}},
	})
	if SourceOf(err) != SourceClient || Index(err) != 1 || Code(err) != CodeCommandsInBatchActOnDifferentPartitions {
		t.Fatalf("got %v (source %v, index %d); want a client refusal at index 1", err, SourceOf(err), Index(err))
	}
	for _, s := range []Source{SourceService, SourceClient, SourceTransport} {
		if s.String() == "" {
			t.Fatalf("Source %d has no name", s)
		}
	}
}

func TestErrorFormatAndUnwrap(t *testing.T) {
	e := &Error{Code: CodeEntityAlreadyExists, Status: 409, Index: 3, Message: "entity (a, b) exists", Err: context.Canceled}
	want := "EntityAlreadyExists (409) at action 3: entity (a, b) exists: context canceled"
	if e.Error() != want {
		t.Fatalf("Error() = %q, want %q", e.Error(), want)
	}
	if !errors.Is(e, context.Canceled) {
		t.Fatal("Unwrap does not reach the cause")
	}
	if Code(fmt.Errorf("wrap: %w", e)) != CodeEntityAlreadyExists || Code(errors.New("plain")) != "" {
		t.Fatal("Code does not find the service code")
	}
	w := WithIndex(Errorf(CodeInvalidInput, 400, "bad"), 7)
	if w.Index != 7 || w.Code != CodeInvalidInput {
		t.Fatalf("WithIndex = %+v", w)
	}
	if o := WithIndex(errors.New("boom"), 2); o.Code != CodeInternalError || o.Index != 2 {
		t.Fatalf("WithIndex of a plain error = %+v", o)
	}
}

// TestEntityNotFound: a missing entity is "not found", a missing table,
// a conflict or no error is not, wrapped or not.
func TestEntityNotFound(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&Error{Code: CodeResourceNotFound, Status: 404}, true},
		{fmt.Errorf("read back: %w", &Error{Code: CodeResourceNotFound, Status: 404, Index: 3}), true},
		{&Error{Code: CodeTableNotFound, Status: 404}, false},
		{&Error{Code: CodeEntityAlreadyExists, Status: 409}, false},
		{fmt.Errorf("plain"), false},
		{nil, false},
	}
	for _, c := range cases {
		if got := EntityNotFound(c.err); got != c.want {
			t.Errorf("EntityNotFound(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
