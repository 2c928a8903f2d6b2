package model

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
)

// RunOptions tune Run; nil takes the defaults.
type RunOptions struct {
	// SweepEvery is the pause between sweeps of the tables (default 1
	// minute).
	SweepEvery time.Duration
	// Logger receives the errors of the worker and the sweeps (default
	// slog.Default()).
	Logger *slog.Logger
}

// Run carries out the models' writes elsewhere until ctx ends: it runs
// eng's worker (Engine.Work) and sweeps the given tables (the entity
// tables of the models defined on eng, whose outboxes the sweep reads)
// every SweepEvery, reporting errors through the logger and going on. It
// returns ctx's error once both stopped, or at once the worker's error
// when the engine's queue does not exist (Engine.Setup creates it).
// Define every model that writes through eng before Run.
func Run(ctx context.Context, eng *eventual.Engine, tables []string, opts *RunOptions) error {
	if ctx == nil {
		return refuse("the context is nil")
	}
	if eng == nil {
		return refuse("the engine is nil")
	}
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	if o.SweepEvery < 0 {
		return refuse("RunOptions.SweepEvery %s is negative", o.SweepEvery)
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	work := make(chan error, 1)
	go func() { work <- eng.Work(ctx) }()
	tick := time.NewTicker(o.SweepEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-work:
			if ctx.Err() == nil {
				o.Logger.Error("model: worker stopped", "err", err)
				return err
			}
			return ctx.Err()
		case <-tick.C:
			for _, t := range tables {
				if _, err := eng.Sweep(ctx, t); err != nil && !errors.Is(err, context.Canceled) {
					o.Logger.Error("model: sweep", "table", t, "err", err)
				}
			}
		}
	}
}
