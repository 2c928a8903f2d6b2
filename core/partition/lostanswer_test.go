package partition_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// outcome is what a lost-answer scenario must end with.
type outcome int

const (
	applied    outcome = iota // Result with Recovered
	notApplied                // NotAppliedError
	unknown                   // UnknownError
)

// lossCase scripts the table's answers to the commit (call 0) and to what
// the package sends after it (calls 1, 2, ...).
type lossCase struct {
	name string
	// history is Options.History (0 for the default).
	history int
	// script handles Transact call n; others commits through a second
	// writer that bypasses the script.
	script func(t *testing.T, s *lossState, n int, inner store.Table, actions []store.Action) ([]store.ActionResult, error)
	want   outcome
	// overtaken is NotAppliedError.Overtaken; later is how many versions
	// other writers added.
	overtaken bool
	later     int64
	// cancel ends the commit's context inside call 0; the test then calls
	// UnknownError.Resolve and expects resolved.
	cancel   bool
	resolved outcome
}

// lossState is shared by a scenario's script and its checks.
type lossState struct {
	others func(n int) // commits n transactions as another writer
	cancel context.CancelFunc
	held   []store.Action // a request delayed in the network
	sent   bool           // whether it reached the service
	late   error          // the service's answer to it
}

// deliver lets the delayed request reach the service.
func (s *lossState) deliver(in store.Table) {
	s.sent = true
	_, s.late = in.Transact(context.Background(), s.held)
}

var lossCases = []lossCase{
	{name: "applied, answer lost", want: applied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				_, err := in.Transact(context.Background(), a)
				must(t, err)
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "lost before it applied", want: notApplied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "delayed, lands before the fence moves", want: applied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			switch n {
			case 0:
				s.held = a
				return nil, lostAnswer()
			case 1: // the package's fence move: the delayed commit gets there first
				s.deliver(in)
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "delayed, lands after the fence moved", want: notApplied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			switch n {
			case 0:
				s.held = a
				return nil, lostAnswer()
			case 1: // the fence move first, then the delayed commit arrives
				res, err := in.Transact(context.Background(), a)
				s.deliver(in)
				return res, err
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "another writer took the next version", want: notApplied, overtaken: true, later: 1,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				s.others(1)
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "applied, then other writers", want: applied, later: 3,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				_, err := in.Transact(context.Background(), a)
				must(t, err)
				s.others(3)
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "applied, then more writers than the fence remembers", history: 2, want: unknown, later: 3,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				_, err := in.Transact(context.Background(), a)
				must(t, err)
				s.others(3)
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "the fence move's answer is lost too", want: notApplied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			switch n {
			case 0:
				return nil, lostAnswer()
			case 1:
				_, err := in.Transact(context.Background(), a)
				must(t, err)
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "the fence move is throttled once", want: notApplied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			switch n {
			case 0:
				return nil, lostAnswer()
			case 1:
				return nil, store.Errorf(store.CodeServerBusy, 503, "injected: busy")
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "context ends, not applied, resolved later", cancel: true, want: unknown, resolved: notApplied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				s.cancel()
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
	{name: "context ends, applied, resolved later", cancel: true, want: unknown, resolved: applied,
		script: func(t *testing.T, s *lossState, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
			if n == 0 {
				_, err := in.Transact(context.Background(), a)
				must(t, err)
				s.cancel()
				return nil, lostAnswer()
			}
			return in.Transact(context.Background(), a)
		}},
}

// A commit whose answer is lost is resolved exactly through the fence, in
// every order the lost request, the package's own fence move and other
// writers can land in: it reports applied exactly when its rows are
// there, and after "not applied" the lost request can never land.
func TestLostAnswerResolvedThroughTheFence(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := newTable(t, b)
		for i, c := range lossCases {
			for _, fresh := range []bool{true, false} {
				name := c.name + map[bool]string{true: ", fresh partition", false: ", fenced partition"}[fresh]
				t.Run(name, func(t *testing.T) {
					runLossCase(t, tbl, pkOf(i, fresh), c, fresh)
				})
			}
		}
	})
}

func pkOf(i int, fresh bool) string {
	if fresh {
		return "fresh" + string(rune('a'+i))
	}
	return "fenced" + string(rune('a'+i))
}

func runLossCase(t *testing.T, tbl store.Table, pk string, c lossCase, fresh bool) {
	bg := context.Background()
	opts := fast()
	opts.History = c.history
	other := open(t, tbl, pk, opts) // another writer, straight to the table
	var base int64
	if !fresh {
		tx := begin(t, other)
		must(t, tx.Insert("seed", row("seed")))
		_, err := tx.Commit(bg)
		must(t, err)
		base = 1
	}
	s := &lossState{}
	s.others = func(n int) {
		for range n {
			tx := begin(t, other)
			must(t, tx.Upsert("other", row("other_"+tx.RequestID()), store.Replace))
			if _, err := tx.Commit(bg); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		}
	}
	h := &hookTable{Table: tbl}
	h.transact = func(ctx context.Context, n int, in store.Table, a []store.Action) ([]store.ActionResult, error) {
		return c.script(t, s, n, in, a)
	}
	p := open(t, h, pk, opts)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	s.cancel = cancel

	tx := begin(t, p)
	must(t, tx.Insert("mine", row("mine", "By", tx.RequestID())))
	outboxID, err := tx.Outbox(partition.Message{Topic: "t", Body: []byte("x")})
	must(t, err)
	res, err := tx.Commit(ctx)
	if c.cancel {
		var ue *partition.UnknownError
		if !errors.As(err, &ue) || !errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(ue.Reason, "context") {
			t.Fatalf("commit with an ended context: %v, want an UnknownError naming the context", err)
		}
		res, err = ue.Resolve(bg)
		c.want = c.resolved
	}
	if s.held != nil {
		if !s.sent { // a delayed request gets there in the end
			s.deliver(tbl)
		}
		landed := s.late == nil
		mineThere := hasRow(t, tbl, pk, "mine")
		if landed != mineThere {
			t.Fatalf("the delayed request landed %v, row there %v", landed, mineThere)
		}
		if !landed && !errors.Is(s.late, store.ErrPreconditionFailed) && !errors.Is(s.late, store.ErrAlreadyExists) {
			t.Fatalf("the delayed request was refused with %v, want the fence's 412 or 409", s.late)
		}
	}
	check(t, tbl, pk, c, base, tx, outboxID, res, err)
	if f, tl := versions(t, tbl, pk); f != tl {
		t.Fatalf("fence version %d, tail version %d: they must move together", f, tl)
	}
}

// check asserts the outcome and that the stored state agrees with it.
func check(t *testing.T, tbl store.Table, pk string, c lossCase, base int64, tx *partition.Txn, outboxID string, res *partition.Result, err error) {
	t.Helper()
	mine := hasRow(t, tbl, pk, "mine")
	box := hasRow(t, tbl, pk, partition.OutboxPrefix+outboxID)
	fence, _ := versions(t, tbl, pk)
	switch c.want {
	case applied:
		if err != nil || res == nil || !res.Recovered || res.ETags != nil {
			t.Fatalf("got %+v, %v: want a recovered Result", res, err)
		}
		if res.Version != base+1 || res.Fence.Version != base+1+c.later || len(res.Outbox) != 1 || res.Outbox[0] != outboxID {
			t.Fatalf("result %+v: want version %d, fence %d, outbox [%s]", res, base+1, base+1+c.later, outboxID)
		}
		if !mine || !box {
			t.Fatalf("reported applied, but row there %v, outbox row there %v", mine, box)
		}
		if fence != base+1+c.later {
			t.Fatalf("fence version %d, want %d", fence, base+1+c.later)
		}
	case notApplied:
		var na *partition.NotAppliedError
		if !errors.As(err, &na) || res != nil {
			t.Fatalf("got %+v, %v: want a NotAppliedError", res, err)
		}
		if !errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome) {
			t.Fatalf("%v: want it to match ErrTransient and not ErrUnknownOutcome", err)
		}
		if na.Overtaken != c.overtaken || na.Version != base || na.Err == nil || na.Err.Unknown {
			t.Fatalf("NotAppliedError %+v: want Overtaken %v, version %d, Unknown cleared", na, c.overtaken, base)
		}
		if mine || box {
			t.Fatalf("reported not applied, but row there %v, outbox row there %v", mine, box)
		}
		if fence != base+1+c.later-btoi(c.overtaken) {
			t.Fatalf("fence version %d: the package must have moved it past %d", fence, base)
		}
		// Now nothing can land: a new transaction may safely do it again.
		tx2, err := tx2For(t, tbl, pk)
		must(t, err)
		must(t, tx2.Insert("mine", row("mine")))
		_, err = tx2.Commit(context.Background())
		must(t, err)
	case unknown:
		var ue *partition.UnknownError
		if !errors.As(err, &ue) || !errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) {
			t.Fatalf("got %+v, %v: want an UnknownError matching only ErrUnknownOutcome", res, err)
		}
		if !strings.Contains(ue.Reason, "no longer records") {
			t.Fatalf("UnknownError reason %q", ue.Reason)
		}
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func tx2For(t *testing.T, tbl store.Table, pk string) (*partition.Txn, error) {
	return open(t, tbl, pk, nil).Begin(context.Background())
}

func hasRow(t *testing.T, tbl store.Table, pk, rk string) bool {
	t.Helper()
	_, err := tbl.Get(context.Background(), pk, rk, nil)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get %q: %v", rk, err)
	}
	return err == nil
}
