package storetest

import (
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestTransientCodes_Throttled proves the throughput and transient-fault
// rows of the reference table, which no backend can be made to produce on
// demand: the service's ServerBusy (503) classifies as store.ErrThrottled
// and store.ErrTransient, OperationTimedOut (500) and InternalError (500)
// as store.ErrTransient only (as a read's answer; a write answered so has
// Unknown set and matches store.ErrUnknownOutcome instead), and as
// nothing else.
func TestTransientCodes_Throttled(t *testing.T) {
	for _, c := range []struct {
		code   string
		status int
	}{
		{store.CodeServerBusy, 503},
		{store.CodeOperationTimedOut, 500},
		{store.CodeInternalError, 500},
	} {
		t.Run(c.code, func(t *testing.T) {
			err := store.Errorf(c.code, c.status, "the service is busy")
			wantErr(t, err, c.code, c.status, noIndex)
			// Inside a transaction the classification is the same.
			wantErr(t, store.WithIndex(err, 4), c.code, c.status, 4)
		})
	}
}

// TestWantErr_RejectsWrongErrors proves the suite's own checker fails on
// a wrong code, status, index, message or type.
func TestWantErr_RejectsWrongErrors(t *testing.T) {
	good := store.Errorf(store.CodeEntityAlreadyExists, 409, "exists")
	for _, c := range []struct {
		name string
		err  error
	}{
		{"nil", nil},
		{"not a store.Error", errString("plain")},
		{"other code", store.Errorf(store.CodeTableAlreadyExists, 409, "exists")},
		{"other status", store.Errorf(store.CodeEntityAlreadyExists, 400, "exists")},
		{"index", store.WithIndex(good, 0)},
		{"no message", &store.Error{Code: store.CodeEntityAlreadyExists, Status: 409, Index: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			if wantErr(rec, c.err, store.CodeEntityAlreadyExists, 409, noIndex) || !rec.failed {
				t.Errorf("wantErr accepted %v", c.err)
			}
		})
	}
	rec := &recorder{TB: t}
	if !wantErr(rec, good, store.CodeEntityAlreadyExists, 409, noIndex) || rec.failed {
		t.Errorf("wantErr refused %v", good)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// recorder notes failures instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}
