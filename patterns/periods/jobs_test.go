package periods

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// TestRetainJob: the job runs Retain under the runner's naming, every
// runner.DefaultEvery by default, and hands each report over (a dry run
// when asked, then a run that deletes); tables that keep everything and a
// negative period are refused.
func TestRetainJob(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		p, _, clock := newTables(t, b, nil)
		for d := -32; d <= -31; d++ { // two days past the retention
			clock.t = day(d)
			if _, err := p.Ensure(ctx, day(d)); err != nil {
				t.Fatal(err)
			}
		}
		clock.t = now
		var reports []Report
		dry, err := p.RetainJob(&JobOptions{Retain: RetainOptions{DryRun: true}, Report: func(r Report) { reports = append(reports, r) }})
		if err != nil {
			t.Fatal(err)
		}
		if want := "periods/" + p.Prefix() + "/retain"; dry.Name != want || dry.Every != runner.DefaultEvery {
			t.Fatalf("job %s every %s, want %s every runner.DefaultEvery", dry.Name, dry.Every, want)
		}
		if err := dry.Run(ctx); err != nil {
			t.Fatal(err)
		}
		job, err := p.RetainJob(&JobOptions{Every: time.Hour, Report: func(r Report) { reports = append(reports, r) }})
		if err != nil || job.Every != time.Hour {
			t.Fatalf("RetainJob every 1h: every %s, %v", job.Every, err)
		}
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if len(reports) != 2 || !reports[0].DryRun || len(reports[0].Deleted) != 2 || reports[1].DryRun || len(reports[1].Deleted) != 2 {
			t.Fatalf("reports %+v, want a dry run and a run, each of the two expired days", reports)
		}
		left, _, err := p.List(ctx)
		if err != nil || len(left) != 0 {
			t.Fatalf("tables left after the job: %v, %v", tableNames(left), err)
		}

		keep, err := newFrom(b.Store, config{Prefix: "Keep", Period: keys.Day})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			p    *Tables
			o    *JobOptions
			want string
		}{
			{nil, nil, "the tables are nil"},
			{keep, nil, "Options.Retention is 0"},
			{p, &JobOptions{Every: -time.Second}, "JobOptions.Every -1s is negative"},
		} {
			if _, err := c.p.RetainJob(c.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("RetainJob(%+v): %v, want a refusal naming %q", c.o, err, c.want)
			}
		}
	})
}
