package series

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/store"
)

// proofOp is one write of the crash proof and what it does to the values.
type proofOp struct {
	name  string
	do    func(ctx context.Context, s *Series) error
	apply func(v []any)
}

func proofOps() []proofOp {
	big := func(c byte) string { return strings.Repeat(string(c), 30_000) }
	return []proofOp{
		{"set a slot", func(ctx context.Context, s *Series) error { return s.Set(ctx, 3, "a") },
			func(v []any) { v[3] = "a" }},
		{"add to a counter", func(ctx context.Context, s *Series) error { _, err := s.Add(ctx, 0, 5); return err },
			func(v []any) { v[0] = proofAdd(v[0], 5) }},
		{"grow over two segments", func(ctx context.Context, s *Series) error {
			return s.Update(ctx, func([]any) (map[int]any, error) {
				m := map[int]any{}
				for i := 4; i < 24; i++ {
					m[i] = big(byte('b' + i%20))
				}
				return m, nil
			})
		}, func(v []any) {
			for i := 4; i < 24; i++ {
				v[i] = big(byte('b' + i%20))
			}
		}},
		{"add while spread", func(ctx context.Context, s *Series) error { _, err := s.Add(ctx, 0, 7); return err },
			func(v []any) { v[0] = proofAdd(v[0], 7) }},
		{"shrink to one segment", func(ctx context.Context, s *Series) error {
			return s.Update(ctx, func([]any) (map[int]any, error) {
				m := map[int]any{}
				for i := 4; i < 24; i++ {
					m[i] = nil
				}
				return m, nil
			})
		}, func(v []any) {
			for i := 4; i < 24; i++ {
				v[i] = nil
			}
		}},
	}
}

func proofAdd(cur any, d int64) any {
	n, _ := cur.(int64)
	return n + d
}

// TestProofCrashAtEveryRequest: each of five writes (a set, counter adds,
// a write that spreads the series over two entities and one that shrinks
// it back) crashes before and after each of its requests, on memstore
// and on Azurite, through a wrapper that keeps the typed lane. The series
// must then hold its values as before the write or as after it, whole;
// the restarted process reads it and writes again only when it is as
// before. The series then holds what the writes say: lost 0, duplicated
// 0 (no counter added twice), half-written 0.
func TestProofCrashAtEveryRequest(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "proof")
		ops := proofOps()
		var crashes, operations, lost, duplicated, half int
		where := map[string]int{}
		for k, op := range ops {
			before := make([]any, 24)
			for _, o := range ops[:k] {
				o.apply(before)
			}
			after := append([]any(nil), before...)
			op.apply(after)
			for n := int64(1); ; n++ {
				done := false
				for _, at := range []bool{false, true} {
					pk := fmt.Sprintf("p%d-%d-%v", k, n, at)
					clean := newSeries(t, b.Store.Table(name), pk, "s", Layout{Slots: 24})
					for _, o := range ops[:k] {
						if err := o.do(ctx, clean); err != nil {
							t.Fatal(err)
						}
					}
					cs := &eventualtest.CrashStore{Store: b.Store}
					s := newSeries(t, cs.Table(name), pk, "s", Layout{Slots: 24})
					cs.Arm(n, at)
					var err error
					crashed := eventualtest.Survive(func() { err = op.do(ctx, s) })
					operations++
					if !crashed {
						cs.Arm(0, false)
						done = true
						if err != nil {
							t.Fatalf("%s without a crash: %v", op.name, err)
						}
					} else {
						crashes++
						cs.AddPoints(where)
						got := mustRead(t, newSeries(t, b.Store.Table(name), pk, "s", Layout{Slots: 24})).Values
						switch {
						case reflect.DeepEqual(got, before):
							if err := op.do(ctx, newSeries(t, b.Store.Table(name), pk, "s", Layout{Slots: 24})); err != nil {
								t.Fatalf("%s: recovery: %v", op.name, err)
							}
						case reflect.DeepEqual(got, after):
						default:
							half++
							t.Errorf("%s, crash at request %d (after %v): the series is neither as before nor as after", op.name, n, at)
						}
					}
					got := mustRead(t, newSeries(t, b.Store.Table(name), pk, "s", Layout{Slots: 24})).Values
					if !reflect.DeepEqual(got, after) {
						if c, _ := got[0].(int64); c > proofNum(after[0]) {
							duplicated++
						} else {
							lost++
						}
						t.Errorf("%s, crash at request %d (after %v): counter %v, want %v (or other slots differ)", op.name, n, at, got[0], after[0])
					}
				}
				if done {
					break
				}
			}
		}
		t.Logf("%s: %d writes, crash points %d, operations %d: lost %d, duplicated %d, half-written %d; points %v",
			b.Name, len(ops), crashes, operations, lost, duplicated, half, where)
		if crashes == 0 {
			t.Fatal("no crash was injected")
		}
	})
}

func proofNum(v any) int64 { n, _ := v.(int64); return n }

// TestProofSeededFaults: writers add to their own counter and to a shared
// one and set their own slot, all in one series, while about one request
// in five meets a seeded fault: on memstore and on Azurite through
// storetest's kit (typed lane kept), and on Azurite through the fault
// proxy. A write that succeeded must be in the series at once, one that
// failed must not be; an unknown outcome of an add to the writer's own
// counter is settled by reading it (adding again when absent), one to
// the shared counter is counted apart. At the end each own counter is
// its writer's acknowledged sum, the shared counter lies between the
// acknowledged sum and that plus the unknown adds, and each own slot
// holds its writer's last value: lost 0, duplicated 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, label string, direct, faulty store.Store, f *prooftest.Faults, name string) {
		ctx := context.Background()
		const writers = 4
		each := 20
		if testing.Short() {
			each = 8
		}
		read := func() []any { return mustRead(t, newSeries(t, direct.Table(name), "p", "s", Layout{Slots: 24})).Values }
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		classify := func(err error) string {
			switch {
			case err == nil:
				return "done"
			case errors.Is(err, store.ErrUnknownOutcome):
				return "unknown"
			}
			return "failed"
		}
		var sharedDone, sharedUnknown int64
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				s := newSeries(t, faulty.Table(name), "p", "s", Layout{Slots: 24}, Options{Attempts: 1000})
				own, slot := 1+w, 8+w
				var sum int64
				for i := range each {
					// Own counter: exact.
					for try := 0; ; try++ {
						_, err := s.Add(ctx, own, 1)
						kind := classify(err)
						note("own add " + kind)
						got := proofNum(read()[own])
						if kind == "done" && got != sum+1 || kind == "failed" && got != sum {
							t.Errorf("%s: writer %d add %s (%v), counter %d after %d", label, w, kind, err, got, sum)
							return
						}
						if got == sum+1 {
							sum++
							break
						}
						if try > 50 {
							t.Errorf("%s: writer %d add never stored", label, w)
							return
						}
					}
					// Shared counter: one try.
					_, err := s.Add(ctx, 0, 1)
					kind := classify(err)
					note("shared add " + kind)
					mu.Lock()
					switch kind {
					case "done":
						sharedDone++
					case "unknown":
						sharedUnknown++
					}
					mu.Unlock()
					// Own slot: the last value.
					v := fmt.Sprintf("w%d-%d", w, i)
					for try := 0; ; try++ {
						err := s.Set(ctx, slot, v)
						kind := classify(err)
						note("set " + kind)
						got := read()[slot]
						if kind == "done" && got != v || kind == "failed" && got == v {
							t.Errorf("%s: writer %d set %s %s (%v), slot holds %v", label, w, v, kind, err, got)
							return
						}
						if got == v {
							break
						}
						if try > 50 {
							t.Errorf("%s: writer %d set never stored", label, w)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		got := read()
		lost, duplicated := 0, 0
		for w := range writers {
			switch c := proofNum(got[1+w]); {
			case c < int64(each):
				lost += each - int(c)
			case c > int64(each):
				duplicated += int(c) - each
			}
			if got[8+w] != fmt.Sprintf("w%d-%d", w, each-1) {
				lost++
			}
		}
		shared := proofNum(got[0])
		if shared < sharedDone {
			lost += int(sharedDone - shared)
		}
		if shared > sharedDone+sharedUnknown {
			duplicated += int(shared - sharedDone - sharedUnknown)
		}
		t.Logf("%s: %d writers x %d rounds (own add, shared add, set), faults %d %v; outcomes %v; shared counter %d (%d done, %d unknown): lost %d, duplicated %d",
			label, writers, each, f.Total(), f.Counts(), outcomes, shared, sharedDone, sharedUnknown, lost, duplicated)
		if lost+duplicated != 0 {
			t.Fatalf("lost %d, duplicated %d: %v", lost, duplicated, got)
		}
		if f.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	prooftest.Each(t, nil, nil, func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		run(t, label, b.Store, faulty, f, b.NewTable(t, "pf"))
	})
}
