package model

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/runner"
)

// RunOptions tune NewRunner and Run; nil takes the defaults.
type RunOptions struct {
	// SweepEvery is the pause between sweeps of each table's outbox
	// (default runner.DefaultEvery, 1 minute).
	SweepEvery time.Duration
	// MeasureEvery is the pause between readings of the backlog that
	// Runner.Health reports (default runner.DefaultEvery).
	MeasureEvery time.Duration
	// BlobSweepEvery is the pause between the SweepBlobs runs of each
	// model with a Blob (default runner.DefaultEvery). Each run lists the
	// model's blobs and reads each entity with a blob older than
	// Options.BlobGrace once (Model.SweepBlobs says its cost): a program
	// with many blobs sets a longer one.
	BlobSweepEvery time.Duration
	// ClaimReapEvery is the pause between the ReapClaims runs of each
	// model with a global index (default runner.DefaultEvery). Each run
	// queries the rows of the model's index tables (Model.ReapClaims
	// says its cost): a program with large index tables sets a longer
	// one.
	ClaimReapEvery time.Duration
	// Logger receives every error of the worker, the sweeps, the measure
	// and Jobs (default slog.Default()).
	Logger *slog.Logger
	// OnError, when set, is called with every such error too, with the
	// job's name.
	OnError func(job string, err error)
	// Jobs are more jobs for the same runner: the program's own, or the
	// patterns' (large.Store.SweepJob, periods.Tables.RetainJob).
	Jobs []runner.Job
}

// NewRunner returns the runner (core/runner) of the background work of
// the models defined on eng: the engine's worker, a sweep of each table's
// outbox every SweepEvery, a measure of the backlog every MeasureEvery
// (eventual.Engine.Jobs names them), the SweepBlobs of each of those
// models that declares a Blob every BlobSweepEvery ("model/<table>/blobs"),
// the ReapClaims of each of those models that declares a global index
// every ClaimReapEvery ("model/<table>/claims"), and opts.Jobs. tables are the entity
// tables of the models whose outboxes to sweep; nil takes the table of
// every model defined on eng so far (in name order). Define every model
// that writes through eng before: the worker runs their steps. Its Run
// works until ctx ends, and stops at once with the worker's error when
// the engine's queue does not exist (Engine.Setup creates it); its Health
// is what a program exposes.
func NewRunner(eng *eventual.Engine, tables []string, opts *RunOptions) (*runner.Runner, error) {
	if eng == nil {
		return nil, refuse("the engine is nil")
	}
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	// Every period is checked here, naming this option, even one whose
	// job is not made (BlobSweepEvery without a model with blobs).
	for _, p := range []struct {
		name  string
		every time.Duration
	}{{"RunOptions.SweepEvery", o.SweepEvery}, {"RunOptions.MeasureEvery", o.MeasureEvery}, {"RunOptions.BlobSweepEvery", o.BlobSweepEvery},
		{"RunOptions.ClaimReapEvery", o.ClaimReapEvery}} {
		if _, err := runner.Period(p.name, p.every); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	if tables == nil {
		tables = modelTables(eng)
	}
	jobs, err := eng.Jobs(tables, &eventual.JobOptions{Every: o.SweepEvery, MeasureEvery: o.MeasureEvery})
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		if v, ok := registry.Load(regKey{eng, t}); ok {
			if c, ok := v.(cleaner); ok {
				js, err := c.cleanupJobs(&o)
				if err != nil {
					return nil, err
				}
				jobs = append(jobs, js...)
			}
		}
	}
	return runner.New(&runner.Options{Logger: o.Logger, OnError: o.OnError}, append(jobs, o.Jobs...)...)
}

// cleaner is a model of the registry: its cleanup jobs, whatever its T.
type cleaner interface {
	cleanupJobs(o *RunOptions) ([]runner.Job, error)
}

// cleanupJobs returns the cleanup jobs of what m declares, at o's
// periods: SweepBlobsJob for a Blob, ReapClaimsJob for a global index.
func (m *Model[T]) cleanupJobs(o *RunOptions) ([]runner.Job, error) {
	var out []runner.Job
	for _, c := range []struct {
		has  bool
		make func(*JobOptions) (runner.Job, error)
		opts JobOptions
	}{{m.hasBlobs(), m.SweepBlobsJob, JobOptions{Every: o.BlobSweepEvery}}, {m.hasGlobal(), m.ReapClaimsJob, JobOptions{Every: o.ClaimReapEvery}}} {
		if !c.has {
			continue
		}
		j, err := c.make(&c.opts)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// job makes cleanup job op of m, named "model/<table>/<name>", running
// run every opts.Every (runner.Period checks it); has reports whether m
// declares what the job cleans (what, for the refusal).
func (m *Model[T]) job(op, name string, has bool, what string, opts *JobOptions, run func(context.Context) error) (runner.Job, error) {
	var o JobOptions
	if opts != nil {
		o = *opts
	}
	every, err := runner.Period("JobOptions.Every", o.Every)
	if err != nil {
		return runner.Job{}, fmt.Errorf("model: %s: %w", op, err)
	}
	if !has {
		return runner.Job{}, refuse("%s: %s declares no %s", op, m.table, what)
	}
	return runner.Job{Name: "model/" + m.table + "/" + name, Every: every, Run: run}, nil
}

// modelTables lists the tables of the models defined on eng.
func modelTables(eng *eventual.Engine) []string {
	var out []string
	registry.Range(func(k, _ any) bool {
		if rk, ok := k.(regKey); ok && rk.eng == eng {
			out = append(out, rk.table)
		}
		return true
	})
	slices.Sort(out)
	return out
}

// Run runs NewRunner's runner until ctx ends, and returns ctx's error, or
// at once the worker's error when the engine's queue does not exist, or
// NewRunner's refusal of bad input.
func Run(ctx context.Context, eng *eventual.Engine, tables []string, opts *RunOptions) error {
	if ctx == nil {
		return refuse("the context is nil")
	}
	r, err := NewRunner(eng, tables, opts)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}
