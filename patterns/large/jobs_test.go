package large

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// TestSweepJob: the job sweeps with its options and hands each report
// over; with MaxBlobs each run goes on where the last stopped, and the
// next pass starts over; bad input is refused.
func TestSweepJob(t *testing.T) {
	b := backendtest.Memstore()
	e := newEnv(t, b)
	ctx := t.Context()
	s := e.store(t, nil, Options{})
	if err := s.Put(ctx, bigDoc("a", "v", 40_000, 70_000)); err != nil {
		t.Fatal(err)
	}
	referenced := len(e.blobs(t))
	// More orphans than one listing page (5,000), as crashed writes of
	// one entity would leave them.
	c := b.Store.Container(e.container)
	const orphans = store.MaxBlobListResults + 1
	for i := range orphans {
		if _, err := c.Put(ctx, blobName(e.table, "b", "d", "Body", fmt.Sprintf("orphan%05d", i)), []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	var reports []SweepReport
	job, err := e.later(t).SweepJob(&JobOptions{Every: time.Hour, Sweep: SweepOptions{MaxBlobs: 1}, Report: func(r SweepReport) { reports = append(reports, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "large/"+e.table+"/sweep" || job.Every != time.Hour {
		t.Fatalf("job %s every %s", job.Name, job.Every)
	}
	for range 2 {
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The first run stopped after the first page; the second went on
	// from there to the end.
	if len(reports) != 2 || reports[0].Listed != store.MaxBlobListResults || reports[0].Marker == "" ||
		reports[1].Listed != referenced+orphans-store.MaxBlobListResults || reports[1].Marker != "" {
		t.Fatalf("reports %v / %v", reports[0], reports[1])
	}
	if removed := reports[0].Removed + reports[1].Removed; removed != orphans || len(e.blobs(t)) != referenced {
		t.Fatalf("removed %d of %d orphans; %d blobs left, want %d", removed, orphans, len(e.blobs(t)), referenced)
	}
	// The next pass starts over.
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if r := reports[2]; r.Listed != referenced || r.Referenced != referenced || r.Removed != 0 {
		t.Fatalf("a new pass: %v", r)
	}
	if _, err := s.Get(ctx, "a", "d"); err != nil {
		t.Fatalf("the entity after the sweeps: %v", err)
	}
	if def, err := s.SweepJob(nil); err != nil || def.Every != runner.DefaultEvery {
		t.Fatalf("SweepJob(nil): every %s, %v; want runner.DefaultEvery", def.Every, err)
	}

	for _, c := range []struct {
		s     *Store[Doc]
		every time.Duration
		o     SweepOptions
		msg   string
	}{
		{nil, time.Hour, SweepOptions{}, "store is nil"},
		{s, -time.Second, SweepOptions{}, "JobOptions.Every -1s is negative"},
		{s, time.Hour, SweepOptions{MaxBlobs: -1}, "MaxBlobs -1"},
		{s, time.Hour, SweepOptions{Marker: "m"}, "its own marker"},
		{s, time.Hour, SweepOptions{MaxBlobs: 1, Partitions: []string{"a"}}, "Partitions"},
	} {
		if _, err := c.s.SweepJob(&JobOptions{Every: c.every, Sweep: c.o}); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("SweepJob(%s, %+v): %v, want a refusal naming %q", c.every, c.o, err, c.msg)
		}
	}
}
