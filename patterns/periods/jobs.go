package periods

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/runner"
)

// JobOptions tune RetainJob; nil, and every zero field, takes the default
// written beside the field.
type JobOptions struct {
	// Every is the period of the job: the pause between the end of one
	// run and the start of the next (default runner.DefaultEvery, 1
	// minute). It may not be negative.
	Every time.Duration
	// Retain shapes each run (default: a run that deletes).
	Retain RetainOptions
	// Report, when set, receives each run's report.
	Report func(Report)
}

// RetainJob returns a job for a runner (core/runner) that runs Retain
// with opts.Retain every opts.Every, named "periods/<prefix>/retain", and
// hands each run's report to opts.Report. Tables without
// Options.Retention (Retain would refuse every run) and a negative period
// are refused with an error matching store.ErrInvalidInput. It does no
// I/O.
func (p *Tables) RetainJob(opts *JobOptions) (runner.Job, error) {
	if p == nil {
		return runner.Job{}, refused("RetainJob: the tables are nil", nil)
	}
	var o JobOptions
	if opts != nil {
		o = *opts
	}
	every, err := runner.Period("JobOptions.Every", o.Every)
	if err != nil {
		return runner.Job{}, fmt.Errorf("periods: RetainJob: %w", err)
	}
	if p.cfg.Retention == 0 {
		return runner.Job{}, refused("RetainJob: Options.Retention is 0: every period is kept, there is nothing to retain", nil)
	}
	ro, report := o.Retain, o.Report
	return runner.Job{Name: "periods/" + p.prefix + "/retain", Every: every, Run: func(ctx context.Context) error {
		rep, err := p.Retain(ctx, ro)
		if report != nil {
			report(rep)
		}
		return err
	}}, nil
}
