package periods

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// proofCrash crashes the process at one request of every kind, store
// requests (table creation, deletion, listing) included: before it
// leaves, or after the service applied it. It keeps the typed lane
// (storetest.WrapStore).
type proofCrash struct {
	calls, at atomic.Int64
	after     bool
	mu        sync.Mutex
	points    map[string]int
}

func (c *proofCrash) arm(n int64, after bool) {
	c.calls.Store(0)
	c.after = after
	c.at.Store(n)
}

func (c *proofCrash) hook(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
	n := c.calls.Add(1)
	if at := c.at.Load(); at == 0 || n != at || !c.at.CompareAndSwap(at, 0) {
		return do(ctx)
	}
	point := "before " + call.EntityOp()
	if c.after {
		_ = do(ctx)
		point = "after " + call.EntityOp()
	}
	c.mu.Lock()
	c.points[point]++
	c.mu.Unlock()
	panic(eventualtest.Crash{})
}

// proofState is what the proofs expect of the period tables: the logins
// by table, and the tables that exist.
func proofState(t *testing.T, p *Tables, r *Repo[login]) (tables []string, logins map[string]string) {
	t.Helper()
	ctx := context.Background()
	all, _, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logins = map[string]string{}
	for _, per := range all {
		tables = append(tables, per.Table)
		for v, err := range r.Query(ctx, per.Start, per.End.Add(-time.Second)) {
			if err != nil {
				t.Fatal(err)
			}
			logins[per.Table+"/"+v.User+"/"+v.ID] = v.IP
		}
	}
	slices.Sort(tables)
	return tables, logins
}

// TestProofCrashAtEveryRequest: inserting into a period without a table
// (the table is created on the way), replacing that login, inserting
// into a second period, and a retention run deleting an expired period's
// table each crash before and after each of their requests, table
// creations and deletions included, on memstore and on Azurite, through
// a wrapper that keeps the typed lane. The restarted process does the
// operation again (an insert that finds its login stored is done); then
// the tables are exactly the live periods' (the expired one gone, never
// created again) and every login holds its last value: lost 0,
// duplicated 0 (a table or login too many), older over newer 0.
func TestProofCrashAtEveryRequest(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		at := func(d int) time.Time { return day(d).Add(3 * time.Hour) }
		type op struct {
			name string
			do   func(p *Tables, r *Repo[login]) error
		}
		insert := func(d int, id, ip string) func(p *Tables, r *Repo[login]) error {
			return func(p *Tables, r *Repo[login]) error {
				err := r.Insert(ctx, at(d), &login{User: "u1", ID: id, At: at(d), IP: ip})
				if errors.Is(err, store.ErrAlreadyExists) {
					return nil // a restarted insert finds its row
				}
				return err
			}
		}
		ops := []op{
			{"insert into a new period", insert(20, "a", "1")},
			{"replace the login", func(p *Tables, r *Repo[login]) error {
				return r.Upsert(ctx, at(20), &login{User: "u1", ID: "a", At: at(20), IP: "2"}, store.Replace)
			}},
			{"insert into a second period", insert(21, "b", "3")},
			{"retain", func(p *Tables, r *Repo[login]) error { _, err := p.Retain(ctx, RetainOptions{}); return err }},
		}
		var crashes, operations, lost, duplicated, older int
		points := map[string]int{}
		for k, o := range ops {
			for n := int64(1); ; n++ {
				done := false
				for _, after := range []bool{false, true} {
					p, r, _ := newTables(t, b, nil)
					expired, err := p.PeriodOf(day(-20))
					if err != nil {
						t.Fatal(err)
					}
					if err := b.Store.CreateTable(ctx, expired.Table); err != nil {
						t.Fatal(err)
					}
					for _, prev := range ops[:k] {
						if err := prev.do(p, r); err != nil {
							t.Fatal(err)
						}
					}
					c := &proofCrash{points: points}
					cp, err := New(storetest.WrapStore(b.Store, c.hook), p.Prefix(), p.Period(), &p.cfg)
					if err != nil {
						t.Fatal(err)
					}
					cr, err := NewRepo[login](cp)
					if err != nil {
						t.Fatal(err)
					}
					c.arm(n, after)
					crashed := eventualtest.Survive(func() { err = o.do(cp, cr) })
					operations++
					if !crashed {
						c.arm(0, false)
						done = true
						if err != nil {
							t.Fatalf("%s without a crash: %v", o.name, err)
						}
					} else {
						crashes++
						if err := o.do(p, r); err != nil {
							t.Fatalf("%s: recovery: %v", o.name, err)
						}
					}
					tables, logins := proofState(t, p, r)
					want := map[string]string{}
					var wantTables []string
					if k < 3 {
						wantTables = append(wantTables, expired.Table)
					}
					p20, _ := p.PeriodOf(day(20))
					p21, _ := p.PeriodOf(day(21))
					wantTables = append(wantTables, p20.Table)
					want[p20.Table+"/u1/a"] = "1"
					if k >= 1 {
						want[p20.Table+"/u1/a"] = "2"
					}
					if k >= 2 {
						wantTables = append(wantTables, p21.Table)
						want[p21.Table+"/u1/b"] = "3"
					}
					slices.Sort(wantTables)
					for key, ip := range want {
						switch got, ok := logins[key]; {
						case !ok:
							lost++
							t.Errorf("%s, crash at request %d (after %v): login %s lost", o.name, n, after, key)
						case got != ip:
							older++
							t.Errorf("%s, crash at request %d (after %v): login %s holds %s, want %s", o.name, n, after, key, got, ip)
						}
					}
					if len(logins) > len(want) {
						duplicated += len(logins) - len(want)
					}
					if !slices.Equal(tables, wantTables) {
						if len(tables) > len(wantTables) {
							duplicated++
						} else {
							lost++
						}
						t.Errorf("%s, crash at request %d (after %v): tables %v, want %v", o.name, n, after, tables, wantTables)
					}
					if k == 3 {
						if err := r.Insert(ctx, day(-20), &login{User: "u1", ID: "x"}); !errors.Is(err, ErrExpired) {
							older++
							t.Errorf("%s, crash at request %d (after %v): a write to the expired period: %v", o.name, n, after, err)
						}
					}
				}
				if done {
					break
				}
			}
		}
		t.Logf("%s: %d operations kinds, crash points %d, operations %d: lost %d, duplicated %d, older over newer %d; points %v",
			b.Name, len(ops), crashes, operations, lost, duplicated, older, points)
		if crashes == 0 {
			t.Fatal("no crash was injected")
		}
	})
}

// TestProofSeededFaults: writers upsert their own logins into three
// periods whose tables do not exist yet (so the creations race), while a
// retention run deletes an expired period's table, and about one request
// in five (table requests, and store requests: creation, deletion,
// listing) meets a seeded fault: on memstore and on Azurite through
// storetest's kit (typed lane kept), and on Azurite through the fault
// proxy. A write that succeeded must be readable at once, one that failed
// must not be; an unknown outcome is settled by reading. At the end every
// login holds its writer's last value, the tables are exactly the three
// live periods', and the expired one is gone: lost 0, duplicated 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		ctx := context.Background()
		const writers = 4
		each := 15
		if testing.Short() {
			each = 6
		}
		p, r, _ := newTables(t, b, nil)
		expired, err := p.PeriodOf(day(-20))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Store.CreateTable(ctx, expired.Table); err != nil {
			t.Fatal(err)
		}
		fp, err := New(faulty, p.Prefix(), p.Period(), &p.cfg)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := NewRepo[login](fp)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		var wg sync.WaitGroup
		wg.Go(func() {
			for try := 0; ; try++ {
				rep, err := fp.Retain(ctx, RetainOptions{})
				if err == nil && len(rep.Failed) == 0 {
					note("retain done")
					return
				}
				note("retain failed")
				if try > 50 {
					t.Errorf("%s: retain never done: %v", label, err)
					return
				}
			}
		})
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					d := 20 + i%3
					v := &login{User: fmt.Sprintf("u%d", w), ID: fmt.Sprintf("d%d", d), At: day(d).Add(time.Hour), IP: fmt.Sprintf("%d.%d", w, i)}
					for try := 0; ; try++ {
						err := fr.Upsert(ctx, v.At, v, store.Replace)
						kind := "done"
						switch {
						case err == nil:
						case errors.Is(err, store.ErrUnknownOutcome):
							kind = "unknown"
						default:
							kind = "failed"
						}
						note(kind)
						got, gerr := r.Get(ctx, v.At, v.User, v.ID)
						if gerr != nil && !errors.Is(gerr, store.ErrNotFound) {
							t.Errorf("%s: read %s/%s: %v", label, v.User, v.ID, gerr)
							return
						}
						if kind == "done" && got.IP != v.IP || kind == "failed" && got.IP == v.IP {
							t.Errorf("%s: %s/%s = %s %s (%v), stored %q", label, v.User, v.ID, v.IP, kind, err, got.IP)
							return
						}
						if got.IP == v.IP {
							break
						}
						if try > 50 {
							t.Errorf("%s: %s/%s = %s never stored", label, v.User, v.ID, v.IP)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		tables, logins := proofState(t, p, r)
		var wantTables []string
		lost, duplicated := 0, 0
		for d := 20; d < 23; d++ {
			per, _ := p.PeriodOf(day(d))
			wantTables = append(wantTables, per.Table)
			for w := range writers {
				last := each - 1
				for last%3 != d-20 {
					last--
				}
				if got := logins[fmt.Sprintf("%s/u%d/d%d", per.Table, w, d)]; got != fmt.Sprintf("%d.%d", w, last) {
					lost++
					t.Errorf("%s: u%d/d%d holds %q, want %d.%d", label, w, d, got, w, last)
				}
			}
		}
		slices.Sort(wantTables)
		if len(logins) > writers*3 {
			duplicated += len(logins) - writers*3
		}
		if !slices.Equal(tables, wantTables) {
			duplicated++
			t.Errorf("%s: tables %v, want %v", label, tables, wantTables)
		}
		t.Logf("%s: %d writers x %d upserts over 3 new periods and a retention run, faults %d %v; outcomes %v; %d tables, %d logins: lost %d, duplicated %d",
			label, writers, each, f.Total(), f.Counts(), outcomes, len(tables), len(logins), lost, duplicated)
		if lost+duplicated != 0 {
			t.Fatal("the store does not match the acknowledged writes")
		}
		if f.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	prooftest.Each(t, []string{"Table.", "Store."}, nil, func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		run(t, b, label, faulty, f)
	})
}
