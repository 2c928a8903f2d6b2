package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// writeOp commits one source row of partition pk of table and an
// operation copying it to dst.
func writeOp(t *testing.T, eng *eventual.Engine, table, pk, rk, dst string) {
	t.Helper()
	ctx := context.Background()
	if _, err := eng.Write(ctx, table, pk, func(tx *eventual.Tx) error {
		if err := tx.Insert("row", store.Entity{RowKey: rk}); err != nil {
			return err
		}
		return tx.Then(ctx, rk, eventual.Upsert(dst, store.Entity{PartitionKey: pk, RowKey: rk}))
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBacklog: Backlog counts the engine's pending intents in the tables
// given (those a sweep claimed too, not another engine's), dates the
// oldest on the engine's clock, and counts the poison queue; after the
// drain nothing is pending.
func TestBacklog(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		st := e.B.Store
		src1, src2, dst := e.B.NewTable(t, "bl"), e.B.NewTable(t, "bl"), e.B.NewTable(t, "bl")
		o := e.Opts("backlog")
		eng := eventualtest.NewEngine(t, st, o)
		other := eventualtest.NewEngine(t, st, e.Opts("backlogother"))
		b, err := eng.Backlog(ctx, src1, src2)
		if err != nil || b.Pending != 0 || !b.Oldest.IsZero() || b.Age != 0 || b.Poisoned != 0 {
			t.Fatalf("empty backlog: %+v, %v", b, err)
		}

		start := e.Now()
		for i := range 3 {
			writeOp(t, eng, src1, fmt.Sprintf("p%d", i), "r", dst)
		}
		writeOp(t, other, src1, "p9", "r", dst) // another engine's: not counted
		const gap = 5 * time.Minute
		if e.Fake() {
			e.Pass(gap)
		}
		writeOp(t, eng, src2, "p0", "r", dst)
		writeOp(t, eng, src2, "p1", "r", dst)
		b, err = eng.Backlog(ctx, src1, src2)
		if err != nil || b.Pending != 5 {
			t.Fatalf("backlog %+v, %v: want 5 pending", b, err)
		}
		if e.Fake() {
			if !b.Oldest.Equal(start) || b.Age != gap || !b.At.Equal(start.Add(gap)) {
				t.Fatalf("oldest %s, age %s at %s: want %s, %s", b.Oldest, b.Age, b.At, start, gap)
			}
		} else if b.Oldest.Before(start.Add(-time.Minute)) || b.Oldest.After(b.At) || b.Age <= 0 {
			t.Fatalf("oldest %s, age %s, start %s, at %s", b.Oldest, b.Age, start, b.At)
		}
		if b, err := eng.Backlog(ctx, src2); err != nil || b.Pending != 2 {
			t.Fatalf("backlog of %s: %+v, %v", src2, b, err)
		}
		if err := other.Drain(ctx); err != nil {
			t.Fatal(err)
		}

		// A sweep claims the old rows: they are still pending.
		e.Pass(o.SweepAfter + time.Second)
		if n, err := eng.Sweep(ctx, src1); err != nil || n != 3 {
			t.Fatalf("sweep: %d, %v", n, err)
		}
		ob, _ := partition.NewOutbox(st.Table(src1), &partition.Options{Now: e.Now})
		claimable := 0
		for _, err := range ob.Scan(ctx, partition.ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			claimable++
		}
		if claimable != 0 {
			t.Fatalf("%d rows claimable after the sweep, want 0", claimable)
		}
		if b, err := eng.Backlog(ctx, src1, src2); err != nil || b.Pending != 5 {
			t.Fatalf("backlog after the sweep: %+v, %v: want 5 pending", b, err)
		}

		eventualtest.Drain(t, e, &eng, o, st, src1, src2)
		b, err = eng.Backlog(ctx, src1, src2)
		if err != nil || b.Pending != 0 || !b.Oldest.IsZero() || b.Age != 0 {
			t.Fatalf("backlog after the drain: %+v, %v", b, err)
		}

		// A message no retry can run goes to the poison queue: counted.
		if _, err := st.Queue(o.Queue).Put(ctx, []byte("not an operation"), nil); err != nil {
			t.Fatal(err)
		}
		if n, err := eng.ProcessOnce(ctx); err != nil || n != 1 {
			t.Fatalf("process: %d, %v", n, err)
		}
		b, err = eng.Backlog(ctx, src1, src2)
		if err != nil || b.Poisoned != 1 || b.PoisonedAtLeast || b.Pending != 0 {
			t.Fatalf("backlog with a poisoned message: %+v, %v", b, err)
		}
	})
}

// TestJobs: the engine's jobs are its worker, a sweep per table and a
// measure, named after its queue; bad input is refused; a queue that does
// not exist stops the runner with the worker's error.
func TestJobs(t *testing.T) {
	e := eventualtest.MemEnv()
	st := e.B.Store
	eng, err := eventual.New(st, "jobs", nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := eng.Jobs([]string{"Aaa", "Bbb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, fmt.Sprintf("%s@%s", j.Name, j.Every))
	}
	if got, want := strings.Join(names, " "), "jobs/worker@0s jobs/sweep/Aaa@1m0s jobs/sweep/Bbb@1m0s jobs/backlog@1m0s"; got != want || runner.DefaultEvery != time.Minute {
		t.Fatalf("jobs %s, want %s (runner.DefaultEvery %s)", got, want, runner.DefaultEvery)
	}
	set, err := eng.Jobs([]string{"Aaa"}, &eventual.JobOptions{Every: time.Hour, MeasureEvery: time.Second})
	if err != nil || set[1].Every != time.Hour || set[2].Every != time.Second {
		t.Fatalf("Jobs with Every and MeasureEvery set: %v, %+v", err, set)
	}
	for _, c := range []struct {
		tables []string
		o      *eventual.JobOptions
		msg    string
	}{
		{[]string{"a-b"}, nil, "a-b"},
		{[]string{"Aaa", "Aaa"}, nil, "twice"},
		{nil, &eventual.JobOptions{Every: -time.Second}, "JobOptions.Every -1s is negative"},
		{nil, &eventual.JobOptions{MeasureEvery: -time.Second}, "MeasureEvery -1s"},
	} {
		if _, err := eng.Jobs(c.tables, c.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Jobs(%v, %+v): %v, want a refusal naming %q", c.tables, c.o, err, c.msg)
		}
	}

	// No Setup: the queue does not exist.
	r, err := runner.New(&runner.Options{Logger: slog.New(slog.DiscardHandler)}, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(context.Background())
	var fe *runner.FatalError
	if !errors.As(err, &fe) || !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "jobs") {
		t.Fatalf("Run without the queue: %v, want a fatal error naming the queue", err)
	}
}
