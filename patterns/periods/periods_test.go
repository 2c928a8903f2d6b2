package periods

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

func TestWritesRouteByTimeAndReadsGoInPeriodOrder(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		p, logins, _ := newTables(t, b, nil)
		ctx := t.Context()
		// Written out of time order, several users per day.
		var want []string
		for _, d := range []int{21, 18, 20, 19, 22} {
			for h, user := range []string{"zoe", "ann"} {
				at := day(d).Add(time.Duration(8+h) * time.Hour)
				l := login{User: user, ID: at.Format("150405"), At: at, IP: fmt.Sprintf("10.0.%d.%d", d, h)}
				if err := logins.Insert(ctx, at, &l); err != nil {
					t.Fatal(err)
				}
			}
		}
		all, others, err := p.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for d := 18; d <= 22; d++ {
			want = append(want, fmt.Sprintf("%s202611%02d", p.Prefix(), d))
		}
		if !slices.Equal(tableNames(all), want) || len(others) != 0 {
			t.Fatalf("tables %v (others %v), want %v", tableNames(all), others, want)
		}
		// From the 19th at noon to the 21st at midnight: the tables of the
		// 19th, 20th and 21st, in that order, keys in order within each.
		var got []string
		for l, err := range logins.Query(ctx, day(19).Add(12*time.Hour), day(21)) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %s", l.At.Day(), l.User))
		}
		if w := []string{"19 ann", "19 zoe", "20 ann", "20 zoe", "21 ann", "21 zoe"}; !slices.Equal(got, w) {
			t.Fatalf("query by period: %v, want %v", got, w)
		}
		// A condition on the entity's own time cuts the range exactly.
		got = nil
		for l, err := range logins.Query(ctx, day(19).Add(12*time.Hour), day(21), mapper.Where[login]("At").Between(day(19).Add(12*time.Hour), day(21))) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %s", l.At.Day(), l.User))
		}
		if w := []string{"20 ann", "20 zoe"}; !slices.Equal(got, w) {
			t.Fatalf("query cut by At: %v, want %v", got, w)
		}
		if l, err := logins.Get(ctx, day(20).Add(9*time.Hour), "ann", "090000"); err != nil || l.IP != "10.0.20.1" {
			t.Fatalf("Get: %+v, %v", l, err)
		}
		if _, err := logins.Get(ctx, day(3), "ann", "090000"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get in a period without a table: %v, want not found", err)
		}
		for _, err := range logins.Query(ctx, day(21), day(19)) {
			if err == nil || !strings.Contains(err.Error(), "ends before it starts") {
				t.Fatalf("reversed range: %v", err)
			}
		}
	})
}

func TestPrepareCreatesTheNextPeriodAhead(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		p, _, clock := newTables(t, b, nil)
		clock.t = day(30).Add(23 * time.Hour) // the last hour of November
		made, err := p.Prepare(t.Context())
		pre := p.Prefix()
		if err != nil || !slices.Equal(made, []string{pre + "20261130", pre + "20261201"}) {
			t.Fatalf("Prepare = %v, %v", made, err)
		}
		if made, err := p.Prepare(t.Context()); err != nil || len(made) != 0 {
			t.Fatalf("second Prepare = %v, %v; want nothing new", made, err)
		}
		// Months: the next month's table across a year boundary.
		pm, _, clockM := newTables(t, b, func(c *config) { c.Period = keys.Month; c.Retention = 0 })
		clockM.t = time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
		made, err = pm.Prepare(t.Context())
		pre = pm.Prefix()
		if err != nil || !slices.Equal(made, []string{pre + "202612", pre + "202701"}) {
			t.Fatalf("monthly Prepare = %v, %v", made, err)
		}
	})
}

func TestRetainDeletesWholeTablesPastTheHorizon(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		cs := &countingStore{Store: b.Store}
		p, logins, clock := newTables(t, backendtest.Backend{Name: b.Name, Store: cs}, nil)
		ctx := t.Context()
		perDay := 120
		if b.Short() {
			perDay = 30
		}
		// Ten days of sign-ins, starting on October 19; "now" is October
		// 28 for the writes, then the clock moves to November 22.
		clock.t = day(-3).Add(12 * time.Hour)
		for d := -12; d <= -3; d++ { // October 19 to October 28
			for i := range perDay {
				at := day(d).Add(time.Duration(i) * time.Minute)
				if err := logins.Insert(ctx, at, &login{User: "u" + fmt.Sprint(i%7), ID: at.Format("150405"), At: at}); err != nil {
					t.Fatal(err)
				}
			}
		}
		foreign := p.Prefix() + "Archive"
		if err := b.Store.CreateTable(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		clock.t = now // horizon: October 23, 10:00
		_, deletesBefore := cs.counts()

		dry, err := p.Retain(ctx, RetainOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		pre := p.Prefix()
		wantGone := []string{pre + "20261019", pre + "20261020", pre + "20261021", pre + "20261022"}
		if !dry.DryRun || !slices.Equal(tableNames(dry.Deleted), wantGone) || len(dry.Kept) != 6 || !slices.Equal(dry.Others, []string{foreign}) {
			t.Fatalf("dry run: deleted %v kept %v others %v", tableNames(dry.Deleted), tableNames(dry.Kept), dry.Others)
		}
		if all, _, _ := p.List(ctx); len(all) != 10 {
			t.Fatalf("a dry run deleted tables: %d left", len(all))
		}
		rep, err := p.Retain(ctx, RetainOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, deletesAfter := cs.counts()
		if !slices.Equal(tableNames(rep.Deleted), wantGone) || len(rep.Kept) != 6 || rep.DryRun || !rep.Horizon.Equal(now.Add(-30*24*time.Hour)) {
			t.Fatalf("retain: %+v", rep)
		}
		t.Logf("%s: %d entities in %d expired tables deleted with %d requests", b.Name, perDay*len(wantGone), len(wantGone), deletesAfter-deletesBefore)
		if deletesAfter-deletesBefore != len(wantGone) {
			t.Fatalf("%d DeleteTable requests for %d tables", deletesAfter-deletesBefore, len(wantGone))
		}
		all, others, err := p.List(ctx)
		if err != nil || len(all) != 6 || tableNames(all)[0] != pre+"20261023" || !slices.Equal(others, []string{foreign}) {
			t.Fatalf("after retain: %v others %v, %v", tableNames(all), others, err)
		}
		n := 0
		for _, err := range logins.Query(ctx, day(-40), now) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 6*perDay {
			t.Fatalf("%d entities left, want %d", n, 6*perDay)
		}
		again, err := p.Retain(ctx, RetainOptions{})
		if err != nil || len(again.Deleted)+len(again.Gone)+len(again.Failed) != 0 {
			t.Fatalf("second run: %+v, %v", again, err)
		}
	})
}

func TestRetainReportsFailuresAndResolvesLostAnswers(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		cs := &countingStore{Store: b.Store}
		p, _, clock := newTables(t, backendtest.Backend{Name: b.Name, Store: cs}, nil)
		pre := p.Prefix()
		cs.failDelete, cs.loseDelete = pre+"20261001", pre+"20261002"
		clock.t = day(-28)
		for d := -30; d <= -28; d++ { // October 1 to 3
			if _, err := p.Ensure(t.Context(), day(d)); err != nil {
				t.Fatal(err)
			}
		}
		clock.t = now
		rep, err := p.Retain(t.Context(), RetainOptions{})
		if err == nil || !strings.Contains(err.Error(), pre+"20261001") || !strings.Contains(err.Error(), "403") {
			t.Fatalf("retain with a refused delete: %v", err)
		}
		if !slices.Equal(tableNames(rep.Failed), []string{pre + "20261001"}) ||
			!slices.Equal(tableNames(rep.Deleted), []string{pre + "20261002", pre + "20261003"}) || len(rep.Gone) != 0 {
			t.Fatalf("report: failed %v deleted %v gone %v", tableNames(rep.Failed), tableNames(rep.Deleted), tableNames(rep.Gone))
		}
		if _, err := p.Retain(t.Context(), RetainOptions{}); err == nil {
			t.Fatal("the refused table was retried without error")
		}
		p0, _ := newFrom(b.Store, config{Prefix: "Logins", Period: keys.Day})
		if _, err := p0.Retain(t.Context(), RetainOptions{}); err == nil || !strings.Contains(err.Error(), "Retention") {
			t.Fatalf("Retain without a retention: %v", err)
		}
	})
}

func TestWritesToAnExpiredPeriodAreRefused(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		p, logins, _ := newTables(t, b, nil)
		at := day(-9) // October 22: ended before the horizon of October 23, 10:00
		err := logins.Insert(t.Context(), at, &login{User: "ann", ID: "1", At: at})
		if !errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), p.Prefix()+"20261022") || !strings.Contains(err.Error(), "2026-10-23T10:00:00Z") {
			t.Fatalf("write to an expired period: %v", err)
		}
		if _, err := p.Ensure(t.Context(), at); !errors.Is(err, ErrExpired) {
			t.Fatalf("Ensure of an expired period: %v", err)
		}
		// The period that holds the horizon is still writable.
		if err := logins.Insert(t.Context(), day(-8), &login{User: "ann", ID: "1", At: day(-8)}); err != nil {
			t.Fatal(err)
		}
		if all, _, _ := p.List(t.Context()); len(all) != 1 || all[0].Table != p.Prefix()+"20261023" {
			t.Fatalf("tables: %v", tableNames(all))
		}
	})
}

func TestBadInputIsRefusedAndNothingWritten(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		for _, tc := range []struct {
			cfg  config
			want string
		}{
			{config{Prefix: "1Logins", Period: keys.Day}, `"1Logins" has '1' at offset 0`},
			{config{Prefix: "Log-ins", Period: keys.Day}, `'-' at offset 3`},
			{config{Prefix: strings.Repeat("L", 56), Period: keys.Day}, "the limit is 63"},
			{config{Prefix: "Logins"}, "granularity 0"},
			{config{Prefix: "Logins", Period: keys.Day, Options: Options{Retention: -time.Hour}}, "negative"},
			{config{Prefix: "Logins", Period: keys.Day, Options: Options{Attempts: -1}}, "Attempts -1"},
		} {
			if _, err := newFrom(b.Store, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%+v): %v, want %s", tc.cfg, err, tc.want)
			}
		}
		p, logins, _ := newTables(t, b, nil)
		err := logins.Insert(t.Context(), now, &login{User: "ann/bob", ID: "1", At: now})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"ann/bob" contains '/'`) {
			t.Fatalf("bad key: %v", err)
		}
		if all, _, _ := p.List(t.Context()); len(all) != 0 {
			t.Fatalf("a refused write created %v", tableNames(all))
		}
		type keyless struct{ At time.Time }
		if _, err := NewRepo[keyless](p); err == nil || !strings.Contains(err.Error(), "no PartitionKey") {
			t.Fatalf("NewRepo[keyless]: %v", err)
		}
	})
}

func TestConcurrentFirstWritesOfAPeriod(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		cs := &countingStore{Store: b.Store}
		p, logins, _ := newTables(t, backendtest.Backend{Name: b.Name, Store: cs}, nil)
		writers, each := 8, 20
		if b.Short() {
			writers, each = 4, 5
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					l := login{User: fmt.Sprint("u", w), ID: fmt.Sprintf("%04d", i), At: now}
					if err := logins.Insert(t.Context(), now, &l); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		n := 0
		for _, err := range logins.Query(t.Context(), now, now) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		creates, _ := cs.counts()
		all, _, _ := p.List(t.Context())
		t.Logf("%s: %d writers x %d first writes of a period: %d stored, %d tables, %d create requests", b.Name, writers, each, n, len(all), creates)
		if n != writers*each || len(all) != 1 {
			t.Fatalf("%d entities in %d tables, want %d in 1", n, len(all), writers*each)
		}
	})
}
