package indexentity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// fate is what lossStore does with a transaction.
type fate int

const (
	pass        fate = iota // sent, answered
	appliedLost             // sent and applied, its answer lost
	lostBefore              // lost on the way: never reached the store
)

// lossStore loses the answers of the entity table's transactions as
// pick decides, above the backend, so that the outcome reaches the
// package unknown, with no read-back of the store's to settle it first.
// It records how many times each write's commit (by the request id on
// its head row) was sent.
type lossStore struct {
	store.Store
	mu     sync.Mutex
	pick   func() fate
	sent   map[string]int // request id -> sends
	txns   int            // transactions sent
	faults int            // answers lost
}

func newLossStore(st store.Store) *lossStore {
	return &lossStore{Store: st, pick: func() fate { return pass }, sent: map[string]int{}}
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (s *lossStore) Table(name string) store.Table {
	return storetest.WrapTable(s.Store.Table(name), s.hook)
}

func (s *lossStore) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	if c.EntityOp() != "Table.Transact" {
		return do(ctx)
	}
	s.mu.Lock()
	s.txns++
	// A write's commit carries the entity's row beside its head; the
	// head's resolution moves the head alone, with an empty commit
	// conditional on the head's ETag, which applies at most once and may
	// be sent again when its own answer is lost.
	if id := requestID(c.Actions); id != "" && len(c.Actions) > 1 {
		s.sent[id]++
	}
	f := s.pick()
	if f != pass {
		s.faults++
	}
	s.mu.Unlock()
	switch f {
	case appliedLost:
		if err := do(ctx); err != nil {
			return err
		}
		return lost(nil)
	case lostBefore:
		return lost(nil)
	}
	return do(ctx)
}

// take returns the transactions sent since the last take.
func (s *lossStore) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.txns
	s.txns = 0
	return n
}

// resent returns the request ids sent more than once.
func (s *lossStore) resent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, n := range s.sent {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", id, n))
		}
	}
	return out
}

// requestID reads the request id a transaction records on an entity's
// head row: the first of the head's writers. "" when it carries no head.
func requestID(acts []store.Action) string {
	for _, a := range acts {
		if !strings.HasPrefix(a.Entity.RowKey, headMark) {
			continue
		}
		a, err := a.WithProperties()
		if err != nil {
			return ""
		}
		w, _ := a.Entity.Properties[headPrefix+"Writers"].([]byte)
		id, _, _ := bytes.Cut(w, []byte{','})
		return string(id)
	}
	return ""
}

// TestSameLostAnswerResolvedByHead: the answer to a SamePartition write
// (an insert, a move to another list, a delete) is lost after the
// transaction applied, or on the way before it did, with no read-back
// of the store's to settle it: the entity's head decides. Applied: the
// write returns done (the head proved it: Recovered) after one
// transaction. Not applied: the head is moved past the lost commit (one
// empty commit), and the write is built again on what it reads and
// applied by a commit of a new request id. Either way the lost commit
// is never sent again, the entity is as the write left it, and its lists
// match it.
func TestSameLostAnswerResolvedByHead(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		for _, tc := range []struct {
			fate fate
			txns int // transactions sent by the write
		}{
			{appliedLost, 1},
			{lostBefore, 3}, // the lost commit, the head's move past it, the commit built again
		} {
			for _, op := range []string{"insert", "move", "delete"} {
				name := map[fate]string{appliedLost: "applied, answer lost", lostBefore: "lost before it applied"}[tc.fate] + ", " + op
				t.Run(name, func(t *testing.T) {
					ctx := t.Context()
					ls := newLossStore(e.B.Store)
					f := newFixture(t, e, SamePartition, Options{}, ls)
					must(t, f.x.Insert(ctx, &Employee{Dept: "Sales", ID: idOf(0), Last: "Jones"}))
					v := Employee{Dept: "Sales", ID: idOf(1), First: "Bo", Last: "Jones"}
					if op != "insert" {
						must(t, f.x.Insert(ctx, &v))
					}
					var want *Employee
					ls.take()
					armed := true
					ls.mu.Lock()
					ls.pick = func() fate {
						if armed {
							armed = false
							return tc.fate
						}
						return pass
					}
					ls.mu.Unlock()
					var err error
					switch op {
					case "insert":
						err = f.x.Insert(ctx, &v)
						want = &v
					case "move":
						v.Last = "Smith"
						err = f.x.Update(ctx, &v)
						want = &v
					case "delete":
						err = f.x.Delete(ctx, &v)
					}
					if err != nil {
						t.Fatalf("%s: %v, want done", name, err)
					}
					if n := ls.take(); n != tc.txns {
						t.Fatalf("%s: %d transactions sent, want %d", name, n, tc.txns)
					}
					if r := ls.resent(); len(r) != 0 {
						t.Fatalf("%s: commits sent again: %v", name, r)
					}
					got, gerr := f.x.Get(ctx, "Sales", idOf(1))
					switch {
					case want == nil && !errors.Is(gerr, store.ErrNotFound):
						t.Fatalf("%s: the entity is %+v (%v), want it deleted", name, got, gerr)
					case want != nil && (gerr != nil || got.Last != want.Last || got.First != want.First):
						t.Fatalf("%s: the entity is %+v (%v), want %+v", name, got, gerr, want)
					}
					if op != "delete" {
						// Applied with its answer lost, the write's ETag is
						// unknown; applied by the later commit, it is the
						// entity's.
						if tc.fate == appliedLost && v.ETag != "" || tc.fate == lostBefore && v.ETag != got.ETag {
							t.Fatalf("%s: the ETag handed back is %q, the entity's %q", name, v.ETag, got.ETag)
						}
					}
					if c := f.check(t); c.lost+c.duplicated+c.stale != 0 {
						t.Fatalf("%s: %v", name, c)
					}
				})
			}
		}
	})
}

// TestProofSameLostAnswers: writers insert, move and delete employees of
// one department among a few shared last names (so that the lists are
// contended, and their races retried), while about one transaction in
// five has its answer lost, after it applied or before, above the
// backend (no read-back of the store's settles it): every write's
// outcome is decided by the entity's head. Each write is checked against
// the stored entity as soon as it returns (done means applied, a refusal
// means not applied, an unknown outcome may be either and is counted);
// at the end every list matches the entities, and no commit was sent
// twice: lost 0, duplicated 0, resent 0.
func TestProofSameLostAnswers(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		runs, each := 6, 30
		if !e.Fake() {
			runs, each = 2, 16
		}
		if testing.Short() {
			runs = 2
		}
		const writers = 3
		var total struct{ runs, faults, writes, unknown, refused, txns int }
		for seed := range runs {
			ctx := context.Background()
			ls := newLossStore(e.B.Store)
			var mu sync.Mutex
			r := rand.New(rand.NewPCG(uint64(seed), 91))
			ls.pick = func() fate { // called under ls.mu
				switch n := r.IntN(100); {
				case n < 10:
					return appliedLost
				case n < 20:
					return lostBefore
				}
				return pass
			}
			f := newFixture(t, e, SamePartition, Options{Attempts: 64}, ls)
			names := []string{"Jones", "Smith", ""}
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					wr := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
					for i := range each {
						rk := idOf(w*100 + wr.IntN(3)) // each writer its own employees
						before := truthOf(t, e, f, rk)
						var want *Employee
						var err error
						switch {
						case before == nil:
							v := Employee{Dept: "Sales", ID: rk, First: fmt.Sprint(i), Last: names[wr.IntN(len(names))]}
							want = &v
							err = f.x.Insert(ctx, &v)
						case wr.IntN(3) == 0:
							err = f.x.Delete(ctx, before)
						default:
							v := *before
							v.Last, v.First = names[wr.IntN(len(names))], fmt.Sprint(i)
							want = &v
							err = f.x.Update(ctx, &v)
						}
						after := truthOf(t, e, f, rk)
						same := func(a, b *Employee) bool {
							return (a == nil) == (b == nil) && (a == nil || a.Last == b.Last && a.First == b.First)
						}
						mu.Lock()
						total.writes++
						switch {
						case err == nil:
							if !same(after, want) {
								t.Errorf("seed %d: %s reported done, stored %+v, want %+v", seed, rk, after, want)
							}
						case errors.Is(err, store.ErrUnknownOutcome):
							total.unknown++
							if !same(after, want) && !same(after, before) {
								t.Errorf("seed %d: %s unknown outcome, stored %+v", seed, rk, after)
							}
						default:
							total.refused++
							if !same(after, before) {
								t.Errorf("seed %d: %s reported failed (%v), stored %+v over %+v", seed, rk, err, after, before)
							}
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			c := f.check(t)
			resent := ls.resent()
			if c.lost+c.duplicated+c.stale+len(resent) != 0 {
				t.Fatalf("seed %d: %v; commits sent again: %v", seed, c, resent)
			}
			total.runs++
			total.faults += ls.faults
			total.txns += ls.txns
		}
		t.Logf("%s: runs %d, faults %d, writes %d (%d unknown, %d refused and not applied), transactions %d: lost 0, duplicated 0, stale 0, resent 0",
			e.B.Name, total.runs, total.faults, total.writes, total.unknown, total.refused, total.txns)
		if total.faults == 0 {
			t.Fatal("no fault was injected")
		}
	})
}

// truthOf reads an employee straight from the backend: nil when absent.
func truthOf(t *testing.T, e eventualtest.Env, f *fixture, rk string) *Employee {
	t.Helper()
	row, err := e.B.Store.Table(f.table).Get(context.Background(), "Sales", rk, nil)
	if store.EntityNotFound(err) {
		return nil
	}
	if err != nil {
		t.Error(err)
		return nil
	}
	v := Employee{Dept: "Sales", ID: rk, ETag: row.ETag}
	v.First, _ = row.Properties["First"].(string)
	v.Last, _ = row.Properties["Last"].(string)
	return &v
}
