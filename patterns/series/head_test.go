package series

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// headFate is what the network does to the writer's first transaction.
type headFate int

const (
	landLost     headFate = iota // it lands; its answer is lost
	neverLands                   // it is lost before the service sees it
	landsLate                    // held back, it lands just before the head is read back
	landsTooLate                 // held back, it arrives after the head was moved past it
)

// heldTable loses the answer to the writer's first transaction as fate
// says, holds it back when fate says it lands later, fails the head's
// read-backs while failGets is set, and records the request id each
// transaction carries in the head row.
type heldTable struct {
	inner    store.Table
	fate     headFate
	mu       sync.Mutex
	sent     int            // transactions the writer sent
	ids      []string       // the request id each of them carried
	held     []store.Action // a transaction held back
	late     error          // the service's answer to it when it arrived
	failGets bool           // point reads fail (transient) while set
	writes   map[string]int // other write requests (insert, update, upsert)
	between  func()         // runs after the first transaction was lost
}

func (h *heldTable) wrap() store.Table { return storetest.WrapTable(h.inner, h.hook) }

func (h *heldTable) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	op := strings.TrimPrefix(c.EntityOp(), "Table.")
	switch op {
	case "Get", "GetInto":
		h.mu.Lock()
		fail := h.failGets
		h.mu.Unlock()
		if fail {
			return &store.Error{Code: store.CodeServerBusy, Status: 503, Index: -1, Source: store.SourceTransport, Message: "injected: read refused"}
		}
		h.deliver(ctx, landsLate)
		return do(ctx)
	case "Transact":
	case "Query", "QueryInto":
		return do(ctx)
	default:
		h.mu.Lock()
		if h.writes == nil {
			h.writes = map[string]int{}
		}
		h.writes[op]++
		h.mu.Unlock()
		return do(ctx)
	}
	h.mu.Lock()
	n := h.sent
	h.sent++
	id, _, _ := bytes.Cut(c.Actions[0].Entity.Properties[HeadPrefix+"Writers"].([]byte), []byte{','})
	h.ids = append(h.ids, string(id))
	h.mu.Unlock()
	if n > 0 {
		err := do(ctx)
		if n == 1 && err == nil {
			h.deliver(ctx, landsTooLate) // after the head's move
		}
		return err
	}
	switch h.fate {
	case landLost:
		if err := do(ctx); err != nil {
			return err
		}
	case landsLate, landsTooLate:
		h.mu.Lock()
		h.held = slices.Clone(c.Actions)
		h.mu.Unlock()
	}
	if h.between != nil {
		h.between()
	}
	return errLost
}

// deliver sends the held transaction now if fate says it lands at this
// point.
func (h *heldTable) deliver(ctx context.Context, at headFate) {
	h.mu.Lock()
	held := h.held
	if h.fate != at || held == nil {
		h.mu.Unlock()
		return
	}
	h.held = nil
	h.mu.Unlock()
	_, err := h.inner.Transact(ctx, held)
	h.mu.Lock()
	h.late = err
	h.mu.Unlock()
}

// TestLostWriteResolvedByTheHead: a series write whose answer is lost is
// resolved by one read of the series' head row (a partition.Head), never
// sent again. Applied (it landed, or a held-back copy landed before the
// read-back), Add returns its result as the head recovered it: one
// transaction sent, the head recording the write's request id at the
// version after its base. Not applied (lost before the service, or held
// back until after the read-back), the head is moved past it by an empty
// commit and the write tries again from a new read: three transactions
// (it, the move, the new write), the lost request id recorded nowhere,
// a late copy refused. The counter moves by exactly one either way; on
// memstore and Azurite.
func TestLostWriteResolvedByTheHead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fate    headFate
		applied bool // the first send is the write the series took
		sends   int  // transactions the writer sends
	}{
		{"applied, answer lost", landLost, true, 1},
		{"held back, lands before the read-back", landsLate, true, 1},
		{"lost before the service", neverLands, false, 3},
		{"held back, arrives after the head moved", landsTooLate, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				inner := freshTable(t, b)
				other := newSeries(t, inner, "emp", "d", Layout{Slots: 24})
				const prefill = 3
				for range prefill {
					if _, err := other.Add(t.Context(), 5, 1); err != nil {
						t.Fatal(err)
					}
				}
				ht := &heldTable{inner: inner, fate: tc.fate}
				s := newSeries(t, ht.wrap(), "emp", "d", Layout{Slots: 24})
				n, err := s.Add(t.Context(), 5, 1)
				if err != nil {
					t.Fatalf("Add: %v", err)
				}
				sn := mustRead(t, other)
				got, _ := sn.Int64s()
				f, err := other.head.Fence(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				lost := ht.ids[0]
				at := func(v int64) string { id, _ := f.WriterOf(v); return id }
				t.Logf("%s: %d transactions sent (want %d), late copy: %v; counter %d (want %d), Add returned %d, head version %d, writer of version %d %s (lost send %s), other writes %v",
					b.Name, ht.sent, tc.sends, ht.late, got[5], prefill+1, n, f.Version, prefill+1, at(prefill+1), lost, ht.writes)
				if got[5] != prefill+1 || n != prefill+1 {
					t.Fatalf("counter %d, Add returned %d, want %d: the write was lost or applied twice", got[5], n, prefill+1)
				}
				if ht.sent != tc.sends || len(ht.writes) != 0 {
					t.Fatalf("%d transactions and other writes %v, want %d transactions and nothing else: a lost write is never sent again", ht.sent, ht.writes, tc.sends)
				}
				if tc.applied {
					if f.Version != prefill+1 || at(prefill+1) != lost || sn.Version != f.Version {
						t.Fatalf("head at version %d written by %q (snapshot version %d), want %d written by the lost send %q", f.Version, at(prefill+1), sn.Version, prefill+1, lost)
					}
					return
				}
				// The head's move took version prefill+1, the new write the next.
				if f.Version != prefill+2 || at(prefill+1) != ht.ids[1] || at(prefill+2) != ht.ids[2] || lost == ht.ids[1] || lost == ht.ids[2] {
					t.Fatalf("head at version %d, writers %q and %q, want %d with the move %q then the new write %q, never the lost %q",
						f.Version, at(prefill+1), at(prefill+2), prefill+2, ht.ids[1], ht.ids[2], lost)
				}
				if tc.fate == landsTooLate && !errors.Is(ht.late, store.ErrPreconditionFailed) {
					t.Fatalf("the late copy of the lost send: %v, want it refused by the head's condition (412)", ht.late)
				}
			})
		})
	}
}

// TestUnknownOutcomeIsTheHeadsToResolve: when the head cannot be read
// back, the write's outcome is unknown: Add returns the core's
// *partition.UnknownError (store.ErrUnknownOutcome), having sent the
// write once, and its Resolve, once the head can be read, answers
// exactly: the Result (Recovered) of a write that applied, a
// NotAppliedError (the head moved past it) for one that did not, after
// which writing again adds once.
func TestUnknownOutcomeIsTheHeadsToResolve(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fate    headFate
		applied bool
	}{
		{"applied", landLost, true},
		{"not applied", neverLands, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				inner := freshTable(t, b)
				other := newSeries(t, inner, "emp", "d", Layout{Slots: 24})
				if _, err := other.Add(t.Context(), 5, 1); err != nil {
					t.Fatal(err)
				}
				ht := &heldTable{inner: inner, fate: tc.fate}
				ht.between = func() { ht.mu.Lock(); ht.failGets = true; ht.mu.Unlock() }
				s := newSeries(t, ht.wrap(), "emp", "d", Layout{Slots: 24}, Options{Attempts: 3})
				_, err := s.Add(t.Context(), 5, 1)
				var ue *partition.UnknownError
				if !errors.Is(err, store.ErrUnknownOutcome) || !errors.As(err, &ue) || errors.Is(err, store.ErrTransient) {
					t.Fatalf("Add with the head unreadable: %v, want a *partition.UnknownError", err)
				}
				if ht.sent != 1 {
					t.Fatalf("%d transactions sent, want 1: an unknown outcome is never sent again", ht.sent)
				}
				ht.mu.Lock()
				ht.failGets = false
				ht.mu.Unlock()
				res, rerr := ue.Resolve(t.Context())
				var na *partition.NotAppliedError
				switch {
				case tc.applied && (rerr != nil || !res.Recovered || res.Version != 2):
					t.Fatalf("Resolve of an applied write: %+v, %v; want a Recovered result at version 2", res, rerr)
				case !tc.applied && !errors.As(rerr, &na):
					t.Fatalf("Resolve of a write that never landed: %+v, %v; want a NotAppliedError", res, rerr)
				}
				want := int64(2)
				if !tc.applied {
					if _, err := s.Add(t.Context(), 5, 1); err != nil {
						t.Fatal(err)
					}
				}
				got, _ := mustRead(t, other).Int64s()
				t.Logf("%s: Add: %v; Resolve: %+v, %v; counter %d, want %d", b.Name, err, res, rerr, got[5], want)
				if got[5] != want {
					t.Fatalf("counter %d, want %d", got[5], want)
				}
			})
		})
	}
}
