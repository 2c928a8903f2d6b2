package periods

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// The race of these tests: a write checks the retention horizon and finds
// its period (October 23) live; before its request lands, a retention run
// whose clock has passed the end of that period (November 23, 00:00:01:
// horizon October 24, 00:00:01) expires it and deletes its table. The
// write must not bring the table back.

// lateRetain is the clock of the retention run.
var lateRetain = time.Date(2026, 11, 23, 0, 0, 1, 0, time.UTC)

// racePeriod is the period the write goes to: live at now, expired at
// lateRetain.
var racePeriod = day(-8) // October 23

// hookStore runs hooks around CreateTableIfNotExists of one table; every
// other call, and the tables' entity operations (which keep memstore's
// typed lane), go straight to the store.
type hookStore struct {
	store.Store
	mu            sync.Mutex
	table         string
	before, after func()
}

func (s *hookStore) CreateTableIfNotExists(ctx context.Context, name string) (bool, error) {
	s.mu.Lock()
	before, after := s.before, s.after
	if name == s.table {
		s.before, s.after = nil, nil // once
	} else {
		before, after = nil, nil
	}
	s.mu.Unlock()
	if before != nil {
		before()
	}
	created, err := s.Store.CreateTableIfNotExists(ctx, name)
	if after != nil {
		after()
	}
	return created, err
}

// raceSetup returns a writer's tables and repo, the store they share with
// a retention run, and the run's tables. With shared, both use one clock
// that the hook moves; otherwise the writer's clock stays at now (a
// process whose clock is behind) and the run's reads lateRetain.
func raceSetup(t *testing.T, b backendtest.Backend, prefix string) (writer *Tables, logins *Repo[login], retain *Tables, wclock, rclock *fakeClock) {
	t.Helper()
	wclock, rclock = &fakeClock{t: now}, &fakeClock{t: lateRetain}
	cfg := config{Prefix: prefix, Period: keys.Day, Options: Options{Retention: 30 * 24 * time.Hour,
		Now: wclock.Now, Sleep: wclock.Sleep, Random: func() float64 { return 0.5 }}}
	var err error
	if writer, err = newFrom(b.Store, cfg); err != nil {
		t.Fatal(err)
	}
	if logins, err = NewRepo[login](writer); err != nil {
		t.Fatal(err)
	}
	cfg.Now, cfg.Sleep = rclock.Now, rclock.Sleep
	if retain, err = newFrom(b.Store, cfg); err != nil {
		t.Fatal(err)
	}
	return writer, logins, retain, wclock, rclock
}

// hookedClock makes the writer's clock run hook once, on the first read
// after arm is called: the clock answers with its time from before the
// hook, as a read that happened just before the retention run.
type hookedClock struct {
	mu    sync.Mutex
	c     *fakeClock
	armed bool
	hook  func()
}

func (h *hookedClock) Now() time.Time {
	t := h.c.Now()
	h.mu.Lock()
	run := h.armed
	h.armed = false
	h.mu.Unlock()
	if run {
		h.hook()
	}
	return t
}

func (h *hookedClock) arm(hook func()) {
	h.mu.Lock()
	h.armed, h.hook = true, hook
	h.mu.Unlock()
}

// tablesOf lists the period tables that exist.
func tablesOf(t *testing.T, p *Tables) []string {
	t.Helper()
	all, _, err := p.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tableNames(all)
}

// The write's request lands just after the retention run deleted its
// period's table: the write is refused (ErrExpired) and the table stays
// deleted, whether the two share a clock or the writer's clock is behind
// (another process), in which case only the horizon the run recorded can
// tell the writer.
func TestWriteAfterRetainDeletedItsTableIsRefused(t *testing.T) {
	for _, shared := range []bool{true, false} {
		name := "writer's clock behind"
		if shared {
			name = "one clock"
		}
		t.Run(name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				prefix := uniquePrefix(t, b, "Race")
				writer, logins, retain, wclock, rclock := raceSetup(t, b, prefix)
				hc := &hookedClock{c: wclock}
				writer.cfg.Now = hc.Now
				if shared {
					retain.cfg.Now = wclock.Now
				}
				ctx := t.Context()
				at := racePeriod.Add(12 * time.Hour)
				if err := logins.Insert(ctx, at, &login{User: "ann", ID: "1", At: at}); err != nil {
					t.Fatal(err)
				}
				per, _ := writer.PeriodOf(at)
				var rep Report
				var rerr error
				hc.arm(func() {
					if shared {
						wclock.mu.Lock()
						wclock.t = rclock.t
						wclock.mu.Unlock()
					}
					rep, rerr = retain.Retain(ctx, RetainOptions{})
				})
				err := logins.Insert(ctx, at.Add(time.Hour), &login{User: "bob", ID: "2", At: at})
				t.Logf("retain: deleted %v, horizon %s, %v; write: %v", tableNames(rep.Deleted), rep.Horizon, rerr, err)
				if rerr != nil || !slices.Equal(tableNames(rep.Deleted), []string{per.Table}) {
					t.Fatalf("the retention run did not delete %s: %+v, %v", per.Table, rep, rerr)
				}
				if !errors.Is(err, ErrExpired) {
					t.Fatalf("write landing after its period's table was deleted: %v, want ErrExpired", err)
				}
				if got := tablesOf(t, writer); slices.Contains(got, per.Table) {
					t.Fatalf("the expired period's table %s was created again: tables %v", per.Table, got)
				}
				if _, err := writer.Ensure(ctx, at); !errors.Is(err, ErrExpired) {
					t.Fatalf("Ensure of the expired period after the run: %v", err)
				}
				if got := tablesOf(t, writer); slices.Contains(got, per.Table) {
					t.Fatalf("Ensure created the expired period's table %s again", per.Table)
				}
			})
		})
	}
}

// The first write of a period meets TableNotFound and creates the table;
// the retention run (another process, its clock ahead) runs just before
// the creation, or just after it. Either way the table of the expired
// period does not stay, and the write is refused.
func TestTableCreationRacingRetainLeavesNoExpiredTable(t *testing.T) {
	for _, when := range []string{"before", "after"} {
		t.Run("retain runs "+when+" the creation", func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
				prefix := uniquePrefix(t, b, "Race")
				hs := &hookStore{Store: b.Store}
				writer, logins, retain, _, _ := raceSetup(t, backendtest.Backend{Name: b.Name, Store: hs}, prefix)
				ctx := t.Context()
				at := racePeriod.Add(12 * time.Hour)
				per, _ := writer.PeriodOf(at)
				var rep Report
				var rerr error
				run := func() { rep, rerr = retain.Retain(ctx, RetainOptions{}) }
				hs.mu.Lock()
				hs.table = per.Table
				if when == "before" {
					hs.before = run
				} else {
					hs.after = run
				}
				hs.mu.Unlock()
				err := logins.Insert(ctx, at, &login{User: "bob", ID: "2", At: at})
				t.Logf("retain: deleted %v, horizon %s, %v; write: %v", tableNames(rep.Deleted), rep.Horizon, rerr, err)
				if rerr != nil {
					t.Fatal(rerr)
				}
				if !errors.Is(err, ErrExpired) {
					t.Fatalf("write whose table creation raced the retention run: %v, want ErrExpired", err)
				}
				if got := tablesOf(t, writer); slices.Contains(got, per.Table) {
					t.Fatalf("the expired period's table %s exists after the race: tables %v", per.Table, got)
				}
			})
		})
	}
}

// The horizon a retention run recorded never moves back: a run with a
// clock behind keeps the later one and reports it, and deletes what it
// expires.
func TestRecordedHorizonOnlyMovesForward(t *testing.T) {
	b := backendtest.Memstore()
	prefix := uniquePrefix(t, b, "Fwd")
	writer, _, retain, wclock, _ := raceSetup(t, b, prefix)
	ctx := t.Context()
	for _, d := range []int{-9, -8, -7} { // October 22, 23, 24
		wclock.t = day(d)
		if _, err := writer.Ensure(ctx, day(d)); err != nil {
			t.Fatal(err)
		}
	}
	wclock.t = now
	rep, err := retain.Retain(ctx, RetainOptions{})
	if err != nil || !rep.Horizon.Equal(lateRetain.Add(-30*24*time.Hour)) {
		t.Fatalf("late run: %+v, %v", rep, err)
	}
	// The writer's own run, its clock behind: the recorded horizon holds.
	rep, err = writer.Retain(ctx, RetainOptions{})
	if err != nil || !rep.Horizon.Equal(lateRetain.Add(-30*24*time.Hour)) || len(rep.Deleted) != 0 {
		t.Fatalf("run with a clock behind: horizon %s deleted %v, %v", rep.Horizon, tableNames(rep.Deleted), err)
	}
	got, err := writer.RecordedHorizon(ctx)
	if err != nil || !got.Equal(lateRetain.Add(-30*24*time.Hour)) {
		t.Fatalf("RecordedHorizon = %s, %v", got, err)
	}
	if tables := tablesOf(t, writer); !slices.Equal(tables, []string{prefix + "20261024"}) {
		t.Fatalf("tables %v", tables)
	}
	if _, others, _ := writer.List(ctx); len(others) != 0 {
		t.Fatalf("List reports the horizon's own table among the others: %v", others)
	}
}

// New refuses a nil store, and NewRepo nil tables, with errors matching
// store.ErrInvalidInput, instead of a value that panics on first use.
func TestNilInputsAreRefused(t *testing.T) {
	var p *Tables
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("New(nil, ...) panicked: %v", r)
			}
		}()
		p, err = newFrom(nil, config{Prefix: "Logins", Period: keys.Day})
		if err == nil {
			_, err = p.Ensure(context.Background(), now)
		}
	}()
	if err == nil || !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("New(nil, ...) = %v, want an error matching store.ErrInvalidInput", err)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("NewRepo(nil) panicked: %v", r)
			}
		}()
		_, err = NewRepo[login](nil)
	}()
	if err == nil || !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("NewRepo(nil) = %v, want an error matching store.ErrInvalidInput", err)
	}
	// The other refusals of New match it too.
	if _, err := newFrom(memstore.New(), config{Prefix: "1Logins", Period: keys.Day}); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("bad prefix: %v", err)
	}
}
