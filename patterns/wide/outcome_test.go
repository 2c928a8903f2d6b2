package wide

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// A write whose answer is lost is resolved by reading the header back:
// never sent blindly again, never reported failed when it applied. The
// wrapper table loses answers before the store could read the rows back,
// so the package's own resolution decides, on both backends.
func TestLostAnswersAreResolved(t *testing.T) {
	type want int
	const (
		ok       want = iota // the write reports success
		conflict             // ConditionError: another write took its place
		unknown              // UnknownError: the header no longer tells
	)
	for _, tc := range []struct {
		name    string
		prefill int   // writes before the faulty one
		fate    fault // of the faulty write's first send
		others  int   // writes by another writer between the send and its lost answer
		ifMatch string
		del     bool  // the faulty write is a Delete
		want    want  // the outcome reported
		version int64 // the value's version afterwards
		mine    bool  // the stored value is the faulty write's
		sends   int   // transactions the faulty writer sends (a lost write that did not apply: it, the empty commit on the head that shuts it out, the new write)
	}{
		{name: "create lands, answer lost", fate: applyThenLose, ifMatch: "create", want: ok, version: 1, mine: true, sends: 1},
		{name: "create lost before the service", fate: loseBefore, ifMatch: "create", want: ok, version: 1, mine: true, sends: 3},
		{name: "create lost, another writer creates first", fate: loseBefore, others: 1, ifMatch: "create", want: conflict, version: 1, sends: 1},
		{name: "replace lands, answer lost", prefill: 2, fate: applyThenLose, ifMatch: "read", want: ok, version: 3, mine: true, sends: 1},
		{name: "replace lost before the service", prefill: 2, fate: loseBefore, ifMatch: "read", want: ok, version: 3, mine: true, sends: 3},
		{name: "replace held in the network, lands before the resend", prefill: 2, fate: landLater, ifMatch: "read", want: ok, version: 3, mine: true, sends: 2},
		{name: "replace lands, 5 other writes, answer lost", prefill: 2, fate: applyThenLose, others: 5, ifMatch: "read", want: ok, version: 8, sends: 1},
		{name: "replace lost, another write takes its place", prefill: 2, fate: loseBefore, others: 1, ifMatch: "read", want: conflict, version: 3, sends: 1},
		{name: "unconditional write lost, another write lands, written again on top", prefill: 2, fate: loseBefore, others: 1, ifMatch: "any", want: ok, version: 4, mine: true, sends: 2},
		{name: "replace lands, 20 other writes push its id out", prefill: 2, fate: applyThenLose, others: 20, ifMatch: "read", want: unknown, version: 23, sends: 1},
		{name: "server busy, then sent again", prefill: 1, fate: busy, ifMatch: "read", want: ok, version: 2, mine: true, sends: 2},
		{name: "delete lands, answer lost", prefill: 2, fate: applyThenLose, ifMatch: "read", del: true, want: ok, version: 3, sends: 1},
		{name: "delete lost before the service", prefill: 2, fate: loseBefore, ifMatch: "any", del: true, want: ok, version: 3, sends: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				name := freshTable(t, b)
				other := newWide[Properties](t, b.Store, name, nil)
				for g := range tc.prefill {
					v := marked(g, 9)
					if _, err := other.Put(t.Context(), "p", "v", &v, store.ETagAny); err != nil {
						t.Fatal(err)
					}
				}
				var ifMatch store.ETag
				switch tc.ifMatch {
				case "read":
					_, ifMatch, _ = other.Get(t.Context(), "p", "v")
				case "any":
					ifMatch = store.ETagAny
				}
				var ft *faultTable
				st := wrapped{b.Store, func(tbl store.Table) store.Table {
					ft = &faultTable{Table: tbl, plan: func(s int) fault {
						if s == 0 {
							return tc.fate
						}
						return pass
					}}
					return ft
				}}
				w := newWide[Properties](t, st, name, nil)
				ft.between = func() {
					for g := range tc.others {
						v := marked(100+g, 8)
						if _, err := other.Put(t.Context(), "p", "v", &v, store.ETagAny); err != nil {
							t.Error(err)
						}
					}
				}
				mine := marked(50, 1)
				var err error
				var etag store.ETag
				if tc.del {
					err = w.Delete(t.Context(), "p", "v", ifMatch)
				} else {
					etag, err = w.Put(t.Context(), "p", "v", &mine, ifMatch)
				}
				var got want
				switch {
				case err == nil:
					got = ok
				case errors.As(err, new(*ConditionError)):
					got = conflict
				case errors.Is(err, store.ErrUnknownOutcome):
					var ue *UnknownError
					if !errors.As(err, &ue) {
						t.Fatalf("unknown outcome without an UnknownError: %v", err)
					}
					got = unknown
				default:
					t.Fatalf("write: %v", err)
				}
				s, rerr := other.Read(t.Context(), "p", "v")
				var version int64
				stored := "deleted"
				switch {
				case tc.del && errors.Is(rerr, store.ErrNotFound):
					ot := &target{pk: "p", head: mustRowKey(t, "v", 0)}
					hd, err := other.head(ot)
					if err != nil {
						t.Fatal(err)
					}
					h, _, err := other.readHeader(t.Context(), ot, hd)
					if err != nil {
						t.Fatal(err)
					}
					version = h.version
				case rerr != nil:
					t.Fatal(rerr)
				default:
					version = s.Version
					stored, rerr = checkWhole(s.Value)
					if rerr != nil {
						t.Fatal(rerr)
					}
				}
				t.Logf("%s: %s: %d transactions sent (1 fault: %s), %d header reads, %d other writes; reported %v (ETag %q); version %d (want %d), stored %s; lost 0, duplicated 0",
					b.Name, tc.name, ft.n("transact"), tc.fate, ft.n("get"), tc.others, err, etag, version, tc.version, stored)
				if got != tc.want {
					t.Fatalf("reported %v, want outcome %d", err, tc.want)
				}
				if version != tc.version {
					t.Fatalf("version %d, want %d: a write was lost or applied twice", version, tc.version)
				}
				if tc.mine && stored != "50/1" {
					t.Fatalf("stored %s, want the write's own value 50/1", stored)
				}
				if tc.want == ok && !tc.del && tc.others == 0 && etag != s.ETag {
					t.Fatalf("Put returned ETag %q, the value has %q", etag, s.ETag)
				}
				if n := ft.n("transact"); n != tc.sends {
					t.Fatalf("%d transactions sent, want %d", n, tc.sends)
				}
			})
		})
	}
}

func mustRowKey(t *testing.T, id string, i int) string {
	t.Helper()
	rk, err := rowKey(id, i)
	if err != nil {
		t.Fatal(err)
	}
	return rk
}

// schedule is a seeded memstore fault schedule: transactions whose
// answers are lost before or after they apply, 500s after they apply,
// 503s, and read-backs that fail half the time after a lost answer, so
// that the store cannot settle the outcome itself and the package must.
type schedule struct {
	mu       sync.Mutex
	r        *rand.Rand
	counts   map[string]int
	failGets int
	quiet    bool // no faults: the test looks at the state
}

func newSchedule(seed uint64) *schedule {
	return &schedule{r: rand.New(rand.NewPCG(seed, seed+1)), counts: map[string]int{}}
}

func (s *schedule) fault(op memstore.Operation, table string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiet {
		return nil
	}
	switch op {
	case memstore.OpTransact:
		switch n := s.r.IntN(12); {
		case n < 3:
			s.counts["applied, answer lost"]++
			s.failGets = s.r.IntN(2)
			return memstore.AfterApply(memstore.ResponseLost())
		case n < 5:
			s.counts["lost before it applied"]++
			s.failGets = s.r.IntN(2)
			return memstore.ResponseLost()
		case n < 6:
			s.counts["applied, then a 500"]++
			s.failGets = s.r.IntN(2)
			return memstore.AfterApply(memstore.InternalError())
		case n < 7:
			s.counts["503 server busy"]++
			return memstore.ServerBusy()
		}
	case memstore.OpGet:
		if s.failGets > 0 {
			s.failGets--
			s.counts["read-back failed"]++
			return memstore.ServerBusy()
		}
	}
	return nil
}

func (s *schedule) stop() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quiet = true
	return s.counts
}

// Under memstore's own fault injection, a chain of conditional writes of
// values of 1 to 4 rows never loses a write that reported success, never
// applies one twice, and always leaves one whole value.
func TestLostAnswersUnderMemstoreFaults(t *testing.T) {
	const runs = 200
	sc := newSchedule(11)
	st := memstore.New(memstore.WithFaults(sc.fault))
	if err := st.CreateTable(t.Context(), "Faults"); err != nil {
		t.Fatal(err)
	}
	w := newWide[Properties](t, st, "Faults", &Options{Attempts: 20})
	var etag store.ETag
	succeeded, last := 0, -1
	for g := range runs {
		v := marked(g, 0)
		e, err := w.Put(t.Context(), "p", "v", &v, etag)
		if err != nil {
			// A single writer's lost answers are all decidable: the header
			// is never more than one write away.
			t.Fatalf("write %d: %v", g, err)
		}
		succeeded++
		etag, last = e, g
	}
	counts := sc.stop()
	s, err := w.Read(t.Context(), "p", "v")
	if err != nil {
		t.Fatal(err)
	}
	mark, err := checkWhole(s.Value)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("memstore: %d runs, faults %v; %d writes reported applied, 0 failed; version %d; stored %s; lost %d, duplicated %d",
		runs, counts, succeeded, s.Version, mark, max(0, succeeded-int(s.Version)), max(0, int(s.Version)-succeeded))
	if s.Version != int64(succeeded) || etag != s.ETag {
		t.Fatalf("version %d after %d writes reported applied: a write was lost or applied twice", s.Version, succeeded)
	}
	if mark != fmt.Sprintf("%d/0", last) {
		t.Fatalf("stored %s, want the last write, %d/0", mark, last)
	}
	if counts["applied, answer lost"] == 0 || counts["read-back failed"] == 0 || counts["lost before it applied"] == 0 {
		t.Fatal("the schedule injected too few faults")
	}
}

// Concurrent unconditional writers under the same faults: every write
// that reported success applied once, one that reported an unknown
// outcome applied at most once, and the value is always one write whole.
func TestConcurrentWritersUnderMemstoreFaults(t *testing.T) {
	const writers, each = 3, 60
	sc := newSchedule(21)
	st := memstore.New(memstore.WithFaults(sc.fault))
	if err := st.CreateTable(t.Context(), "Faults"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ok, unknown := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wd := newWide[Properties](t, st, "Faults", &Options{Attempts: 1000})
			for g := range each {
				v := marked(g, w)
				_, err := wd.Put(t.Context(), "p", "v", &v, store.ETagAny)
				mu.Lock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, store.ErrUnknownOutcome):
					unknown++
				default:
					errs <- err
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, store.ErrUnknownOutcome) {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	counts := sc.stop()
	s, err := newWide[Properties](t, st, "Faults", nil).Read(t.Context(), "p", "v")
	if err != nil {
		t.Fatal(err)
	}
	mark, err := checkWhole(s.Value)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("memstore: %d writers x %d unconditional writes, faults %v; %d reported applied, %d unknown; version %d; stored %s; lost %d, duplicated %d",
		writers, each, counts, ok, unknown, s.Version, mark, max(0, ok-int(s.Version)), max(0, int(s.Version)-ok-unknown))
	if s.Version < int64(ok) || s.Version > int64(ok+unknown) {
		t.Fatalf("version %d after %d writes reported applied and %d unknown: a write was lost or applied twice", s.Version, ok, unknown)
	}
}

// With a single attempt, a lost answer is still judged by one read of the
// header: a write that landed is reported applied; one that did not is
// never sent again: the head tries once to move past it (an empty commit,
// its answer lost too here) and, that failing, reports it unknown (it may
// yet land), never failed.
func TestLostAnswerWithOneAttempt(t *testing.T) {
	for _, fate := range []fault{applyThenLose, loseBefore} {
		t.Run(fate.String(), func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				var ft *faultTable
				st := wrapped{b.Store, func(tbl store.Table) store.Table {
					ft = &faultTable{Table: tbl, plan: func(int) fault { return fate }}
					return ft
				}}
				w := newWide[Properties](t, st, freshTable(t, b), &Options{Attempts: 1})
				v := marked(1, 1)
				_, err := w.Put(t.Context(), "p", "v", &v, "")
				_, _, gerr := w.Get(t.Context(), "p", "v")
				t.Logf("%s: %s: %d transaction, %d header reads: %v; stored: %v", b.Name, fate, ft.n("transact"), ft.n("get"), err, gerr == nil)
				sends := 1 // the write
				if fate == loseBefore {
					sends = 2 // and the empty commit on the head
				}
				switch {
				case ft.n("transact") != sends || ft.n("get") != 2:
					t.Fatalf("%d transactions and %d header reads, want %d and 2", ft.n("transact"), ft.n("get"), sends)
				case fate == applyThenLose && (err != nil || gerr != nil):
					t.Fatalf("a write that landed: %v, then %v", err, gerr)
				case fate == loseBefore && (!errors.Is(err, store.ErrUnknownOutcome) || !errors.Is(gerr, store.ErrNotFound)):
					t.Fatalf("a write that did not land: %v, then %v", err, gerr)
				}
				if fate != loseBefore {
					return
				}
				// Once the network is back, Resolve moves the head past the
				// lost write and reports it not applied; it never lands, and
				// the value can be created.
				var ue *UnknownError
				if !errors.As(err, &ue) {
					t.Fatalf("%v is no *UnknownError", err)
				}
				ft.mu.Lock()
				ft.plan = func(int) fault { return pass }
				ft.mu.Unlock()
				if _, rerr := ue.Resolve(t.Context()); !errors.Is(rerr, store.ErrTransient) || errors.Is(rerr, store.ErrUnknownOutcome) {
					t.Fatalf("Resolve: %v, want not applied", rerr)
				}
				if _, _, gerr := w.Get(t.Context(), "p", "v"); !errors.Is(gerr, store.ErrNotFound) {
					t.Fatalf("after Resolve: %v, want not found", gerr)
				}
				if _, err := w.Put(t.Context(), "p", "v", &v, ""); err != nil {
					t.Fatalf("create after Resolve: %v", err)
				}
				if _, err := (&UnknownError{}).Resolve(t.Context()); !errors.Is(err, store.ErrInvalidInput) {
					t.Fatalf("Resolve of a hand-built UnknownError: %v", err)
				}
			})
		})
	}
}
