package large

import (
	"context"
	"sync"
	"time"

	"github.com/tablekit/tablekit/core/runner"
)

// SweepJob returns a job for a runner (core/runner) that runs Sweep with
// opts every every, named "large/<table>/sweep", and hands each run's
// report to report (when not nil). Set opts.Remove to delete the orphans;
// without it the runs only report them. With opts.MaxBlobs a run stops
// after that many blobs and the next one goes on from there
// (SweepReport.Marker), starting over once a pass is complete, so each
// run's cost stays bounded. A nil store, a period that is not positive, a
// negative MaxBlobs, a Marker (the job keeps its own) and MaxBlobs with
// Partitions are refused with an error matching store.ErrInvalidInput.
func SweepJob[T any](s *Store[T], every time.Duration, opts SweepOptions, report func(SweepReport)) (runner.Job, error) {
	switch {
	case s == nil:
		return runner.Job{}, refuse("SweepJob: the store is nil")
	case every <= 0:
		return runner.Job{}, refuse("SweepJob: the period %s is not positive", every)
	case opts.MaxBlobs < 0:
		return runner.Job{}, refuse("SweepJob: SweepOptions.MaxBlobs %d: want 0 (no limit) or more", opts.MaxBlobs)
	case opts.Marker != "":
		return runner.Job{}, refuse("SweepJob: SweepOptions.Marker %s: the job keeps its own marker", quote(opts.Marker))
	case opts.MaxBlobs > 0 && len(opts.Partitions) > 0:
		return runner.Job{}, refuse("SweepJob: SweepOptions: MaxBlobs cannot go with Partitions")
	}
	opts.Partitions = append([]string(nil), opts.Partitions...)
	var mu sync.Mutex
	marker := ""
	return runner.Job{Name: "large/" + s.tableName + "/sweep", Every: every, Run: func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		o := opts
		o.Marker = marker
		rep, err := s.Sweep(ctx, o)
		if err == nil {
			marker = rep.Marker
		}
		if report != nil {
			report(rep)
		}
		return err
	}}, nil
}
