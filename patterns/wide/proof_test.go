package wide

import (
	"context"
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/internal/prooftest"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// proofMark reads the value id of table name: its writer's mark, or ""
// when it is absent. A value that is not one write's whole value fails
// the test.
func proofMark(t testing.TB, st store.Store, name, id string) (string, *Snapshot[Properties]) {
	t.Helper()
	s, err := newWide[Properties](t, st, name, nil).Read(context.Background(), "p", id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	mark, err := checkWhole(s.Value)
	if err != nil {
		t.Fatalf("value %s is not whole: %v", id, err)
	}
	return mark, s
}

type proofOp struct {
	name     string
	id       string
	old, new string // marks; "" absent
	do       func(ctx context.Context, w *Wide[Properties], etag store.ETag) error
	again    func(ctx context.Context, w *Wide[Properties]) error
}

func proofPut(id string, g int) func(ctx context.Context, w *Wide[Properties]) error {
	return func(ctx context.Context, w *Wide[Properties]) error {
		v := marked(g, 9)
		_, err := w.Put(ctx, "p", id, &v, store.ETagAny)
		return err
	}
}

var proofOps = []proofOp{
	{name: "create", id: "n", new: "1/9", do: func(ctx context.Context, w *Wide[Properties], _ store.ETag) error {
		v := marked(1, 9)
		_, err := w.Put(ctx, "p", "n", &v, "")
		return err
	}, again: proofPut("n", 1)},
	{name: "unconditional replace, growing", id: "v", old: "0/9", new: "1/9", do: func(ctx context.Context, w *Wide[Properties], _ store.ETag) error {
		return proofPut("v", 1)(ctx, w)
	}, again: proofPut("v", 1)},
	{name: "conditional replace, shrinking", id: "v", old: "0/9", new: "3/9", do: func(ctx context.Context, w *Wide[Properties], etag store.ETag) error {
		v := marked(3, 9)
		_, err := w.Put(ctx, "p", "v", &v, etag)
		return err
	}, again: proofPut("v", 3)},
	{name: "delete", id: "v", old: "0/9", do: func(ctx context.Context, w *Wide[Properties], etag store.ETag) error {
		return w.Delete(ctx, "p", "v", etag)
	}, again: func(ctx context.Context, w *Wide[Properties]) error {
		if err := w.Delete(ctx, "p", "v", store.ETagAny); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	}},
}

// TestProofCrashAtEveryRequest: each kind of write crashes before and
// after each of its requests (header reads, the transaction, the
// read-backs), on memstore and on Azurite, through a wrapper that keeps
// the typed lane. The crash leaves the old value or the new one, whole;
// the restarted process writes again and the value is then the new one:
// lost 0, mixed 0.
func TestProofCrashAtEveryRequest(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		var crashes, operations, lost, mixed int
		where := map[string]int{}
		for _, op := range proofOps {
			for n := int64(1); ; n++ {
				done := false
				for _, after := range []bool{false, true} {
					name := freshTable(t, b)
					clean := newWide[Properties](t, b.Store, name, nil)
					old := marked(0, 9)
					etag, err := clean.Put(ctx, "p", "v", &old, "")
					if err != nil {
						t.Fatal(err)
					}
					cs := &eventualtest.CrashStore{Store: b.Store}
					w := newWide[Properties](t, cs, name, nil)
					cs.Arm(n, after)
					crashed := eventualtest.Survive(func() { err = op.do(ctx, w, etag) })
					operations++
					if !crashed {
						cs.Arm(0, false)
						done = true
						if err != nil {
							t.Fatalf("%s without a crash: %v", op.name, err)
						}
						if got, _ := proofMark(t, b.Store, name, op.id); got != op.new {
							lost++
							t.Errorf("%s: stored %q, want %q", op.name, got, op.new)
						}
						break
					}
					crashes++
					cs.AddPoints(where)
					if got, _ := proofMark(t, b.Store, name, op.id); got != op.old && got != op.new {
						mixed++
						t.Errorf("%s, crash at request %d (after %v): stored %q, neither %q nor %q", op.name, n, after, got, op.old, op.new)
					}
					if err := op.again(ctx, newWide[Properties](t, b.Store, name, nil)); err != nil {
						t.Fatalf("%s: recovery after a crash at request %d: %v", op.name, n, err)
					}
					if got, _ := proofMark(t, b.Store, name, op.id); got != op.new {
						lost++
						t.Errorf("%s: after recovery stored %q, want %q", op.name, got, op.new)
					}
				}
				if done {
					break
				}
			}
		}
		t.Logf("%s: %d kinds of write, crash points %d, operations %d: lost %d, duplicated 0, mixed %d; points %v",
			b.Name, len(proofOps), crashes, operations, lost, mixed, where)
		if crashes == 0 {
			t.Fatal("no crash was injected")
		}
	})
}

// TestProofSeededFaults: writers put values at once while about one
// request in five meets a seeded fault: on memstore and on Azurite through
// storetest's kit (typed lane kept), and on Azurite through the fault
// proxy on loopback. Each writer owns a value it replaces, conditionally
// on the ETag it holds or not, and all of them replace one shared value
// unconditionally. Each write is judged at once against the stored value
// (done: the new one; refused: the old one; unknown: either), every value
// stays one write's whole value, and at the end each value is the last
// one its writer knows of and the shared value's version lies between the
// writes acknowledged and those plus the unknown ones: lost 0, duplicated
// 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, label string, direct, faulty store.Store, f *prooftest.Faults, name string) {
		ctx := context.Background()
		const writers = 3
		each := 24
		if testing.Short() {
			each = 10
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		sharedOK, sharedUnknown := 0, 0
		var wg sync.WaitGroup
		for wr := range writers {
			wg.Go(func() {
				w := newWide[Properties](t, faulty, name, &Options{Attempts: 20})
				r := rand.New(rand.NewPCG(uint64(wr), 5))
				id := fmt.Sprintf("own%d", wr)
				mark, etag := "", store.ETag("")
				for g := 1; g <= each; g++ {
					v := marked(g, wr)
					if r.IntN(3) == 0 {
						_, err := w.Put(ctx, "p", "shared", &v, store.ETagAny)
						mu.Lock()
						switch {
						case err == nil:
							sharedOK++
						case errors.Is(err, store.ErrUnknownOutcome):
							sharedUnknown++
						default:
							outcomes["shared refused"]++
						}
						mu.Unlock()
						continue
					}
					cond := store.ETagAny
					if mark != "" && r.IntN(2) == 0 {
						cond = etag
					}
					_, err := w.Put(ctx, "p", id, &v, cond)
					got, s := proofMark(t, direct, name, id)
					kind := "done"
					switch {
					case err == nil:
						if got != fmt.Sprintf("%d/%d", g, wr) {
							t.Errorf("%s: %s reported done, stored %q", label, id, got)
						}
					case errors.Is(err, store.ErrUnknownOutcome):
						kind = "unknown"
						if got != mark && got != fmt.Sprintf("%d/%d", g, wr) {
							t.Errorf("%s: %s unknown, stored %q: neither %q nor the new value", label, id, got, mark)
						}
					default:
						kind = "refused"
						if got != mark {
							t.Errorf("%s: %s refused (%v), yet stored %q, not %q", label, id, err, got, mark)
						}
					}
					mark = got
					if s != nil {
						etag = s.ETag
					}
					mu.Lock()
					outcomes[kind]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		_, s := proofMark(t, direct, name, "shared")
		var version int64
		if s != nil {
			version = s.Version
		}
		lost, duplicated := max(0, sharedOK-int(version)), max(0, int(version)-sharedOK-sharedUnknown)
		t.Logf("%s: %d writers x %d puts, faults %d %v; own values %v; shared value: %d done, %d unknown, version %d: lost %d, duplicated %d, every value whole",
			label, writers, each, f.Total(), f.Counts(), outcomes, sharedOK, sharedUnknown, version, lost, duplicated)
		if lost+duplicated != 0 {
			t.Fatalf("the shared value's version %d after %d writes done and %d unknown", version, sharedOK, sharedUnknown)
		}
		if f.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	prooftest.Each(t, nil, nil, func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		run(t, label, b.Store, faulty, f, freshTable(t, b))
	})
}
