package logtail

import (
	"context"
	"encoding/base64"
	"errors"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// opSchedule is a memstore fault schedule for one table: the n-th
// operation of each kind (0, 1, ...) meets faults[op][n], or nothing past
// the end of its list; a read's list may end with a fault that repeats.
type opSchedule struct {
	mu     sync.Mutex
	table  string
	faults map[memstore.Operation][]error
	repeat map[memstore.Operation]error // after the list: this, for ever
	seen   map[memstore.Operation]int
}

func (s *opSchedule) fault(op memstore.Operation, table string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if table != s.table {
		return nil
	}
	if s.seen == nil {
		s.seen = map[memstore.Operation]int{}
	}
	n := s.seen[op]
	s.seen[op]++
	if list := s.faults[op]; n < len(list) {
		return list[n]
	}
	return s.repeat[op]
}

func (s *opSchedule) count(op memstore.Operation) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[op]
}

// faultyStream makes a stream over a table of a memstore whose faults
// follow sched. The stream talks to memstore's own table, so the reads
// take the typed lane (store.TypedTable) as they do in production.
func faultyStream(t *testing.T, sched *opSchedule, opts ...Options) (*Stream[claim], store.Table) {
	t.Helper()
	sched.table = "logtailreadback"
	st := memstore.New(memstore.WithFaults(sched.fault))
	if err := st.CreateTable(t.Context(), sched.table); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table(sched.table)
	if _, ok := driver.Typed(tbl); !ok {
		t.Fatal("memstore's table has no typed lane")
	}
	s, err := New[claim](tbl, "p", quiet(opts))
	if err != nil {
		t.Fatal(err)
	}
	return s, tbl
}

// The first insert lands and its answer is lost; memstore's own read-back
// of it fails, so the outcome is unknown; the resend meets
// EntityAlreadyExists, so the event is known to be stored; then the
// stream's read-back of the ETag fails. The event is stored, so Append
// must say so: never an error a caller would take for "not applied"
// (ErrTransient, ErrThrottled) and send the event again after.
func TestAppendStoredButETagReadBackFails(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readBack []error // the stream's read-backs, after memstore's own
		forever  error   // every later read-back
		wantETag bool
	}{
		{"503 for ever", nil, memstore.ServerBusy(), false},
		{"500 for ever", nil, memstore.InternalError(), false},
		{"503 once, then answered", []error{memstore.ServerBusy()}, nil, true},
		{"500 twice, then answered", []error{memstore.InternalError(), memstore.InternalError()}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := &opSchedule{
				faults: map[memstore.Operation][]error{
					memstore.OpInsert: {memstore.AfterApply(memstore.ResponseLost())},
					// memstore settles the lost insert with a read: it fails.
					memstore.OpGet: append([]error{memstore.ServerBusy()}, tc.readBack...),
				},
				repeat: map[memstore.Operation]error{memstore.OpGet: tc.forever},
			}
			s, tbl := faultyStream(t, sched)
			ev, err := s.Append(t.Context(), claim{Amount: 7})
			t.Logf("Append: %d inserts, %d reads: event %q ETag %q, err %v", sched.count(memstore.OpInsert), sched.count(memstore.OpGet), ev.Key, ev.Value.ETag, err)
			if errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrThrottled) {
				t.Fatalf("Append of a stored event = %v: matches ErrTransient/ErrThrottled, so a caller would store it twice", err)
			}
			if err != nil {
				t.Fatalf("Append of a stored event = %v, want it reported stored", err)
			}
			sched.mu.Lock()
			sched.repeat = nil
			sched.faults = nil
			sched.mu.Unlock()
			got, err := s.Latest(t.Context(), 10)
			if err != nil || len(got) != 1 || got[0].Key != ev.Key || got[0].Value.Amount != 7 {
				t.Fatalf("stored %+v, %v: want exactly the event %q", got, err, ev.Key)
			}
			if ev.Value.Employee != "p" || ev.Value.Key != ev.Key || ev.Time.IsZero() {
				t.Fatalf("returned event %+v lacks its keys or time", ev)
			}
			switch {
			case tc.wantETag && ev.Value.ETag != got[0].Value.ETag:
				t.Fatalf("returned ETag %q, stored %q", ev.Value.ETag, got[0].Value.ETag)
			case !tc.wantETag && ev.Value.ETag != "":
				t.Fatalf("returned ETag %q though no read-back succeeded", ev.Value.ETag)
			}
			if n := countRows(t, tbl, "p"); n != 1 {
				t.Fatalf("%d rows, want 1", n)
			}
		})
	}
}

// When no send is known to have landed but one may have, Append reports
// an unknown outcome, and nothing else: not ErrTransient or ErrThrottled,
// even when the last answer was a 503 or a read-back showed that a later
// send did not land.
func TestAppendUnknownOutcomeIsNeverTransient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		inserts []error
	}{
		// The insert lands, its answer is lost and memstore's read-back
		// fails; the resend is refused with a 503.
		{"landed, lost, then busy", []error{memstore.AfterApply(memstore.ResponseLost()), memstore.ServerBusy()}},
		// The request fails with a 500 before it lands (the client cannot
		// tell), then 503.
		{"500, then busy", []error{memstore.InternalError(), memstore.ServerBusy()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := &opSchedule{
				faults: map[memstore.Operation][]error{memstore.OpInsert: tc.inserts},
				repeat: map[memstore.Operation]error{memstore.OpGet: memstore.ServerBusy()},
			}
			s, _ := faultyStream(t, sched, Options{Attempts: len(tc.inserts)})
			_, err := s.Append(t.Context(), claim{Amount: 7})
			t.Logf("Append: %v", err)
			if !errors.Is(err, store.ErrUnknownOutcome) {
				t.Fatalf("Append = %v, want an unknown outcome", err)
			}
			if errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrThrottled) {
				t.Fatalf("Append = %v: an unknown outcome also matches ErrTransient/ErrThrottled, so a caller retrying on them may store the event twice", err)
			}
		})
	}
	// A send whose outcome memstore's read-back resolved as "not applied"
	// (ErrTransient) after an earlier unknown one does not make the whole
	// Append transient.
	t.Run("unknown, then resolved not applied", func(t *testing.T) {
		sched := &opSchedule{faults: map[memstore.Operation][]error{
			memstore.OpInsert: {memstore.ResponseLost(), memstore.ResponseLost()},
			memstore.OpGet:    {memstore.ServerBusy()}, // the first read-back fails; the second shows nothing
		}}
		s, _ := faultyStream(t, sched, Options{Attempts: 2})
		_, err := s.Append(t.Context(), claim{Amount: 7})
		t.Logf("Append: %v", err)
		if !errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) {
			t.Fatalf("Append = %v, want an unknown outcome that is not transient", err)
		}
	})
}

// A page token that is not one Page made is refused as invalid input
// (store.ErrInvalidInput), as the mapper refuses its own bad tokens.
func TestBadPageTokenIsInvalidInput(t *testing.T) {
	s, _ := faultyStream(t, &opSchedule{}, Options{Prefix: "c_"})
	if _, err := s.Append(t.Context(), claim{Amount: 1}); err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, bad := range []string{
		"!!",                                  // not base64
		"====",                                // padding, which the encoding has none of
		b64("x"),                              // not a key of the stream
		b64("d_2516069039999999999"),          // another prefix
		b64("c_"),                             // the prefix alone
		b64("c_:"),                            // just past the stream's range
		b64("c_2516069039999999999") + "\x00", // trailing junk
		"YQ",                                  // "a"
	} {
		_, err := s.Page(context.Background(), bad, 5)
		if err == nil || !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("Page(%q) = %v, want an error matching store.ErrInvalidInput", bad, err)
			continue
		}
		if store.Code(err) != store.CodeInvalidInput || store.Status(err) != 400 || store.SourceOf(err) != store.SourceClient {
			t.Errorf("Page(%q): code %q status %d source %s, want InvalidInput 400 from the client", bad, store.Code(err), store.Status(err), store.SourceOf(err))
		}
	}
}
