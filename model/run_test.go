package model_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestRun: Run works the engine's queue until ctx ends, then returns
// ctx's error; a bad option is refused.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := memstore.New()
	if err := st.CreateTable(ctx, "Staff"); err != nil {
		t.Fatal(err)
	}
	eng, err := eventual.New(st, "run", &eventual.Options{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := model.Define(st, "Staff", &model.Options{Engine: eng},
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Run(ctx, eng, nil, &model.RunOptions{SweepEvery: -1}); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("negative SweepEvery: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- model.Run(ctx, eng, []string{"Staff"}, &model.RunOptions{SweepEvery: 10 * time.Millisecond})
	}()
	if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: "1", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		for row, err := range store.All(ctx, st.Table("Staff"), store.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			if row.Properties[model.SourceRowProperty] != nil && eventual.VersionOf(&row) > 0 {
				n++
			}
		}
		if n == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("Run never wrote the copy")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after ctx ended: %v", err)
	}
}

// TestRunnerHealth: the health of NewRunner's runner, on memstore with a
// fake clock and messages shown one second late (so the worker cannot
// see them until the clock moves): a backlog of the four intents pending,
// the oldest's age on the fake clock, a poisoned message counted; once
// the clock moves past the delay the worker carries the intents out and
// the backlog reads zero.
func TestRunnerHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := eventualtest.MemEnv(memstore.WithQueueDelay(time.Second))
	st := e.B.Store
	table := e.B.NewTable(t, "Health")
	// The fake clock for the engine's times; real pauses, so the idle
	// worker does not spin.
	eng, err := eventual.New(st, "health", &eventual.Options{Now: e.Now, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := model.Define(st, table, &model.Options{Engine: eng, Now: e.Now},
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	if err != nil {
		t.Fatal(err)
	}
	// A poisoned message, visible once the delay passed.
	if _, err := st.Queue("health-poison").Put(ctx, []byte("given up"), nil); err != nil {
		t.Fatal(err)
	}
	e.Pass(time.Second)
	t1 := e.Now()
	for i := range 3 {
		if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: fmt.Sprint(i), LastName: "Jones"}); err != nil {
			t.Fatal(err)
		}
	}
	e.Pass(400 * time.Millisecond)
	if err := m.Insert(ctx, &Employee{Dept: "Ops", ID: "9", LastName: "Lee"}); err != nil {
		t.Fatal(err)
	}
	e.Pass(400 * time.Millisecond) // still inside the delay of the first three

	var mu sync.Mutex
	var hooked []string
	r, err := model.NewRunner(eng, nil, &model.RunOptions{MeasureEvery: time.Millisecond,
		Logger:  slog.New(slog.DiscardHandler),
		OnError: func(job string, err error) { mu.Lock(); hooked = append(hooked, job+": "+err.Error()); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// backlog waits for a reading that satisfies ok.
	backlog := func(what string, ok func(runner.Backlog) bool) runner.Backlog {
		t.Helper()
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if j, _ := r.Health().Job("health/backlog"); j.Backlog != nil && ok(*j.Backlog) {
				return *j.Backlog
			}
		}
		t.Fatalf("no backlog reading %s: %+v", what, r.Health())
		return runner.Backlog{}
	}
	b := backlog("with the intents", func(b runner.Backlog) bool { return b.Pending > 0 })
	if b.Pending != 4 || !b.Oldest.Equal(t1) || b.Age != 800*time.Millisecond || b.Poisoned != 1 || b.PoisonedAtLeast {
		t.Fatalf("backlog %+v: want 4 pending, the oldest at %s, 800ms old, 1 poisoned", b, t1)
	}
	if h := r.Health().Backlog(); h.Pending != 4 || h.Poisoned != 1 {
		t.Fatalf("Health.Backlog %+v", h)
	}
	e.Pass(time.Second) // the messages show: the worker runs them
	b = backlog("after the worker", func(b runner.Backlog) bool { return b.Pending == 0 })
	if b.Age != 0 || !b.Oldest.IsZero() || b.Poisoned != 1 {
		t.Fatalf("backlog after the worker: %+v", b)
	}
	all, err := m.FindAll(ctx, "lastname", "Jones")
	if err != nil || len(all) != 3 {
		t.Fatalf("FindAll: %d, %v", len(all), err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	h := r.Health()
	var names []string
	for _, j := range h.Jobs {
		names = append(names, j.Name)
		if j.Running || j.Errors != 0 {
			t.Fatalf("job %+v after Run returned", j)
		}
	}
	if got, want := strings.Join(names, " "), "health/worker health/sweep/"+table+" health/backlog model/"+table+"/claims"; got != want {
		t.Fatalf("jobs %q, want %q (the table of the model defined on the engine)", got, want)
	}
	if len(hooked) != 0 {
		t.Fatalf("errors reported: %v", hooked)
	}
}

// TestRunnerReportsErrors: a sweep and a backlog measure that fail (their
// table does not exist) reach the OnError hook and the logger, with the
// job's name, and the runner goes on; a job given in RunOptions.Jobs runs on the same runner.
func TestRunnerReportsErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := memstore.New()
	eng, err := eventual.New(st, "errs", &eventual.Options{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	var logMu sync.Mutex
	hooked := make(chan string, 100)
	ownRan := make(chan struct{}, 100)
	r, err := model.NewRunner(eng, []string{"Missing"}, &model.RunOptions{SweepEvery: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return logged.Write(p)
		}), nil)),
		OnError: func(job string, err error) {
			if store.Code(err) == store.CodeTableNotFound {
				select {
				case hooked <- job:
				default:
				}
			}
		},
		Jobs: []runner.Job{{Name: "own", Every: time.Millisecond, Run: func(context.Context) error {
			select {
			case ownRan <- struct{}{}:
			default:
			}
			return nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// The sweep and the backlog measure both read the missing table.
	for seen := map[string]bool{}; !seen["errs/sweep/Missing"] || !seen["errs/backlog"]; {
		seen[<-hooked] = true
	}
	<-ownRan
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logged.String(), "job=errs/sweep/Missing") || !strings.Contains(logged.String(), "job=errs/backlog") ||
		!strings.Contains(logged.String(), "TableNotFound") {
		t.Fatalf("log: %s", logged.String())
	}
	if _, err := model.NewRunner(nil, nil, nil); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("nil engine: %v", err)
	}
	if _, err := model.NewRunner(eng, nil, &model.RunOptions{MeasureEvery: -1}); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("negative MeasureEvery: %v", err)
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
