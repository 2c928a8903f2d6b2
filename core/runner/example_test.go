package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// A job of the program's own: its errors reach the hook (and the log),
// it backs off while they repeat, and Health says how it went.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	r, err := runner.New(&runner.Options{
		Logger:  slog.New(slog.DiscardHandler), // the hook is enough here
		OnError: func(job string, err error) { fmt.Println("hook:", job, err) },
		Backoff: func(n int) time.Duration { return time.Millisecond }, // default: 1 s doubling up to 5 min
	}, runner.Job{Name: "cleanup", Every: time.Millisecond, Run: func(ctx context.Context) error {
		tries++
		if tries < 3 {
			return errors.New("storage busy")
		}
		cancel() // enough for the example
		return nil
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = r.Run(ctx) // returns once every job stopped
	j, _ := r.Health().Job("cleanup")
	fmt.Println(err, "runs", j.Runs, "errors", j.Errors, "last", j.LastError)
	// Output:
	// hook: cleanup storage busy
	// hook: cleanup storage busy
	// context canceled runs 2 errors 2 last storage busy
}

// An eventual engine's jobs: its worker, a sweep of each source table's
// outbox, and a measure of what is left to do, which Health reports.
func Example_eventual() {
	ctx, cancel := context.WithCancel(context.Background())
	st := memstore.New()
	_ = st.CreateTable(ctx, "Orders")
	eng, _ := eventual.New(st, "orders", &eventual.Options{PollInterval: 5 * time.Millisecond})
	_ = eng.Setup(ctx)
	_, _ = eng.Write(ctx, "Orders", "c1", func(tx *eventual.Tx) error {
		if err := tx.Insert("order", store.Entity{RowKey: "o1"}); err != nil {
			return err
		}
		return tx.Then(ctx, "o1", eventual.Upsert("Orders", store.Entity{PartitionKey: "by-day", RowKey: "o1"}))
	})
	b, _ := eng.Backlog(ctx, "Orders")
	fmt.Println("pending before any worker:", b.Pending)

	jobs, _ := eng.Jobs([]string{"Orders"}, &eventual.JobOptions{MeasureEvery: 5 * time.Millisecond})
	r, _ := runner.New(&runner.Options{OnError: func(job string, err error) { fmt.Println(job, err) }}, jobs...)
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	for { // a program serves r.Health(); the example waits for the worker
		if b := r.Health().Backlog(); !b.At.IsZero() && b.Pending == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	fmt.Println(<-done)
	for _, j := range r.Health().Jobs {
		fmt.Println(j.Name, "errors", j.Errors)
	}
	// Output:
	// pending before any worker: 1
	// context canceled
	// orders/worker errors 0
	// orders/sweep/Orders errors 0
	// orders/backlog errors 0
}
