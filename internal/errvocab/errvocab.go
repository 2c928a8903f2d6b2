// Package errvocab checks, in the patterns' tests, that an error speaks
// the patterns' error vocabulary (stated in package partition): it
// matches exactly the sentinel of its meaning, none of the others, and
// unwraps to a *store.Error whose code store.Code returns.
package errvocab

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// Meaning is one word of the vocabulary.
type Meaning int

const (
	// Race: another writer got there first; retry (partition.ErrConflict).
	Race Meaning = iota
	// Changed: the row changed under the caller's ETag (partition.ErrChanged).
	Changed
	// Duplicate: an insert met an existing row (partition.ErrDuplicate).
	Duplicate
	// Unknown: the outcome is unknown (store.ErrUnknownOutcome).
	Unknown
	// Domain: a permanent conflict of the data; matches none of the
	// sentinels above and never store.ErrTransient. Its own sentinel is
	// passed to Check.
	Domain
)

var names = [...]string{"a race (partition.ErrConflict)", "a changed row (partition.ErrChanged)",
	"a duplicate (partition.ErrDuplicate)", "an unknown outcome (store.ErrUnknownOutcome)", "a domain conflict"}

func (m Meaning) String() string { return names[m] }

var sentinels = map[Meaning]error{
	Race:      partition.ErrConflict,
	Changed:   partition.ErrChanged,
	Duplicate: partition.ErrDuplicate,
	Unknown:   store.ErrUnknownOutcome,
}

// Check fails t unless err has meaning m: it matches m's sentinel (and
// every one of also, a domain conflict's own sentinel say) and none of the
// other meanings' sentinels, a race or a domain conflict never matches
// store.ErrUnknownOutcome, a domain conflict never store.ErrTransient, and
// errors.As finds a *store.Error with a code that store.Code returns.
func Check(t testing.TB, err error, m Meaning, also ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("nil error, want %s", m)
	}
	for n, s := range sentinels {
		if got, want := errors.Is(err, s), n == m; got != want {
			t.Errorf("%v (%T): errors.Is(%v) = %v, want %v: it should be %s", err, err, s, got, want, m)
		}
	}
	for _, s := range also {
		if !errors.Is(err, s) {
			t.Errorf("%v (%T): does not match %v", err, err, s)
		}
	}
	if m == Domain && errors.Is(err, store.ErrTransient) {
		t.Errorf("%v (%T): a domain conflict matches store.ErrTransient: a caller would retry it forever", err, err)
	}
	var se *store.Error
	if !errors.As(err, &se) {
		t.Errorf("%v (%T): errors.As finds no *store.Error", err, err)
	} else if store.Code(err) == "" || store.Status(err) == 0 && se.Source != store.SourceTransport {
		t.Errorf("%v (%T): store.Code %q, store.Status %d: want the code and status of the row's *store.Error", err, err, store.Code(err), store.Status(err))
	}
}
