package large

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tablekit/tablekit/core/runner"
)

// JobOptions tune SweepJob; nil, and every zero field, takes the default
// written beside the field.
type JobOptions struct {
	// Every is the period of the job: the pause between the end of one
	// run and the start of the next (default runner.DefaultEvery, 1
	// minute). It may not be negative.
	Every time.Duration
	// Sweep shapes each run (default: the orphans of all of the table's
	// blobs removed). Set Sweep.DryRun for runs that only report them.
	// With Sweep.MaxBlobs a run stops after that many
	// blobs and the next one goes on from there (SweepReport.Marker),
	// starting over once a pass is complete, so each run's cost stays
	// bounded. Sweep.Marker must be empty: the job keeps its own.
	Sweep SweepOptions
	// Report, when set, receives each run's report.
	Report func(SweepReport)
}

// SweepJob returns a job for a runner (core/runner) that runs Sweep with
// opts.Sweep every opts.Every, named "large/<table>/sweep", and hands
// each run's report to opts.Report. A nil store, a negative period, a
// negative MaxBlobs, a Marker (the job keeps its own) and MaxBlobs with
// Partitions are refused with an error matching store.ErrInvalidInput. It
// does no I/O.
func (s *Store[T]) SweepJob(opts *JobOptions) (runner.Job, error) {
	if s == nil {
		return runner.Job{}, refuse("SweepJob: the store is nil")
	}
	var o JobOptions
	if opts != nil {
		o = *opts
	}
	every, err := runner.Period("JobOptions.Every", o.Every)
	if err != nil {
		return runner.Job{}, fmt.Errorf("large: SweepJob: %w", err)
	}
	sw := o.Sweep
	switch {
	case sw.MaxBlobs < 0:
		return runner.Job{}, refuse("SweepJob: JobOptions.Sweep.MaxBlobs %d: want 0 (no limit) or more", sw.MaxBlobs)
	case sw.Marker != "":
		return runner.Job{}, refuse("SweepJob: JobOptions.Sweep.Marker %s: the job keeps its own marker", quote(sw.Marker))
	case sw.MaxBlobs > 0 && len(sw.Partitions) > 0:
		return runner.Job{}, refuse("SweepJob: JobOptions.Sweep: MaxBlobs cannot go with Partitions")
	}
	sw.Partitions = append([]string(nil), sw.Partitions...)
	report := o.Report
	var mu sync.Mutex
	marker := ""
	return runner.Job{Name: "large/" + s.tableName + "/sweep", Every: every, Run: func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		run := sw
		run.Marker = marker
		rep, err := s.Sweep(ctx, run)
		if err == nil {
			marker = rep.Marker
		}
		if report != nil {
			report(rep)
		}
		return err
	}}, nil
}
