package model_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestReapClaims: the claims of a write whose transaction's answer was
// lost (it did not apply) stay, since the write may have applied;
// ReapClaims leaves them while they are young and removes them once the
// lease ran out, and leaves the claims of a write that committed (its
// entity holds the values) and every copy.
func TestReapClaims(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		var lose atomic.Bool
		hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			if c.Op == "Table.Transact" && lose.Load() {
				return fmt.Errorf("answer lost: %w", store.ErrUnknownOutcome)
			}
			return do(ctx)
		}
		f := newFixture(t, e, storetest.WrapStore(e.B.Store, hook), []string{fGUnique, fGIndex, fTables})
		f.o.WriteAttempts = 1
		f.restart(t)
		ann := &Employee{Dept: "Sales", ID: "ann", Email: "ann@x", LastName: "Jones"}
		if err := f.m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		lose.Store(true)
		ghost := &Employee{Dept: "Sales", ID: "ghost", Email: "ghost@x", LastName: "Jones"}
		if err := f.m.Insert(ctx, ghost); !errors.Is(err, store.ErrUnknownOutcome) {
			t.Fatalf("insert whose answer was lost: %v", err)
		}
		lose.Store(false)
		// A write that committed and whose copies the engine has not
		// written yet: its claims stay.
		bob := &Employee{Dept: "Ops", ID: "bob", Email: "bob@x", LastName: "Jones"}
		if err := f.m.Insert(ctx, bob); err != nil {
			t.Fatal(err)
		}
		claims := func() int {
			n := 0
			for _, it := range f.itables {
				for row, err := range store.All(ctx, f.raw().Table(it), store.Query{}) {
					if err != nil {
						t.Fatal(err)
					}
					if v, _ := row.Properties["TkVersion"].(int64); v == 0 {
						n++
					}
				}
			}
			return n
		}
		if n := claims(); n != 4 {
			t.Fatalf("%d claims, want ghost's and bob's 4", n)
		}
		if n, err := f.m.ReapClaims(ctx); err != nil || n != 0 {
			t.Fatalf("reap of young claims: %d, %v", n, err)
		}
		if e.Fake() {
			e.Pass(2 * time.Minute)
		} else {
			f.skew.Add(int64(2 * time.Minute))
		}
		if n, err := f.m.ReapClaims(ctx); err != nil || n != 2 {
			t.Fatalf("reap past the lease: %d, %v; want ghost's 2 claims", n, err)
		}
		if n := claims(); n != 2 {
			t.Fatalf("%d claims left, want bob's 2", n)
		}
		if _, err := f.m.Find(ctx, "email", "bob@x"); err != nil {
			t.Fatalf("Find bob: %v", err)
		}
		f.drain(t)
		if r := f.verify(t); r.bad() || r.claimsLeft != 0 {
			t.Fatalf("after the reap and the engine: %s", r)
		}
		if rep, err := f.m.Check(ctx, nil); err != nil || len(rep.Findings) != 0 {
			t.Fatalf("Check: %v, %v", rep, err)
		}
		// The job.
		if _, err := f.m.ReapClaimsJob(&model.JobOptions{Every: -time.Second}); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a negative period: %v", err)
		}
		j, err := f.m.ReapClaimsJob(nil)
		if err != nil || j.Name != "model/"+f.table+"/claims" || j.Run(ctx) != nil {
			t.Fatalf("job %+v, %v", j, err)
		}
	})
}
