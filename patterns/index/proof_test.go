package index_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/internal/prooftest"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// proofIndexes opens the staff indexes (unique email, last name) over
// table name of st.
func proofIndexes(t testing.TB, st store.Store, name string) *index.Table[Employee] {
	t.Helper()
	x, err := index.New[Employee](st, name,
		index.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		index.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).Project("FirstName", "LastName"))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// proofState is what a table should hold: employee id -> (email, last
// name); absent ids are deleted.
type proofState map[string][2]string

// proofOracle scans the table and counts, against want: entities lost or
// holding an older value (lost), entities or copies beyond the ones want
// implies (duplicated), and copies pointing nowhere or a value held twice
// (half-written).
func proofOracle(t testing.TB, st store.Store, name string, want proofState) (lost, duplicated, half int) {
	t.Helper()
	ctx := context.Background()
	ents := map[string][2]string{}
	copies := map[string]string{}
	heads := map[string]map[string]any{} // entity RowKey -> its head row's properties
	for e, err := range store.All(ctx, st.Table(name), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if index.IsHeadKey(e.RowKey) {
			heads[strings.TrimPrefix(e.RowKey, index.HeadKey(""))] = e.Properties
			continue
		}
		if strings.HasPrefix(e.RowKey, "emp_") {
			em, _ := e.Properties["Email"].(string)
			ln, _ := e.Properties["LastName"].(string)
			ents[e.RowKey] = [2]string{em, ln}
			continue
		}
		copies[e.RowKey], _ = e.Properties[index.RefProperty].(string)
	}
	for id, v := range want {
		if got, ok := ents[id]; !ok || got != v {
			lost++
			t.Errorf("employee %s: stored %v (present %v), want %v", id, got, ok, v)
		}
	}
	for id := range ents {
		if _, ok := want[id]; !ok {
			duplicated++
			t.Errorf("employee %s is stored but was deleted or never acknowledged", id)
		}
	}
	expect := map[string]string{}
	for id, v := range ents {
		ek, _ := keys.Join("email", v[0])
		if other, dup := expect[ek]; dup {
			half++
			t.Errorf("email %q held by %s and %s", v[0], other, id)
		}
		expect[ek] = id
		lk, _ := keys.Join("lastname", v[1], id)
		expect[lk] = id
	}
	for k, id := range expect {
		if copies[k] != id {
			half++
			t.Errorf("entity %s lacks its copy %q", id, k)
		}
	}
	for k, id := range copies {
		if expect[k] != id {
			duplicated++
			t.Errorf("copy %q of %s belongs to no entity", k, id)
		}
	}
	// Each entity's head says it exists and lists its copies; a head of
	// an entity that does not exist says so.
	for id, h := range heads {
		v, present := ents[id]
		var want map[string]any
		if present {
			ek, _ := keys.Join("email", v[0])
			lk, _ := keys.Join("lastname", v[1], id)
			want = map[string]any{"TkLive": true, "TkCopy_email": ek, "TkCopy_lastname": lk}
		}
		live, _ := h["TkLive"].(bool) // a head the package moved to shut out a lost insert has no TkLive
		if live != present || present && (h["TkCopy_email"] != want["TkCopy_email"] || h["TkCopy_lastname"] != want["TkCopy_lastname"]) {
			half++
			t.Errorf("the head of %s (present %v) says %v", id, present, h)
		}
	}
	for id := range ents {
		if heads[id] == nil {
			half++
			t.Errorf("entity %s has no head row", id)
		}
	}
	return lost, duplicated, half
}

// proofOp is one write of the crash proof: from the state before, what it
// does, and the state it must leave when it succeeds (or, refused, the
// same state).
type proofOp struct {
	name string
	do   func(ctx context.Context, x *index.Table[Employee]) error
	want proofState // after success
	// again is the recovery: the write the restarted process makes so
	// the intent holds whatever the crash left.
	again func(ctx context.Context, x *index.Table[Employee]) error
}

var proofBefore = proofState{"emp_000001": {"a@x.com", "Jones"}, "emp_000002": {"b@x.com", "Smith"}}

func proofWith(changes proofState, drop ...string) proofState {
	s := proofState{}
	for k, v := range proofBefore {
		s[k] = v
	}
	for k, v := range changes {
		s[k] = v
	}
	for _, k := range drop {
		delete(s, k)
	}
	return s
}

func proofUpdate(id int, email, last string) func(ctx context.Context, x *index.Table[Employee]) error {
	return func(ctx context.Context, x *index.Table[Employee]) error {
		cur, err := x.Get(ctx, "Sales", fmt.Sprintf("emp_%06d", id))
		if err != nil {
			return err
		}
		cur.Email, cur.LastName = email, last
		return x.Update(ctx, &cur)
	}
}

func proofUpsert(id int, email, last string) func(ctx context.Context, x *index.Table[Employee]) error {
	return func(ctx context.Context, x *index.Table[Employee]) error {
		return x.Upsert(ctx, emp(id, "F", last, email))
	}
}

var proofOps = []proofOp{
	{name: "insert", do: func(ctx context.Context, x *index.Table[Employee]) error {
		return x.Insert(ctx, emp(3, "F", "Lee", "c@x.com"))
	}, want: proofWith(proofState{"emp_000003": {"c@x.com", "Lee"}}), again: proofUpsert(3, "c@x.com", "Lee")},
	{name: "update moving both values", do: proofUpdate(1, "d@x.com", "Smith"),
		want: proofWith(proofState{"emp_000001": {"d@x.com", "Smith"}}), again: proofUpsert(1, "d@x.com", "Smith")},
	{name: "upsert of an existing entity", do: proofUpsert(2, "e@x.com", "Smith"),
		want: proofWith(proofState{"emp_000002": {"e@x.com", "Smith"}}), again: proofUpsert(2, "e@x.com", "Smith")},
	{name: "delete", do: func(ctx context.Context, x *index.Table[Employee]) error {
		return x.DeleteKey(ctx, "Sales", "emp_000002")
	},
		want: proofWith(nil, "emp_000002"), again: func(ctx context.Context, x *index.Table[Employee]) error {
			if err := x.DeleteKey(ctx, "Sales", "emp_000002"); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return nil
		}},
	{name: "update to a taken email (refused)", do: proofUpdate(1, "b@x.com", "Jones"),
		want: proofBefore, again: func(context.Context, *index.Table[Employee]) error { return nil }},
}

// TestProofCrashAtEveryRequest: each kind of write crashes before and
// after each of its requests, on memstore and on Azurite, through a
// wrapper that keeps the typed lane. What the crash leaves is the state
// before or the state after, whole (no copy without its entity, no
// entity without its copies); the restarted process makes the write
// again, and the table then holds exactly the intended state: lost 0,
// duplicated 0.
func TestProofCrashAtEveryRequest(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		var points, crashes, operations, lost, duplicated, half int
		where := map[string]int{}
		for _, op := range proofOps {
			for n := int64(1); ; n++ {
				done := false
				for _, after := range []bool{false, true} {
					name := b.NewTable(t, "proof")
					clean := proofIndexes(t, b.Store, name)
					for id, v := range proofBefore {
						var i int
						fmt.Sscanf(id, "emp_%d", &i)
						if err := clean.Insert(ctx, emp(i, "F", v[1], v[0])); err != nil {
							t.Fatal(err)
						}
					}
					cs := &eventualtest.CrashStore{Store: b.Store}
					x := proofIndexes(t, cs, name)
					cs.Arm(n, after)
					var err error
					crashed := eventualtest.Survive(func() { err = op.do(ctx, x) })
					operations++
					if !crashed {
						cs.Arm(0, false)
						done = true
						want := op.want
						if err != nil && op.name != "update to a taken email (refused)" {
							t.Fatalf("%s without a crash: %v", op.name, err)
						}
						l, d, h := proofOracle(t, b.Store, name, want)
						lost, duplicated, half = lost+l, duplicated+d, half+h
						break
					}
					crashes++
					points++
					cs.AddPoints(where)
					// What the crash left is the state before or after, whole.
					lb, db, hb := proofOracle(&quiet{}, b.Store, name, proofBefore)
					la, da, ha := proofOracle(&quiet{}, b.Store, name, op.want)
					if lb+db+hb != 0 && la+da+ha != 0 {
						half++
						t.Errorf("%s, crash %s request %d: the table holds neither the state before nor the state after", op.name, map[bool]string{false: "before", true: "after"}[after], n)
					}
					// The restarted process makes the write again.
					if err := op.again(ctx, proofIndexes(t, b.Store, name)); err != nil {
						t.Fatalf("%s: recovery after a crash at request %d: %v", op.name, n, err)
					}
					l, d, h2 := proofOracle(t, b.Store, name, op.want)
					lost, duplicated, half = lost+l, duplicated+d, half+h2
				}
				if done {
					break
				}
			}
		}
		t.Logf("%s: %d kinds of write, crash points %d, crashes %d, operations %d: lost %d, duplicated %d, half-written %d; points %v",
			b.Name, len(proofOps), points, crashes, operations, lost, duplicated, half, where)
		if crashes == 0 {
			t.Fatal("no crash was injected")
		}
	})
}

// quiet is a testing.TB that keeps errors to itself, for probing a state.
type quiet struct{ testing.TB }

func (*quiet) Helper()               {}
func (*quiet) Errorf(string, ...any) {}
func (*quiet) Fatal(args ...any)     { panic(fmt.Sprint(args...)) }

// TestProofSeededFaults: writers insert, update, upsert and delete
// employees at once (each its own ids, all drawing emails from one small
// pool, so unique values collide) while about one request in five meets a
// seeded fault: on memstore and on Azurite through storetest's kit (typed
// lane kept), and on Azurite through the fault proxy on loopback, where
// requests really are applied and their answers really lost. Each writer
// settles an unknown outcome by reading the entity back (it must hold the
// value before or the value written); at the end the table holds exactly
// what the writers acknowledged: lost 0, duplicated 0, half-written 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, name string, direct, faulty store.Store, f *prooftest.Faults, table string) {
		ctx := context.Background()
		const writers = 4
		each := 40
		if testing.Short() {
			each = 15
		}
		clean := proofIndexes(t, direct, table)
		x := proofIndexes(t, faulty, table)
		var mu sync.Mutex
		want := proofState{}
		outcomes := map[string]int{}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 77))
				mine := map[int][2]string{}
				for range each {
					id := 10*w + r.IntN(4)
					rk := fmt.Sprintf("emp_%06d", id)
					old, had := mine[id]
					next := [2]string{fmt.Sprintf("m%d@x.com", r.IntN(12)), []string{"Jones", "Smith", "Lee"}[r.IntN(3)]}
					var err error
					del := false
					switch {
					case !had && r.IntN(2) == 0:
						err = x.Insert(ctx, emp(id, "F", next[1], next[0]))
					case had && r.IntN(4) == 0:
						del = true
						err = x.DeleteKey(ctx, "Sales", rk)
					case had && r.IntN(2) == 0:
						err = proofUpdate(id, next[0], next[1])(ctx, x)
					default:
						err = x.Upsert(ctx, emp(id, "F", next[1], next[0]))
					}
					kind := "done"
					cur, gerr := clean.Get(ctx, "Sales", rk)
					present := gerr == nil
					if gerr != nil && !errors.Is(gerr, store.ErrNotFound) {
						t.Errorf("%s: settle read: %v", name, gerr)
						return
					}
					stored := [2]string{cur.Email, cur.LastName}
					isOld := present == had && (!had || stored == old)
					isNew := (del && !present) || (!del && present && stored == next)
					switch {
					case err == nil:
						if !isNew {
							t.Errorf("%s: %s reported done, stored %v (present %v), wrote %v (delete %v)", name, rk, stored, present, next, del)
						}
					case errors.Is(err, store.ErrUnknownOutcome):
						kind = "unknown"
						if !isOld && !isNew {
							t.Errorf("%s: %s unknown outcome, stored %v, neither old %v nor new %v", name, rk, stored, old, next)
						}
					default:
						kind = "refused, other"
						switch {
						case errors.Is(err, partition.ErrDuplicate):
							kind = "refused, value taken"
						case errors.Is(err, store.ErrTransient):
							kind = "refused, transient"
						}
						if !isOld {
							t.Errorf("%s: %s reported %v, yet stored %v (present %v), old %v", name, rk, err, stored, present, old)
						}
					}
					if present {
						mine[id] = stored
					} else {
						delete(mine, id)
					}
					mu.Lock()
					outcomes[kind]++
					mu.Unlock()
				}
				mu.Lock()
				for id, v := range mine {
					want[fmt.Sprintf("emp_%06d", id)] = v
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		lost, duplicated, half := proofOracle(t, direct, table, want)
		t.Logf("%s: %d writers x %d operations, faults %d %v; outcomes %v; %d employees at the end: lost %d, duplicated %d, half-written %d",
			name, writers, each, f.Total(), f.Counts(), outcomes, len(want), lost, duplicated, half)
		if f.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	prooftest.Each(t, nil, nil, func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		run(t, label, b.Store, faulty, f, b.NewTable(t, "pf"))
	})
}
