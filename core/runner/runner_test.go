package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/store"
)

// records is a slog.Handler that keeps every record.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// failures returns, for each "job failed" record, its job and error.
func (h *records) failures() [][2]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out [][2]string
	for _, r := range h.recs {
		if r.Message != "runner: job failed" {
			continue
		}
		var job, err string
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "job":
				job = a.Value.String()
			case "err":
				err = fmt.Sprint(a.Value.Any())
			}
			return true
		})
		out = append(out, [2]string{job, err})
	}
	return out
}

// fast are options whose pauses only yield, exact (no jitter), logging
// to h.
func fast(h *records, onError func(string, error)) *runner.Options {
	return &runner.Options{Logger: slog.New(h), OnError: onError, Random: func() float64 { return 0.5 },
		Sleep: func(ctx context.Context, _ time.Duration) error { runtime.Gosched(); return ctx.Err() }}
}

// TestErrorsReachHookAndLog: every error of a job reaches the logger
// and the hook, in order, with the job's name; Health counts the runs,
// the errors, the failures in a row, and keeps the last error.
func TestErrorsReachHookAndLog(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &records{}
	var mu sync.Mutex
	var hooked [][2]string
	errBusy := errors.New("storage busy")
	n := 0
	o := fast(h, func(job string, err error) {
		mu.Lock()
		defer mu.Unlock()
		hooked = append(hooked, [2]string{job, err.Error()})
	})
	r, err := runner.New(o, runner.Job{Name: "sweep", Every: time.Minute, Run: func(context.Context) error {
		n++
		switch n {
		case 1, 2:
			return fmt.Errorf("try %d: %w", n, errBusy)
		case 3:
			return nil
		case 4:
			return errors.New("try 4: bad row")
		}
		cancel()
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	want := [][2]string{{"sweep", "try 1: storage busy"}, {"sweep", "try 2: storage busy"}, {"sweep", "try 4: bad row"}}
	if fmt.Sprint(hooked) != fmt.Sprint(want) {
		t.Fatalf("hook got %v, want %v", hooked, want)
	}
	if got := h.failures(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("log got %v, want %v", got, want)
	}
	j, ok := r.Health().Job("sweep")
	if !ok {
		t.Fatal("no health for the job")
	}
	// The fifth run ended with the context: not counted.
	if j.Runs != 4 || j.Errors != 3 || j.Failing != 1 || j.LastError != "try 4: bad row" || j.Running {
		t.Fatalf("health %+v: want 4 runs, 3 errors, failing 1, the last error", j)
	}
	if j.LastOK.IsZero() || j.LastErrorAt.IsZero() || j.LastStart.IsZero() {
		t.Fatalf("health %+v: times missing", j)
	}
	if got := r.Health().Failing(); len(got) != 1 || got[0] != "sweep" {
		t.Fatalf("Failing() = %v", got)
	}
}

// TestStopJoinsEveryJob: when ctx ends, Run returns only after every
// job's function returned (long-running ones, runs under way, jobs
// pausing between runs), and leaves no goroutine behind.
func TestStopJoinsEveryJob(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var started sync.WaitGroup
	var returned atomic.Int64
	block := func(ctx context.Context) error {
		started.Done()
		<-ctx.Done()
		returned.Add(1)
		return ctx.Err()
	}
	var once sync.Once
	jobs := []runner.Job{
		{Name: "worker", Run: block},                       // long-running
		{Name: "slow sweep", Every: time.Hour, Run: block}, // a run under way
		{Name: "measure", Every: time.Hour, Measure: func(context.Context) (runner.Backlog, error) {
			defer returned.Add(1)
			once.Do(started.Done)
			return runner.Backlog{Pending: 1}, nil // then pauses an hour
		}},
	}
	started.Add(len(jobs))
	r, err := runner.New(&runner.Options{Logger: slog.New(&records{})}, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	started.Wait()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if got := returned.Load(); got != 3 {
		t.Fatalf("%d job functions had returned when Run did, want 3", got)
	}
	for _, j := range r.Health().Jobs {
		if j.Running {
			t.Fatalf("job %s still running after Run returned", j.Name)
		}
	}
	// Goroutines that called Done may take a moment to exit.
	after := runtime.NumGoroutine()
	for i := 0; i < 1000 && after > before; i++ {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		t.Fatalf("%d goroutines before Run, %d after it returned", before, after)
	}
}

// TestBackoffAndJitter: a failing job waits its period or the backoff of
// its failures in a row, whichever is longer, back to its period once a
// run succeeds; a long-running job that returns is started again after
// the first backoff; every pause is spread by up to a tenth either way.
func TestBackoffAndJitter(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	slept := map[string][]time.Duration{}
	results := map[string][]error{
		"periodic": {errors.New("1"), errors.New("2"), errors.New("3"), nil, errors.New("4")},
		"long":     {nil, errors.New("1"), nil},
	}
	runs := map[string]int{}
	run := func(name string) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			i := runs[name]
			runs[name]++
			if i < len(results[name]) {
				return results[name][i]
			}
			return nil
		}
	}
	// One runner per job, so that its Sleep records that job's pauses.
	for name, every := range map[string]time.Duration{"periodic": 2 * time.Minute, "long": 0} {
		ctx, cancel := context.WithCancel(ctx)
		o := &runner.Options{Logger: slog.New(&records{}), Random: func() float64 { return 0.5 },
			Backoff: func(n int) time.Duration { return time.Duration(n) * 90 * time.Second },
			Sleep: func(ctx context.Context, d time.Duration) error {
				mu.Lock()
				defer mu.Unlock()
				slept[name] = append(slept[name], d)
				if len(slept[name]) == len(results[name]) {
					cancel()
				}
				return ctx.Err()
			}}
		r, err := runner.New(o, runner.Job{Name: name, Every: every, Run: run(name)})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	m := time.Minute
	s := time.Second
	want := map[string][]time.Duration{
		// failures 1, 2, 3: max(2m, 90s) = 2m, max(2m, 180s) = 3m, 270s; then the period; then 90s < 2m.
		"periodic": {2 * m, 3 * m, 270 * s, 2 * m, 2 * m},
		// ended early (nil): the first backoff; failed once: 90s; ended: 90s.
		"long": {90 * s, 90 * s, 90 * s},
	}
	for name, w := range want {
		if fmt.Sprint(slept[name]) != fmt.Sprint(w) {
			t.Errorf("%s paused %v, want %v", name, slept[name], w)
		}
	}

	// Jitter: Random 0 takes a tenth off, Random near 1 adds nearly a tenth.
	for _, c := range []struct {
		r        float64
		min, max time.Duration
	}{{0, 54 * s, 54 * s}, {0.999999, 65 * s, 66 * s}} {
		ctx, cancel := context.WithCancel(context.Background())
		var got time.Duration
		r, err := runner.New(&runner.Options{Logger: slog.New(&records{}), Random: func() float64 { return c.r },
			Sleep: func(ctx context.Context, d time.Duration) error { got = d; cancel(); return ctx.Err() }},
			runner.Job{Name: "j", Every: time.Minute, Run: func(context.Context) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Run(ctx)
		if got < c.min || got > c.max {
			t.Errorf("Random %v: paused %s, want %s to %s", c.r, got, c.min, c.max)
		}
	}
}

// TestFatalStopsTheRunner: a job's Fatal error is reported, stops every
// other job (their contexts end), and is what Run returns, matching the
// job's own error.
func TestFatalStopsTheRunner(t *testing.T) {
	errNoQueue := errors.New("no such queue")
	var otherStopped atomic.Bool
	h := &records{}
	var hooked atomic.Int64
	otherStarted := make(chan struct{})
	r, err := runner.New(fast(h, func(string, error) { hooked.Add(1) }),
		runner.Job{Name: "worker", Run: func(context.Context) error {
			<-otherStarted
			return runner.Fatal(fmt.Errorf("receive: %w", errNoQueue))
		}},
		runner.Job{Name: "other", Run: func(ctx context.Context) error {
			close(otherStarted)
			<-ctx.Done()
			otherStopped.Store(true)
			return ctx.Err()
		}})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(context.Background())
	var fe *runner.FatalError
	if !errors.As(err, &fe) || !errors.Is(err, errNoQueue) {
		t.Fatalf("Run: %v, want the fatal error", err)
	}
	if !otherStopped.Load() {
		t.Fatal("the other job was not stopped")
	}
	if hooked.Load() != 1 || len(h.failures()) != 1 {
		t.Fatalf("fatal error reported %d times to the hook, %d to the log; want 1 each", hooked.Load(), len(h.failures()))
	}
	if runner.Fatal(nil) != nil {
		t.Fatal("Fatal(nil) is not nil")
	}
	// Run once only.
	if err := r.Run(context.Background()); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("second Run: %v", err)
	}
}

// TestPanicIsReported: a run that panics is an error matching ErrPanic,
// reported with the job's name, and the job runs again.
func TestPanicIsReported(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &records{}
	var got []error
	n := 0
	r, err := runner.New(fast(h, func(_ string, err error) { got = append(got, err) }),
		runner.Job{Name: "p", Every: time.Second, Run: func(context.Context) error {
			n++
			if n == 1 {
				panic("nil map")
			}
			cancel()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Run(ctx)
	if len(got) != 1 || !errors.Is(got[0], runner.ErrPanic) || !strings.Contains(got[0].Error(), "nil map") || n != 2 {
		t.Fatalf("errors %v after %d runs: want one ErrPanic naming the panic, then a second run", got, n)
	}
}

// TestMeasureInHealth: a Measure job's last reading is in Health, and
// Health.Backlog sums the readings of every Measure job.
func TestMeasureInHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var left sync.WaitGroup
	left.Add(2)
	measure := func(b runner.Backlog) func(context.Context) (runner.Backlog, error) {
		var once sync.Once
		return func(context.Context) (runner.Backlog, error) {
			defer once.Do(left.Done)
			return b, nil
		}
	}
	r, err := runner.New(&runner.Options{Logger: slog.New(&records{})},
		runner.Job{Name: "a", Every: time.Hour, Measure: measure(runner.Backlog{Pending: 3, Oldest: t0, Age: time.Hour, Poisoned: 1, At: t0.Add(time.Hour)})},
		runner.Job{Name: "b", Every: time.Hour, Measure: measure(runner.Backlog{Pending: 2, Oldest: t0.Add(-time.Minute), Age: time.Minute,
			Poisoned: 32, PoisonedAtLeast: true, At: t0.Add(time.Minute)})},
		runner.Job{Name: "c", Every: time.Hour, Run: func(context.Context) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Health().Jobs[0].Backlog != nil {
		t.Fatal("a backlog before any measure")
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	left.Wait()
	for { // the reading is recorded right after the function returned
		if h := r.Health(); h.Jobs[0].Backlog != nil && h.Jobs[1].Backlog != nil {
			break
		}
		runtime.Gosched()
	}
	cancel()
	<-done
	h := r.Health()
	if h.Jobs[0].Backlog.Pending != 3 || h.Jobs[2].Backlog != nil {
		t.Fatalf("readings: %+v", h.Jobs)
	}
	b := h.Backlog()
	if b.Pending != 5 || b.Poisoned != 33 || !b.PoisonedAtLeast || !b.Oldest.Equal(t0.Add(-time.Minute)) || b.Age != time.Hour || !b.At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("sum %+v", b)
	}
}

// TestNewRefusesBadJobs: each bad job is refused, naming it.
func TestNewRefusesBadJobs(t *testing.T) {
	ok := func(context.Context) error { return nil }
	m := func(context.Context) (runner.Backlog, error) { return runner.Backlog{}, nil }
	for _, c := range []struct {
		jobs []runner.Job
		msg  string
	}{
		{nil, "no jobs"},
		{[]runner.Job{{Run: ok}}, "name is 0 bytes"},
		{[]runner.Job{{Name: strings.Repeat("n", runner.MaxNameLen+1), Run: ok}}, "257 bytes"},
		{[]runner.Job{{Name: "a", Run: ok}, {Name: "a", Run: ok}}, `"a" is given twice`},
		{[]runner.Job{{Name: "a", Every: -time.Second, Run: ok}}, "-1s is negative"},
		{[]runner.Job{{Name: "a"}}, "exactly one of Run and Measure"},
		{[]runner.Job{{Name: "a", Every: time.Second, Run: ok, Measure: m}}, "exactly one of Run and Measure"},
		{[]runner.Job{{Name: "a", Measure: m}}, "needs a period"},
	} {
		_, err := runner.New(nil, c.jobs...)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want a refusal saying %q", c.jobs, err, c.msg)
		}
	}
	r, _ := runner.New(nil, runner.Job{Name: "a", Run: ok})
	//lint:ignore SA1012 a nil context is what is being tested
	if err := r.Run(nil); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("Run(nil): %v", err)
	}
	var nilRunner *runner.Runner
	if err := nilRunner.Run(context.Background()); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("nil runner: %v", err)
	}
}

// TestPeriod: the one check of a job's period: 0 takes DefaultEvery, a
// positive period is kept, a negative one is refused naming the option.
func TestPeriod(t *testing.T) {
	for _, c := range []struct {
		in, want time.Duration
	}{{0, runner.DefaultEvery}, {time.Second, time.Second}, {24 * time.Hour, 24 * time.Hour}} {
		if got, err := runner.Period("JobOptions.Every", c.in); got != c.want || err != nil {
			t.Errorf("Period(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	_, err := runner.Period("JobOptions.Every", -time.Second)
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "JobOptions.Every -1s is negative: it must be 0 (the default, 1m0s) or more") {
		t.Errorf("Period(-1s): %v", err)
	}
}
