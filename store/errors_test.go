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
		{Errorf(CodeServerBusy, 503, "x"), []error{ErrThrottled}, []error{ErrInvalidInput}},
		{Errorf(CodeOperationTimedOut, 500, "x"), []error{ErrThrottled}, nil},
		{Errorf(CodeInternalError, 500, "x"), []error{ErrThrottled}, nil},
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
