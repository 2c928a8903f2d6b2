package series

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// A write whose answer is lost is settled without applying it twice: the
// series' head (a partition.Head) lists the request ids of its recent
// writes, so one read of it tells whether the send landed; one that did
// not is shut out by moving the head, and the write starts over. Past
// History writes the outcome is unknown: the core's UnknownError.
func TestLostAnswersAreSettled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prefill int   // adds before the faulty one
		fate    fault // of the faulty add's first send
		others  int   // adds by another writer between the send and its lost answer
		want    int64 // the counter afterwards
		unknown bool  // the outcome cannot be told
	}{
		{"first write lands, answer lost", 0, applyThenLose, 0, 1, false},
		{"first write lost before the service", 0, loseBefore, 0, 1, false},
		{"merge lands, answer lost", 3, applyThenLose, 0, 4, false},
		{"merge lost before the service", 3, loseBefore, 0, 4, false},
		{"merge lands, then 5 other writes, answer lost", 3, applyThenLose, 5, 9, false},
		{"merge lost, another write takes its place", 3, loseBefore, 1, 5, false},
		{"merge lands, then 20 other writes push its request id out", 3, applyThenLose, 20, 24, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				inner := freshTable(t, b)
				other := newSeries(t, inner, "emp", "d", Layout{Slots: 24})
				for range tc.prefill {
					if _, err := other.Add(t.Context(), 5, 1); err != nil {
						t.Fatal(err)
					}
				}
				ft := &faultTable{Table: inner, plan: func(w int) fault {
					if w == 0 {
						return tc.fate
					}
					return pass
				}}
				ft.between = func() {
					for range tc.others {
						if _, err := other.Add(t.Context(), 5, 1); err != nil {
							t.Error(err)
						}
					}
				}
				s := newSeries(t, ft.wrap(), "emp", "d", Layout{Slots: 24})
				_, err := s.Add(t.Context(), 5, 1)
				if tc.unknown {
					var ue *partition.UnknownError
					if !errors.Is(err, store.ErrUnknownOutcome) || !errors.As(err, &ue) {
						t.Fatalf("Add: %v, want an unknown outcome (a *partition.UnknownError)", err)
					}
				} else if err != nil {
					t.Fatalf("Add: %v", err)
				}
				got, _ := mustRead(t, other).Int64s()
				t.Logf("%s: %d writes sent (1 fault), %d head reads, counter %d of %d expected, unknown outcome %v: lost %d, duplicated %d",
					b.Name, ft.writes, ft.n("get"), got[5], tc.want, errors.Is(err, store.ErrUnknownOutcome), max(tc.want-got[5], 0), max(got[5]-tc.want, 0))
				if got[5] != tc.want {
					t.Fatalf("counter %d, want %d: the add was lost or applied twice", got[5], tc.want)
				}
			})
		})
	}
}

// A lost answer inside a transaction (a series over two entities) is
// settled the same way.
func TestLostAnswerOfATransactionIsSettled(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		inner := freshTable(t, b)
		calls := 0
		ft := &faultTable{Table: inner, plan: func(int) fault {
			calls++
			if calls%2 == 1 {
				return applyThenLose
			}
			return pass
		}}
		s := newSeries(t, ft.wrap(), "emp", "2026", Layout{Slots: 366})
		for i := range 3 {
			err := s.Update(t.Context(), func(v []any) (map[int]any, error) {
				m := map[int]any{}
				for d := range 366 {
					n, _ := v[d].(int64)
					m[d] = n + 1
				}
				return m, nil
			})
			if err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		sn := mustRead(t, s)
		got, _ := sn.Int64s()
		if sn.Segments != 2 || ft.n("transact") < 3 || got[0] != 3 || got[365] != 3 || sn.Version != 3 {
			t.Fatalf("segments %d, transactions %d, day 0 = %d, day 365 = %d, version %d", sn.Segments, ft.n("transact"), got[0], got[365], sn.Version)
		}
	})
}
