package storetest

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// noIndex is the Index of an error that does not come from one action of
// a transaction; anyIndex skips the Index check.
const (
	noIndex  = -1
	anyIndex = -2
)

type namedSentinel struct {
	err  error
	name string
}

// allSentinels lists every sentinel of package store with its name.
func allSentinels() []namedSentinel {
	return []namedSentinel{
		{store.ErrNotFound, "ErrNotFound"},
		{store.ErrAlreadyExists, "ErrAlreadyExists"},
		{store.ErrPreconditionFailed, "ErrPreconditionFailed"},
		{store.ErrInvalidInput, "ErrInvalidInput"},
		{store.ErrTooLarge, "ErrTooLarge"},
		{store.ErrThrottled, "ErrThrottled"},
		{store.ErrTransient, "ErrTransient"},
		{store.ErrUnknownOutcome, "ErrUnknownOutcome"},
	}
}

// kindsOf names the sentinels an error with this code must match with
// errors.Is; it must match none of the others. Written out code by code so
// that the suite states the classification rather than re-deriving it.
func kindsOf(code string) []error {
	switch code {
	case store.CodeTableNotFound, store.CodeResourceNotFound, store.CodeQueueNotFound,
		store.CodeMessageNotFound, store.CodeContainerNotFound, store.CodeBlobNotFound:
		return []error{store.ErrNotFound}
	case store.CodeTableAlreadyExists, store.CodeEntityAlreadyExists,
		store.CodeQueueAlreadyExists, store.CodeContainerAlreadyExists:
		return []error{store.ErrAlreadyExists}
	case store.CodeBlobAlreadyExists:
		return []error{store.ErrAlreadyExists, store.ErrPreconditionFailed}
	case store.CodeUpdateConditionNotSatisfied, store.CodeConditionNotMet,
		store.CodeAppendPositionConditionNotMet, store.CodeMaxBlobSizeConditionNotMet:
		return []error{store.ErrPreconditionFailed}
	case store.CodeBlockCountExceedsLimit, store.CodeInvalidBlobType, store.CodeInvalidRange:
		return nil
	case store.CodeKeyValueTooLarge, store.CodePropertyValueTooLarge, store.CodeEntityTooLarge,
		store.CodeTooManyProperties, store.CodeRequestBodyTooLarge, store.CodeMessageTooLarge:
		return []error{store.ErrInvalidInput, store.ErrTooLarge}
	case store.CodeTableBeingDeleted:
		return nil
	case store.CodeServerBusy:
		return []error{store.ErrThrottled, store.ErrTransient}
	case store.CodeOperationTimedOut, store.CodeInternalError:
		return []error{store.ErrTransient}
	}
	// InvalidResourceName, OutOfRangeInput, InvalidInput, InvalidValueType,
	// PropertyNameTooLong, PropertyNameInvalid, PropertiesNeedValue,
	// CommandsInBatchActOnDifferentPartitions, InvalidDuplicateRow,
	// PopReceiptMismatch and the other 400s.
	return []error{store.ErrInvalidInput}
}

// wantErr checks that err is a *store.Error with exactly this code, status
// and transaction index, and that errors.Is classifies it as kindsOf says.
// It reports through t.Errorf and returns whether everything held.
func wantErr(t testing.TB, err error, code string, status, index int) bool {
	t.Helper()
	if err == nil {
		t.Errorf("got no error, want %s (%d)", code, status)
		return false
	}
	var se *store.Error
	if !errors.As(err, &se) {
		t.Errorf("got %T %v, want a *store.Error %s (%d)", err, err, code, status)
		return false
	}
	ok := true
	if se.Code != code || se.Status != status {
		t.Errorf("got %s (%d): %v; want %s (%d)", se.Code, se.Status, err, code, status)
		ok = false
	}
	if index != anyIndex && se.Index != index {
		t.Errorf("got Index %d in %v, want %d", se.Index, err, index)
		ok = false
	}
	if se.Message == "" {
		t.Errorf("%s error has an empty Message", se.Code)
		ok = false
	}
	want := kindsOf(code)
	for _, s := range allSentinels() {
		expect := false
		for _, w := range want {
			if w == s.err {
				expect = true
			}
		}
		if got := errors.Is(err, s.err); got != expect {
			t.Errorf("errors.Is(%v, store.%s) = %v, want %v", err, s.name, got, expect)
			ok = false
		}
	}
	return ok
}

// codeStatus is one acceptable answer of wantErrIn.
type codeStatus struct {
	code   string
	status int
}

// wantErrIn is wantErr for operations where the service answers one of
// several codes (a stale pop receipt: 404 MessageNotFound or 400
// PopReceiptMismatch).
func wantErrIn(t testing.TB, err error, choices ...codeStatus) {
	t.Helper()
	for _, c := range choices {
		if store.Code(err) == c.code {
			wantErr(t, err, c.code, c.status, noIndex)
			return
		}
	}
	t.Errorf("got %v, want one of %v", err, choices)
}

// must fails the test now when err is not nil.
func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
