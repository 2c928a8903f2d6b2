package model_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// seeded is an entity a drift test starts from; the ids have card rows.
func seeded(i int) Employee {
	return Employee{Dept: "Sales", ID: fmt.Sprintf("w%d-%d", i/3, i%3), N: i,
		Email: fmt.Sprintf("s%d@x.com", i), Badge: fmt.Sprintf("B%d", i),
		LastName: fmt.Sprintf("L%d", i), Team: []string{"red", "blue"}[i%2]}
}

// raw is the fixture's store, bypassing the model.
func (f *fixture) raw() store.Store { return f.e.B.Store }

func (f *fixture) rawGet(t *testing.T, table, pk, rk string) store.Entity {
	t.Helper()
	row, err := f.raw().Table(table).Get(context.Background(), pk, rk, nil)
	if err != nil {
		t.Fatalf("raw read (%q, %q) of %s: %v", pk, rk, table, err)
	}
	return row
}

func (f *fixture) rawReplace(t *testing.T, table string, row store.Entity) {
	t.Helper()
	if _, err := f.raw().Table(table).Update(context.Background(), row, store.Replace, store.ETagAny); err != nil {
		t.Fatalf("raw replace (%q, %q) of %s: %v", row.PartitionKey, row.RowKey, table, err)
	}
}

// key is a finding as a test names it.
type key struct {
	drift                  model.Drift
	feature, table, pk, rk string
}

func keysOf(fs []model.Finding) []key {
	var out []key
	for _, f := range fs {
		out = append(out, key{f.Drift, f.Feature, f.Row.Table, f.Row.PartitionKey, f.Row.RowKey})
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// seedDrift writes through the store, without the model, one of each
// kind of drift over the entities seeded(0..7) and returns the findings
// Check must report.
func seedDrift(t *testing.T, f *fixture) []key {
	t.Helper()
	ctx := context.Background()
	tb := f.raw().Table(f.table)
	var want []key
	// A dangling global copy: w0-0's copy under a last name it never had.
	e0 := seeded(0)
	src := f.rawGet(t, f.table, "Sales", mustJoin("e", e0.ID))
	ghost := store.Entity{PartitionKey: mustJoin("x", "lastname", "Ghost"), RowKey: mustJoin(f.table, "Sales", e0.ID), Properties: maps.Clone(src.Properties)}
	delete(ghost.Properties, model.SumProperty)
	ghost.Properties[model.SourceTableProperty], ghost.Properties[model.SourcePartitionProperty], ghost.Properties[model.SourceRowProperty] = f.table, "Sales", src.RowKey
	if _, err := tb.Insert(ctx, ghost); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftDangling, "lastname", f.table, ghost.PartitionKey, ghost.RowKey})
	// A dangling copy in the partition: w0-0's badge copy under a badge
	// it does not hold.
	b := f.rawGet(t, f.table, "Sales", mustJoin("u", "badge", e0.Badge))
	b.RowKey = mustJoin("u", "badge", "B-old")
	if _, err := tb.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftDangling, "badge", f.table, "Sales", b.RowKey})
	// A dangling card: the card of Sales/c0, an entity that never was.
	if _, err := f.raw().Table(f.cards).Update(ctx, store.Entity{PartitionKey: "cards", RowKey: mustJoin("Sales", "c0"), Properties: map[string]any{
		"Email": "gone@x.com", "LastName": "Gone", "TkDn_card_V": int64(1), "TkDn_card_Src": f.table + "/Sales/" + mustJoin("e", "c0")}}, store.Merge, store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftDangling, "card", f.cards, "cards", mustJoin("Sales", "c0")})
	// Missing copies: w0-1's global email copy, w0-2's badge copy.
	e1, e2 := seeded(1), seeded(2)
	if err := tb.Delete(ctx, mustJoin("x", "email", e1.Email), "u", store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftMissing, "email", f.table, mustJoin("x", "email", e1.Email), "u"})
	if err := tb.Delete(ctx, "Sales", mustJoin("u", "badge", e2.Badge), store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftMissing, "badge", f.table, "Sales", mustJoin("u", "badge", e2.Badge)})
	// Copies behind: w1-0's last-name copy and its card, an older
	// version with an older value.
	e3 := seeded(3)
	lc := f.rawGet(t, f.table, mustJoin("x", "lastname", e3.LastName), mustJoin(f.table, "Sales", e3.ID))
	lc.Properties[eventual.VersionProperty] = eventual.VersionOf(&lc) - 1
	lc.Properties["N"] = int64(-1)
	f.rawReplace(t, f.table, lc)
	want = append(want, key{model.DriftBehind, "lastname", f.table, lc.PartitionKey, lc.RowKey})
	card := f.rawGet(t, f.cards, "cards", mustJoin("Sales", e3.ID))
	card.Properties["Email"] = "older@x.com"
	card.Properties["TkDn_card_V"] = card.Properties["TkDn_card_V"].(int64) - 1
	f.rawReplace(t, f.cards, card)
	want = append(want, key{model.DriftBehind, "card", f.cards, "cards", card.RowKey})
	// A log entry missing: w1-1's newest log row removed.
	e4 := seeded(4)
	ent4 := f.rawGet(t, f.table, "Sales", mustJoin("e", e4.ID))
	lk := logKey(e4.ID, eventual.VersionOf(&ent4))
	if err := tb.Delete(ctx, "Sales", lk, store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftLog, "log", f.table, "Sales", lk})
	// A bypassing update: w1-2's row merged directly (its last name and
	// N changed, nothing else).
	e5 := seeded(5)
	if _, err := tb.Update(ctx, store.Entity{PartitionKey: "Sales", RowKey: mustJoin("e", e5.ID), Properties: map[string]any{
		"LastName": "Bypass", "N": int64(500)}}, store.Merge, store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftBypassed, "", f.table, "Sales", mustJoin("e", e5.ID)})
	// A bypassing delete: w2-0's row deleted directly.
	e6 := seeded(6)
	if err := tb.Delete(ctx, "Sales", mustJoin("e", e6.ID), store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftDeleted, "", f.table, "Sales", mustJoin("e", e6.ID)})
	// Lists: w2-1's list row removed (its id missing), and w0-0's list
	// naming an entity that never was.
	e7 := seeded(7)
	if err := tb.Delete(ctx, "Sales", mustJoin("n", "family", e7.LastName, ""), store.ETagAny); err != nil {
		t.Fatal(err)
	}
	want = append(want, key{model.DriftMissing, "family", f.table, "Sales", mustJoin("n", "family", e7.LastName, "")})
	l0 := f.rawGet(t, f.table, "Sales", mustJoin("n", "family", e0.LastName, ""))
	l0.Properties[model.ListProperty] = l0.Properties[model.ListProperty].(string) + "\nw9-9"
	f.rawReplace(t, f.table, l0)
	want = append(want, key{model.DriftDangling, "family", f.table, "Sales", l0.RowKey})
	sort.Slice(want, func(i, j int) bool { return fmt.Sprint(want[i]) < fmt.Sprint(want[j]) })
	return want
}

// logKey is the RowKey of the log row of id at version v.
func logKey(id string, v int64) string {
	return mustJoin("l", id, fmt.Sprintf("%019d", int64(^uint64(0)>>1)-v))
}

// TestCheckAndRepair seeds each kind of drift by writing rows directly:
// Check reports exactly those (kind, feature and row), the model's reads
// and writes refuse the rows written without it, Repair mends them all,
// and after the engine drained a second Check is clean and an
// independent scan of the tables agrees.
func TestCheckAndRepair(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, allFeatures)
		for i := range 8 {
			s := seeded(i)
			if err := f.m.Insert(ctx, &s); err != nil {
				t.Fatal(err)
			}
		}
		f.drain(t)
		rep, err := f.m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() || len(rep.Pending) != 0 || rep.Entities != 8 {
			t.Fatalf("before any drift: %s", rep)
		}
		want := seedDrift(t, f)

		rep, err = f.m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(rep.Findings); !slices.Equal(got, want) || len(rep.Pending) != 0 {
			t.Fatalf("Check found\n%v\nwant\n%v\n%s", got, want, rep)
		}
		t.Logf("%s: Check: %s", e.B.Name, rep)

		// The model refuses what was written without it, and finds no
		// entity through the copies of one deleted without it.
		e5, e6 := seeded(5), seeded(6)
		if _, err := f.m.Get(ctx, "Sales", e5.ID); !errors.Is(err, model.ErrBypassed) {
			t.Fatalf("Get of a bypassed entity: %v", err)
		}
		var be *model.BypassError
		if _, err := f.m.Find(ctx, "email", e5.Email); !errors.As(err, &be) || be.RowKey != mustJoin("e", e5.ID) {
			t.Fatalf("Find of a bypassed entity: %v", err)
		}
		if err := f.m.Update(ctx, &e5, store.Merge); !errors.Is(err, model.ErrBypassed) {
			t.Fatalf("Update of a bypassed entity: %v", err)
		}
		// A partition lookup through a full copy reads only the copy,
		// written in the entity's own transaction: a delete of the entity
		// row around the model shows in Get and Check (above), and the
		// copy still answers as of the last model write until Repair. A
		// lookup through a projected copy reads the entity too, and
		// refuses the copy of one that is not there.
		if got, err := f.m.FindIn(ctx, "Sales", "badge", e6.Badge); err != nil || got.ID != e6.ID {
			t.Fatalf("FindIn through a copy of an entity deleted without the model: %v, %v", got, err)
		}
		if _, err := f.m.FindAllIn(ctx, "Sales", "team", e6.Team); !errors.Is(err, model.ErrBypassed) {
			t.Fatalf("FindAllIn through a projected copy of an entity deleted without the model: %v", err)
		}
		if _, err := f.m.FindIn(ctx, "Sales", "badge", "B-old"); !errors.Is(err, model.ErrBypassed) {
			t.Fatalf("FindIn through a dangling copy: %v", err)
		}
		if _, err := f.m.Find(ctx, "email", e6.Email); !store.EntityNotFound(err) {
			t.Fatalf("Find of an entity deleted without the model: %v", err)
		}

		rep, err = f.m.Repair(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: Repair: %s", e.B.Name, rep)
		if !rep.Clean() {
			t.Fatalf("Repair left drift: %s", rep)
		}
		for _, fd := range rep.Findings {
			if fd.Outcome != model.Repaired && fd.Outcome != model.Skipped {
				t.Fatalf("Repair: %s", fd)
			}
		}
		f.drain(t)
		rep, err = f.m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Clean() || len(rep.Pending) != 0 {
			t.Fatalf("second Check: %s", rep)
		}
		if r := f.verify(t); r.bad() {
			t.Fatalf("after Repair: %s", r)
		}
		// The bypassing update was adopted, the bypassing delete recorded.
		got, err := f.m.Get(ctx, "Sales", e5.ID)
		if err != nil || got.LastName != "Bypass" || got.N != 500 {
			t.Fatalf("adopted entity: %+v, %v", got, err)
		}
		if all, err := f.m.FindAll(ctx, "lastname", "Bypass"); err != nil || len(all) != 1 || all[0].ID != e5.ID {
			t.Fatalf("FindAll of the adopted last name: %v, %v", all, err)
		}
		if l, err := f.m.Log(ctx, "Sales", e5.ID, 1); err != nil || len(l) != 1 || l[0].Op != "update" || l[0].Entity.LastName != "Bypass" {
			t.Fatalf("log of the adopted entity: %+v, %v", l, err)
		}
		if l, err := f.m.Log(ctx, "Sales", e6.ID, 1); err != nil || len(l) != 1 || l[0].Op != "delete" {
			t.Fatalf("log of the entity deleted without the model: %+v, %v", l, err)
		}
		if _, err := f.m.FindIn(ctx, "Sales", "badge", e6.Badge); !store.EntityNotFound(err) {
			t.Fatalf("FindIn after Repair: %v", err)
		}
		// A model write works again on the adopted entity.
		got.ETag = ""
		got.LastName = "After"
		if err := f.m.Update(ctx, got, store.Replace); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check after a write: %v %v", rep, err)
		}
	})
}

// TestCheckPartitions: a walk restricted to some partitions reports only
// the drift of their entities.
func TestCheckPartitions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, eventualtest.MemEnv(), nil, allFeatures)
	for _, dept := range []string{"Sales", "Ops"} {
		s := seeded(0)
		s.Dept, s.Email, s.Badge = dept, dept+"@x.com", dept
		if err := f.m.Insert(ctx, &s); err != nil {
			t.Fatal(err)
		}
	}
	f.drain(t)
	for _, dept := range []string{"Sales", "Ops"} {
		if err := f.raw().Table(f.table).Delete(ctx, mustJoin("x", "email", dept+"@x.com"), "u", store.ETagAny); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := f.m.Check(ctx, &model.CheckOptions{Partitions: []string{"Ops"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Entity.PartitionKey != "Ops" || rep.Findings[0].Drift != model.DriftMissing {
		t.Fatalf("Check of Ops: %s", rep)
	}
	if rep, err = f.m.Repair(ctx, &model.CheckOptions{Partitions: []string{"Ops"}}); err != nil || !rep.Clean() {
		t.Fatalf("Repair of Ops: %v %v", rep, err)
	}
	if rep, err = f.m.Check(ctx, nil); err != nil || len(rep.Findings) != 1 || rep.Findings[0].Entity.PartitionKey != "Sales" {
		t.Fatalf("Check of all after Repair of Ops: %v %v", rep, err)
	}
}

// TestCheckRefusesBadInput: bad options are refused, naming the value,
// before anything is read or written.
func TestCheckRefusesBadInput(t *testing.T) {
	f := newFixture(t, eventualtest.MemEnv(), nil, []string{fGUnique})
	//lint:ignore SA1012 a nil context is what is refused
	if _, err := f.m.Check(nil, nil); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("nil context: %v", err)
	}
	//lint:ignore SA1012 a nil context is what is refused
	if _, err := f.m.Repair(nil, nil); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("nil context: %v", err)
	}
	ctx := context.Background()
	if _, err := f.m.Repair(ctx, &model.CheckOptions{Partitions: []string{}}); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("empty partition list: %v", err)
	}
	_, err := f.m.Repair(ctx, &model.CheckOptions{Partitions: []string{"a/b"}})
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"a/b"`) {
		t.Fatalf("bad partition key: %v", err)
	}
}

// TestRepairRacesWriters runs Repair over seeded drift while a writer
// updates the same entities through the model and a worker runs: no
// update the writer was told succeeded is lost, and once everything
// settled a Repair leaves the tables clean.
func TestRepairRacesWriters(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		seeds := 12
		if !e.Fake() {
			seeds = 1
		}
		var lost, refused, writes, skipped, repairs, restamps int
		for seed := range seeds {
			ctx := context.Background()
			f := newFixture(t, e, nil, allFeatures)
			want := map[string]*Employee{}
			for i := range 8 {
				s := seeded(i)
				if err := f.m.Insert(ctx, &s); err != nil {
					t.Fatal(err)
				}
				s.ETag = ""
				want[s.ID] = &s
			}
			f.drain(t)
			seedDrift(t, f)
			// The bypassing update will be adopted as it stands (or be
			// overwritten by the writer once adopted); the deleted entity
			// stays deleted.
			bp := *want["w1-2"]
			bp.LastName, bp.N = "Bypass", 500
			want["w1-2"] = &bp
			delete(want, "w2-0")

			r := rand.New(rand.NewPCG(uint64(seed), 99))
			ids := slices.Sorted(maps.Keys(want))
			stop := make(chan struct{})
			var wg, worker sync.WaitGroup
			wg.Add(1)
			worker.Add(1)
			go func() { // the worker
				defer worker.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if n, _ := f.eng.ProcessOnce(ctx); n == 0 {
						f.e.Pass(0)
					}
				}
			}()
			var werr error
			var mu sync.Mutex
			writerDone := make(chan struct{})
			var runs atomic.Int64
			go func() { // the writer
				defer wg.Done()
				defer close(writerDone)
				// At least 30 writes, and on until Repair ran 4 times.
				for i := 0; i < 30 || runs.Load() < 4 && i < 400; i++ {
					id := ids[r.IntN(len(ids))]
					s := *want[id]
					s.N = 1000*seed + i
					switch r.IntN(3) {
					case 0:
						s.LastName = []string{"Jones", "Lee", s.LastName}[r.IntN(3)]
					case 1:
						s.Badge = fmt.Sprintf("B%d-%d", i, seed)
					}
					err := f.m.Update(ctx, &s, store.Replace)
					mu.Lock()
					writes++
					switch {
					case err == nil:
						s.ETag = ""
						want[id] = &s
					case errors.Is(err, model.ErrBypassed), errors.Is(err, partition.ErrDuplicate),
						errors.Is(err, partition.ErrChanged): // a copy deleted directly, before Repair put it back
						refused++
					default:
						werr = fmt.Errorf("update %s: %w", id, err)
					}
					mu.Unlock()
					if werr != nil {
						return
					}
				}
			}()
			// Repair runs again and again while the writer writes, and a
			// drifter keeps removing an entity's copy in the team index
			// (directly), so repairs keep writing the entities the writer
			// writes.
			dr := rand.New(rand.NewPCG(uint64(seed), 7))
			for done := false; !done; {
				select {
				case <-writerDone:
					done = true
				default:
				}
				id := ids[dr.IntN(len(ids))]
				if row, err := f.raw().Table(f.table).Get(ctx, "Sales", mustJoin("e", id), nil); err == nil {
					team, _ := row.Properties["Team"].(string)
					_ = f.raw().Table(f.table).Delete(ctx, "Sales", mustJoin("i", "team", team, id), store.ETagAny)
				}
				rep, err := f.m.Repair(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				skipped += rep.Outcomes()[model.Skipped]
				repairs++
				runs.Add(1)
			}
			wg.Wait()
			close(stop)
			worker.Wait()
			if werr != nil {
				t.Fatal(werr)
			}
			// Everything settled: drain, mend what the race left, check.
			f.drain(t)
			rep, err := f.m.Repair(ctx, nil)
			if err != nil || !rep.Clean() {
				t.Fatalf("seed %d: Repair after the race: %v %v", seed, rep, err)
			}
			f.drain(t)
			if rep, err = f.m.Check(ctx, nil); err != nil || !rep.Clean() || len(rep.Pending) != 0 {
				t.Fatalf("seed %d: Check: %v %v", seed, rep, err)
			}
			if v := f.verify(t); v.bad() {
				t.Fatalf("seed %d: %s", seed, v)
			}
			for id, w := range want {
				got, err := f.m.Get(ctx, "Sales", id)
				if err != nil {
					t.Fatalf("seed %d: %s: %v", seed, id, err)
				}
				g := *got
				g.ETag = ""
				if !sameProps(g, *w) {
					lost++
					t.Errorf("seed %d: %s holds %+v, the writer last wrote %+v", seed, id, g, *w)
				}
			}
			// A repair never changes an entity's state: each "repair"
			// entry of a log holds the state of the entry before it (a
			// repair that wrote a state read before a writer's commit
			// would hold an older one).
			for _, id := range ids {
				l, err := f.m.Log(ctx, "Sales", id, 1000)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i+1 < len(l); i++ {
					if l[i].Op != "repair" || l[i+1].Entity == nil {
						continue
					}
					restamps++
					a, b := *l[i].Entity, *l[i+1].Entity
					a.ETag, b.ETag = "", ""
					if !sameProps(a, b) {
						lost++
						t.Errorf("seed %d: %s: the repair at version %d wrote %+v over %+v", seed, id, l[i].Version, a, b)
					}
				}
			}
			if _, err := f.m.Get(ctx, "Sales", "w2-0"); !store.EntityNotFound(err) {
				t.Fatalf("seed %d: the deleted entity: %v", seed, err)
			}
		}
		t.Logf("%s: runs %d, writes %d (refused %d), Repair runs %d (findings skipped under the race %d), entities written again by a repair after a write %d: lost %d",
			e.B.Name, seeds, writes, refused, repairs, skipped, restamps, lost)
	})
}

// Repair adopts an entity row written without the model, and writes its
// copies again.
func ExampleModel_Repair() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Staff")
	eng, _ := eventual.New(st, "staff", nil)
	_ = eng.Setup(ctx)
	staff, _ := model.Define(st, "Staff", &model.Options{Engine: eng},
		model.GlobalIndex("lastname", func(s *Staff) string { return s.LastName }),
		model.Log[Staff]())
	_ = staff.Insert(ctx, &Staff{Dept: "Sales", ID: "000223", LastName: "Jones"})
	_ = eng.Drain(ctx)

	// Someone renames her directly in the table, past the model.
	row, _ := keys.Join("e", "000223") // the entity's row, see the package doc
	_, _ = st.Table("Staff").Update(ctx, store.Entity{PartitionKey: "Sales", RowKey: row,
		Properties: map[string]any{"LastName": "Smith"}}, store.Merge, store.ETagAny)
	_, err := staff.Get(ctx, "Sales", "000223")
	fmt.Println(errors.Is(err, model.ErrBypassed))

	rep, _ := staff.Check(ctx, nil)
	fmt.Println(rep.Count(model.DriftBypassed))

	rep, _ = staff.Repair(ctx, nil)
	fmt.Println(rep.Clean())
	_ = eng.Drain(ctx)
	smiths, _ := staff.FindAll(ctx, "lastname", "Smith")
	jones, _ := staff.FindAll(ctx, "lastname", "Jones")
	fmt.Println(len(smiths), len(jones))
	// Output:
	// true
	// 1
	// true
	// 1 0
}
