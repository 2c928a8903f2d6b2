package conventions

import (
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/patterns/periods"
	"github.com/tablekit/tablekit/store"
)

// thing stands for any entity type of the generic packages.
type thing struct{}

// The key types are one: every package's key pair is store.Key and every
// table-qualified reference store.RowRef (these lines compile only while
// they are aliases, not types of their own).
var (
	_ = []store.Key{partition.Ref{}}
	_ = []store.RowRef{eventual.Ref{}, denorm.Target{}}
)

// The cleanup jobs have one shape: a method <Op>Job of the value that does
// the work, with what it cannot do without and a *JobOptions last before
// any variadic parameter, returning a runner.Job (these lines compile only
// while the signatures keep it); an engine's Jobs returns its set.
var (
	_ func(*model.Model[thing], *model.JobOptions) (runner.Job, error)             = (*model.Model[thing]).ReapClaimsJob
	_ func(*large.Store[thing], *large.JobOptions) (runner.Job, error)             = (*large.Store[thing]).SweepJob
	_ func(*model.Model[thing], *model.JobOptions) (runner.Job, error)             = (*model.Model[thing]).SweepBlobsJob
	_ func(*periods.Tables, *periods.JobOptions) (runner.Job, error)               = (*periods.Tables).RetainJob
	_ func(*eventual.Engine, []string, *eventual.JobOptions) ([]runner.Job, error) = (*eventual.Engine).Jobs
)

// Every JobOptions names its period Every, a time.Duration whose zero
// value takes runner.DefaultEvery (runner.Period, tested in core/runner).
var _ = []any{
	large.JobOptions{Every: time.Duration(0)},
	model.JobOptions{Every: time.Duration(0)}, periods.JobOptions{Every: time.Duration(0)},
	eventual.JobOptions{Every: time.Duration(0)},
}
