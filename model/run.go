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
			if b, ok := v.(blobSweeper); ok && b.hasBlobs() {
				j, err := b.SweepBlobsJob(&JobOptions{Every: o.BlobSweepEvery})
				if err != nil {
					return nil, err
				}
				jobs = append(jobs, j)
			}
			if c, ok := v.(claimReaper); ok && c.hasGlobal() {
				j, err := c.ReapClaimsJob(&JobOptions{Every: o.ClaimReapEvery})
				if err != nil {
					return nil, err
				}
				jobs = append(jobs, j)
			}
		}
	}
	return runner.New(&runner.Options{Logger: o.Logger, OnError: o.OnError}, append(jobs, o.Jobs...)...)
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
