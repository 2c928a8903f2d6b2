package logtail

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// An Append whose answer is lost is resolved by sending the same insert
// again: the event is stored exactly once whether or not the first send
// landed.
func TestAppendResolvesUnknownOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plan  []fault // the fate of each send; pass after the list
		sends int
	}{
		{"answer lost after the insert landed", []fault{applyThenLose}, 2},
		{"request lost before the service saw it", []fault{loseBefore}, 2},
		{"lost twice, landed the first time", []fault{applyThenLose, loseBefore}, 3},
		{"busy, then fine", []fault{busy, busy}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				inner := b.Store.Table(b.NewTable(t, "logtailout"))
				ft := &faultTable{Table: inner, plan: func(call int) fault {
					if call < len(tc.plan) {
						return tc.plan[call]
					}
					return pass
				}}
				s, err := New[claim](ft, "p", &Options{Sleep: noSleep})
				if err != nil {
					t.Fatal(err)
				}
				ev, err := s.Append(t.Context(), claim{Amount: 7})
				if err != nil {
					t.Fatalf("Append: %v", err)
				}
				if ft.calls != tc.sends {
					t.Fatalf("%d sends, want %d", ft.calls, tc.sends)
				}
				got, err := s.Latest(t.Context(), 10)
				t.Logf("%s: %d sends (faults %v), %d stored, lost %d, duplicated %d", b.Name, ft.calls, tc.plan, len(got), 1-min(len(got), 1), max(len(got)-1, 0))
				if err != nil || len(got) != 1 || got[0].Key != ev.Key || got[0].Value.Amount != 7 {
					t.Fatalf("stored: %+v, %v; want exactly the one event %s", got, err, ev.Key)
				}
				if ev.Value.ETag == "" || ev.Value.ETag != got[0].Value.ETag {
					t.Fatalf("returned ETag %q, stored %q", ev.Value.ETag, got[0].Value.ETag)
				}
			})
		})
	}
}

func TestAppendReportsAnOutcomeItCannotResolve(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		inner := b.Store.Table(b.NewTable(t, "logtailout"))
		ft := &faultTable{Table: inner, plan: func(int) fault { return loseBefore }}
		s, err := New[claim](ft, "p", &Options{Sleep: noSleep, Attempts: 3})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Append(t.Context(), claim{Amount: 7})
		if !errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "not confirmed after 3 sends") {
			t.Fatalf("Append with every answer lost: %v, want an unknown outcome after 3 sends", err)
		}
		if n := countRows(t, inner, "p"); n != 0 {
			t.Fatalf("%d rows", n)
		}
		// A refusal after a lost answer is reported as unknown too: the
		// first send may still have landed.
		ft2 := &faultTable{Table: inner, plan: func(call int) fault { return []fault{loseBefore, busy}[min(call, 1)] }}
		s2, _ := New[claim](ft2, "p", &Options{Sleep: noSleep, Attempts: 2})
		if _, err := s2.Append(t.Context(), claim{Amount: 8}); !errors.Is(err, store.ErrUnknownOutcome) {
			t.Fatalf("lost then busy: %v, want an unknown outcome", err)
		}
	})
}
