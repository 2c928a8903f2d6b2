package xindex_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestReapJob: the job reaps the expired claims of every partition it is
// given (claims left by writers that crashed between the claim and the
// entity write), under the runner's naming; bad input is refused.
func TestReapJob(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		cs := &eventualtest.CrashStore{Store: e.B.Store}
		// Reads of the index partition of department Bad fail.
		st := storetest.WrapStore(cs, storetest.On(func(c storetest.Call) bool {
			return c.EntityOp() == "Table.Query" && strings.Contains(c.Query.Filter, "email_Bad")
		}, func(context.Context, storetest.Call, func(context.Context) error) error {
			return storetest.ServerBusy()
		}))
		lease := 2 * time.Second
		f := newFixture(t, e, "reapjob", st, xindex.Options{ClaimLease: lease})
		for i, dept := range []string{"Sales", "Eng"} {
			cs.Arm(3, true) // the fence read, the Get of the claim row, then the claim's insert
			if !eventualtest.Survive(func() { _ = f.x.Insert(ctx, emp(dept, i, "Bo", "Lin", "bo@x.com")) }) {
				t.Fatal("no crash")
			}
			f.restart(t)
		}
		if f.bareClaims(t, "Sales") != 1 || f.bareClaims(t, "Eng") != 1 {
			t.Fatalf("claims left: Sales %d, Eng %d; want one each", f.bareClaims(t, "Sales"), f.bareClaims(t, "Eng"))
		}
		job, err := f.x.ReapJob("email", nil, "Sales", "Eng")
		if err != nil {
			t.Fatal(err)
		}
		if want := "xindex/" + f.staff + "/reap/email"; job.Name != want || job.Every != runner.DefaultEvery {
			t.Fatalf("job %s every %s, want %s every runner.DefaultEvery", job.Name, job.Every, want)
		}
		if hourly, err := f.x.ReapJob("email", &xindex.JobOptions{Every: time.Hour}, "Sales"); err != nil || hourly.Every != time.Hour {
			t.Fatalf("JobOptions.Every 1h: every %s, %v", hourly.Every, err)
		}
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if f.bareClaims(t, "Sales") != 1 || f.bareClaims(t, "Eng") != 1 {
			t.Fatal("claims reaped inside their lease")
		}
		e.Pass(lease + 100*time.Millisecond)
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if f.bareClaims(t, "Sales") != 0 || f.bareClaims(t, "Eng") != 0 {
			t.Fatalf("claims left after the job: Sales %d, Eng %d", f.bareClaims(t, "Sales"), f.bareClaims(t, "Eng"))
		}
		// A failing partition is named, and the others are still reaped.
		cs.Arm(3, true)
		if !eventualtest.Survive(func() { _ = f.x.Insert(ctx, emp("Sales", 7, "Cy", "Ng", "cy@x.com")) }) {
			t.Fatal("no crash")
		}
		f.restart(t)
		if n := f.bareClaims(t, "Sales"); n != 1 {
			t.Fatalf("%d claims in Sales, want the crashed write's", n)
		}
		e.Pass(lease + 100*time.Millisecond)
		bad, err := f.x.ReapJob("email", nil, "Bad", "Sales")
		if err != nil {
			t.Fatal(err)
		}
		if err := bad.Run(ctx); !errors.Is(err, store.ErrThrottled) || !strings.Contains(err.Error(), `partition "Bad"`) {
			t.Fatalf("a partition that cannot be read: %v", err)
		}
		if n := f.bareClaims(t, "Sales"); n != 0 {
			t.Fatalf("%d claims left in Sales after a run that failed on Bad", n)
		}

		for _, c := range []struct {
			x     *xindex.Table[Employee]
			index string
			every time.Duration
			pks   []string
			msg   string
		}{
			{nil, "email", time.Minute, []string{"Sales"}, "table is nil"},
			{f.x, "nope", time.Minute, []string{"Sales"}, "nope"},
			{f.x, "email", -time.Second, []string{"Sales"}, "JobOptions.Every -1s is negative"},
			{f.x, "email", time.Minute, nil, "no partition"},
		} {
			if _, err := c.x.ReapJob(c.index, &xindex.JobOptions{Every: c.every}, c.pks...); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("ReapJob(%s, %s, %v): %v, want a refusal naming %q", c.index, c.every, c.pks, err, c.msg)
			}
		}
	})
}
