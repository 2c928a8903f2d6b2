// Package runner runs a program's background jobs: the workers of an
// eventual engine and the sweeps of its outboxes (core/eventual's
// Engine.Jobs), the reaping of expired claims (model's
// Model.ReapClaimsJob), the removal of orphan blobs (patterns/large's
// Store.SweepJob, model's Model.SweepBlobsJob), the retention of period
// tables (patterns/periods' Tables.RetainJob), or any function of the
// program's own, in one place that reports every
// error, stops with its context, and keeps the health figures a program
// exposes (Runner.Health).
//
// A Job is a name, a period and a function. A periodic job (Every > 0)
// runs at once, then every Every; a long-running job (Every 0) runs until
// its context ends, and is started again if it returns before. A run
// that fails is reported through the logger and the OnError hook, and the
// job backs off: its next run comes after its period or Options.Backoff
// of the failures in a row, whichever is longer; every pause is spread by
// up to a tenth either way (jitter), so the runners of several processes
// do not run their sweeps in step. An error wrapped with Fatal stops every
// job, and Run returns it. A job that measures what is left to do (its
// Measure function) reports a Backlog: operations pending, the age of the
// oldest, the operations given up on.
//
//	r, err := runner.New(&runner.Options{OnError: alert}, jobs...)
//	go func() { err := r.Run(ctx) }() // returns when every job stopped
//	json.NewEncoder(w).Encode(r.Health())
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/store"
)

// Job is one kind of background work.
type Job struct {
	// Name names the job in reports, the hook and Health: unique within a
	// runner, 1 to MaxNameLen bytes.
	Name string
	// Every is the period of a periodic job: the pause between the end of
	// one run and the start of the next. 0 makes Run a long-running job,
	// which runs until its context ends (a queue worker). A Measure job
	// must be periodic.
	Every time.Duration
	// Run does the work: one run of a periodic job, or all of a
	// long-running one. Its error is reported; it must return soon after
	// its context ends.
	Run func(ctx context.Context) error
	// Measure, instead of Run, makes the job a measure of the work left:
	// each run reads a Backlog, which Health reports with the job.
	Measure func(ctx context.Context) (Backlog, error)
}

// MaxNameLen bounds Job.Name.
const MaxNameLen = 256

// DefaultEvery is the period of every periodic job tablekit makes when
// its options leave the period 0: the sweeps and the backlog measure of
// an eventual engine (eventual.Engine.Jobs), the reaping of expired
// claims (model.Model.ReapClaimsJob), the sweeps of orphan blobs
// (large.Store.SweepJob, model.Model.SweepBlobsJob) and the retention of
// period tables (periods.Tables.RetainJob). Each of those is made the
// same way: a method <Op>Job of the value that does the work, with what
// it cannot do without as parameters and a *JobOptions (nil: every
// default) whose Every is the period.
const DefaultEvery = time.Minute

// Period returns the period a job's options ask for: every, or
// DefaultEvery when every is 0. A negative every is refused with an error
// matching store.ErrInvalidInput that names field (the option, such as
// "JobOptions.Every") and the limit. It is the one check of a period for
// every job constructor.
func Period(field string, every time.Duration) (time.Duration, error) {
	switch {
	case every < 0:
		e := store.Errorf(store.CodeInvalidInput, 400, "%s %s is negative: it must be 0 (the default, %s) or more", field, every, DefaultEvery)
		e.Source = store.SourceClient
		return 0, e
	case every == 0:
		return DefaultEvery, nil
	}
	return every, nil
}

// Backlog is what a program's background work has left to do, as a
// Measure job read it.
type Backlog struct {
	// Pending counts the operations recorded and not yet carried out (an
	// eventual engine's outbox rows).
	Pending int `json:"pending"`
	// Oldest is when the oldest pending operation was recorded, zero with
	// none; Age is how old it was when measured (At).
	Oldest time.Time     `json:"oldest,omitzero"`
	Age    time.Duration `json:"age"`
	// Poisoned counts the operations given up on after their retries
	// (messages in an engine's poison queue), waiting for someone to fix
	// the cause and send them again. When PoisonedAtLeast is set the
	// count stopped at what one look shows (a queue shows 32 messages at
	// a time): there are Poisoned or more.
	Poisoned        int  `json:"poisoned"`
	PoisonedAtLeast bool `json:"poisonedAtLeast,omitempty"`
	// At is when the figures were read.
	At time.Time `json:"at"`
}

// add sums b into s: counts added, the oldest of the two kept.
func (s *Backlog) add(b Backlog) {
	s.Pending += b.Pending
	s.Poisoned += b.Poisoned
	s.PoisonedAtLeast = s.PoisonedAtLeast || b.PoisonedAtLeast
	if !b.Oldest.IsZero() && (s.Oldest.IsZero() || b.Oldest.Before(s.Oldest)) {
		s.Oldest = b.Oldest
	}
	s.Age = max(s.Age, b.Age)
	if b.At.After(s.At) {
		s.At = b.At
	}
}

// Options tune a Runner; nil, and every zero field, takes the default
// written beside the field.
type Options struct {
	// Logger receives every error of a job (default slog.Default()), at
	// level Error, with the job's name and the failures in a row.
	Logger *slog.Logger
	// OnError, when set, is called with every error a job reports, after
	// the logger: to count, alert or stop. It runs on the job's goroutine
	// (the job waits for it) and may be called by several jobs at once.
	OnError func(job string, err error)
	// Backoff is the pause before the next run of a job whose last n runs
	// failed (n >= 1); a periodic job waits its period when that is
	// longer. It has the contract of partition.Options.Backoff (the pause
	// before retry n), so a program may hand both one policy; the default
	// doubles from 1 s up to 5 minutes, since a job's run is many
	// requests, each retried by its own policy already.
	Backoff func(n int) time.Duration
	// Now is the clock of the Health times (default time.Now); Sleep waits
	// between runs (default a timer that ends with ctx); Random returns a
	// float in [0, 1) for the jitter (default math/rand/v2's Float64: a
	// Random of 0.5 makes every pause exact). Tests inject them.
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Random func() float64
}

// Runner runs a fixed set of jobs; New makes one, Run runs it once.
type Runner struct {
	o       Options
	jobs    []Job
	started atomic.Bool

	mu    sync.Mutex
	state []JobHealth // one per job, in order
}

// New checks the jobs and returns their runner. A nil options takes the
// defaults. A job without a name, with a name used twice or too long, a
// negative period, neither or both of Run and Measure, or a Measure that
// is not periodic, is refused with an error matching
// store.ErrInvalidInput that names it; so is a runner without jobs.
func New(opts *Options, jobs ...Job) (*Runner, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if len(jobs) == 0 {
		return nil, refuse("no jobs to run")
	}
	seen := map[string]bool{}
	for i, j := range jobs {
		switch {
		case j.Name == "" || len(j.Name) > MaxNameLen:
			return nil, refuse("job %d: its name is %d bytes long: it must be 1 to %d", i, len(j.Name), MaxNameLen)
		case seen[j.Name]:
			return nil, refuse("job %q is given twice: names must be unique", j.Name)
		case j.Every < 0:
			return nil, refuse("job %q: Every %s is negative: 0 for a long-running job, or a period", j.Name, j.Every)
		case (j.Run == nil) == (j.Measure == nil):
			return nil, refuse("job %q: give exactly one of Run and Measure", j.Name)
		case j.Measure != nil && j.Every == 0:
			return nil, refuse("job %q: a Measure job needs a period (Every > 0)", j.Name)
		}
		seen[j.Name] = true
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = wait.Sleep
	}
	if o.Random == nil {
		o.Random = rand.Float64
	}
	r := &Runner{o: o, jobs: append([]Job(nil), jobs...), state: make([]JobHealth, len(jobs))}
	for i, j := range jobs {
		r.state[i] = JobHealth{Name: j.Name, Every: j.Every}
	}
	return r, nil
}

// defaultBackoff doubles from 1 s up to 5 minutes.
func defaultBackoff(n int) time.Duration {
	const most = 5 * time.Minute
	d := time.Second
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// FatalError is an error a job marked with Fatal: no retry cures it, so
// the runner stops.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }

// Unwrap returns the job's error.
func (e *FatalError) Unwrap() error { return e.Err }

// Fatal marks err as one that no later run can cure (a queue that does
// not exist): a job that returns it stops the runner, whose Run returns
// it once every job stopped. Fatal(nil) is nil.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &FatalError{Err: err}
}

// ErrPanic matches the error of a run that panicked: the runner reports
// it (with the stack, in the log) and carries on with the job's backoff.
var ErrPanic = errors.New("runner: the job panicked")

// Run runs every job until ctx ends, or a job returns a Fatal error, and
// returns when every job has stopped: ctx's error, or the fatal error
// (an *FatalError wrapping the job's). A job's run still under way when
// ctx ends gets ctx, and Run waits for it. Run may be called once.
func (r *Runner) Run(ctx context.Context) error {
	if r == nil {
		return refuse("the runner is nil: make one with runner.New")
	}
	if ctx == nil {
		return refuse("the context is nil")
	}
	if !r.started.CompareAndSwap(false, true) {
		return refuse("Run was called already: a runner runs once")
	}
	inner, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for i := range r.jobs {
		wg.Go(func() { r.loop(inner, i, stop) })
	}
	wg.Wait()
	var fe *FatalError
	if cause := context.Cause(inner); errors.As(cause, &fe) && ctx.Err() == nil {
		return fe
	}
	return ctx.Err()
}

// loop runs job i until ctx ends.
func (r *Runner) loop(ctx context.Context, i int, stop context.CancelCauseFunc) {
	j := r.jobs[i]
	failing := 0
	for ctx.Err() == nil {
		err := r.runOnce(ctx, i)
		if ctx.Err() != nil {
			return // stopping: an error now is the stop's, not the job's
		}
		pause := j.Every
		if err != nil {
			failing++
			r.report(j.Name, err, failing)
			var fe *FatalError
			if errors.As(err, &fe) {
				stop(fe)
				return
			}
			pause = max(pause, r.o.Backoff(failing))
		} else {
			failing = 0
			if j.Every == 0 {
				// A long-running job that ended before its context: start
				// it again, but never in a tight loop.
				pause = r.o.Backoff(1)
			}
		}
		if r.o.Sleep(ctx, r.jitter(pause)) != nil {
			return
		}
	}
}

// jitter spreads d by up to a tenth either way.
func (r *Runner) jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*r.o.Random()))
}

// runOnce runs job i once, recording it.
func (r *Runner) runOnce(ctx context.Context, i int) (err error) {
	j := r.jobs[i]
	r.mu.Lock()
	r.state[i].Running = true
	r.state[i].LastStart = r.o.Now()
	r.mu.Unlock()
	var b Backlog
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: job %s: %v", ErrPanic, j.Name, p)
			r.o.Logger.Error("runner: job panicked", "job", j.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		s := &r.state[i]
		s.Running = false
		s.LastEnd = r.o.Now()
		if ctx.Err() != nil {
			return // stopped, not failed
		}
		s.Runs++
		if err != nil {
			s.Errors++
			s.Failing++
			s.Err, s.LastError, s.LastErrorAt = err, err.Error(), s.LastEnd
			return
		}
		s.Failing = 0
		s.LastOK = s.LastEnd
		if j.Measure != nil {
			s.Backlog = &b
		}
	}()
	if j.Measure != nil {
		b, err = j.Measure(ctx)
		return err
	}
	return j.Run(ctx)
}

// report sends a job's error to the logger and the hook.
func (r *Runner) report(job string, err error, failing int) {
	r.o.Logger.Error("runner: job failed", "job", job, "failing", failing, "err", err)
	if r.o.OnError != nil {
		r.o.OnError(job, err)
	}
}

// JobHealth is what a job did last.
type JobHealth struct {
	// Name and Every are the job's.
	Name  string        `json:"name"`
	Every time.Duration `json:"every"`
	// Running is set while a run is under way (all the time, for a
	// long-running job that works).
	Running bool `json:"running"`
	// Runs counts the runs that ended, Errors those that failed, Failing
	// the failures in a row up to the last run (0 once a run succeeds).
	Runs    int64 `json:"runs"`
	Errors  int64 `json:"errors"`
	Failing int   `json:"failing"`
	// LastStart and LastEnd are when the last run started and ended;
	// LastOK when the last successful run ended.
	LastStart time.Time `json:"lastStart,omitzero"`
	LastEnd   time.Time `json:"lastEnd,omitzero"`
	LastOK    time.Time `json:"lastOK,omitzero"`
	// Err is the last error (kept after later successes), LastError its
	// text, LastErrorAt when it ended the run.
	Err         error     `json:"-"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// Backlog is the last reading of a Measure job; nil before its first
	// successful run, and for other jobs.
	Backlog *Backlog `json:"backlog,omitempty"`
}

// Health is a runner's state: each job's, in the order given to New.
type Health struct {
	// At is when it was taken.
	At   time.Time   `json:"at"`
	Jobs []JobHealth `json:"jobs"`
}

// Health returns the state of every job, safe to call at any time from
// any goroutine, before, during and after Run. It does no I/O: the
// backlog figures are the Measure jobs' last readings.
func (r *Runner) Health() Health {
	h := Health{At: r.o.Now()}
	r.mu.Lock()
	defer r.mu.Unlock()
	h.Jobs = make([]JobHealth, len(r.state))
	for i, s := range r.state {
		if s.Backlog != nil {
			b := *s.Backlog
			s.Backlog = &b
		}
		h.Jobs[i] = s
	}
	return h
}

// Job returns the state of the job named name, and whether there is one.
func (h Health) Job(name string) (JobHealth, bool) {
	for _, j := range h.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return JobHealth{}, false
}

// Backlog sums the last readings of every Measure job: the pending and
// poisoned counts added, the oldest operation of all, the latest reading
// time.
func (h Health) Backlog() Backlog {
	var b Backlog
	for _, j := range h.Jobs {
		if j.Backlog != nil {
			b.add(*j.Backlog)
		}
	}
	return b
}

// Failing lists the jobs whose last run failed.
func (h Health) Failing() []string {
	var out []string
	for _, j := range h.Jobs {
		if j.Failing > 0 {
			out = append(out, j.Name)
		}
	}
	return out
}

// refuse builds a refusal of bad input.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "runner: "+format, args...)
	e.Source = store.SourceClient
	return e
}
