package large

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// The sweeper removes exactly the unreferenced blobs older than the grace
// period: a dry run only reports them; young orphans and referenced blobs
// stay; blobs whose names are not the package's stay; a partition scope
// and a page limit cover the rest in parts.
func TestSweep(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		ctx := t.Context()
		s := e.store(t, nil, Options{})
		c := b.Store.Container(e.container)
		// Three entities with blobs; orphans made by hand as a crash
		// would leave them: a blob put whose entity write never came.
		var orphans []string
		for i, pk := range []string{"a", "b", "c"} {
			d := bigDoc(pk, "v", 40_000, 70_000)
			if err := s.Put(ctx, d); err != nil {
				t.Fatal(err)
			}
			for j := range i + 1 {
				name := blobName(e.table, pk, "d", "Body", fmt.Sprintf("orphan%d", j))
				if _, err := c.Put(ctx, name, []byte("left behind"), &store.BlobPutOptions{IfNoneMatchAny: true}); err != nil {
					t.Fatal(err)
				}
				orphans = append(orphans, name)
			}
		}
		// An entity deleted outside the package: its blobs are orphans.
		if err := s.Put(ctx, bigDoc("gone", "v", 40_000, 10)); err != nil {
			t.Fatal(err)
		}
		orphans = append(orphans, e.refs(t, s, "gone", "d")...)
		if err := b.Store.Table(e.table).Delete(ctx, "gone", "d", store.ETagAny); err != nil {
			t.Fatal(err)
		}
		// Not the package's: another table's prefix, a name out of layout.
		for _, n := range []string{"other/x", e.table + "/loose-file"} {
			if _, err := c.Put(ctx, n, []byte("x"), nil); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(orphans)
		referenced := 6

		young, err := s.Sweep(ctx, SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, within the grace period: %v", b.Name, young)
		if young.Removed != 0 || len(young.Orphans) != 0 || young.Young != referenced+len(orphans) || young.Foreign != 1 || young.EntityReads != 0 {
			t.Fatalf("a sweep within the grace period: %+v", young)
		}

		later := e.later(t)
		dry, err := later.Sweep(ctx, SweepOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, dry run: %v", b.Name, dry)
		slices.Sort(dry.Orphans)
		if !slices.Equal(dry.Orphans, orphans) || dry.Removed != 0 || dry.Referenced != referenced || dry.EntityReads != 4 {
			t.Fatalf("dry run: %+v, want orphans %v", dry, orphans)
		}
		if n := len(e.blobs(t)); n != referenced+len(orphans)+2 {
			t.Fatalf("a dry run removed blobs: %d left", n)
		}

		// One partition only.
		part, err := later.Sweep(ctx, SweepOptions{Partitions: []string{"b"}})
		if err != nil {
			t.Fatal(err)
		}
		if part.Removed != 2 || part.Referenced != 2 || part.Listed != 4 {
			t.Fatalf("sweep of partition b: %+v", part)
		}
		// The rest, a page of 3 at a time.
		var total SweepReport
		marker := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("the sweep does not end")
			}
			r, err := later.Sweep(ctx, SweepOptions{MaxBlobs: 3, Marker: marker})
			if err != nil {
				t.Fatal(err)
			}
			total.Removed += r.Removed
			total.Listed += r.Listed
			if marker = r.Marker; marker == "" {
				break
			}
		}
		left := e.blobs(t)
		t.Logf("%s: after the sweeps %d blobs left: %v", b.Name, len(left), left)
		if total.Removed != len(orphans)-2 || len(left) != referenced+2 {
			t.Fatalf("paged sweep removed %d, %d blobs left", total.Removed, len(left))
		}
		for _, pk := range []string{"a", "b", "c"} {
			if _, err := s.Get(ctx, pk, "d"); err != nil {
				t.Fatalf("entity %s after the sweep: %v", pk, err)
			}
		}
		if _, err := later.Sweep(ctx, SweepOptions{Partitions: []string{"a"}, MaxBlobs: 1}); err == nil {
			t.Fatal("Partitions with MaxBlobs was accepted")
		}
	})
}

// A write whose blob puts took longer than half the grace period writes
// them again under new names before it commits, so that a sweep that saw
// the first ones as old orphans cannot have removed a blob the entity
// references.
func TestSlowWriteRenewsItsBlobs(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		var offset time.Duration
		now := func() time.Time { return time.Now().Add(offset) }
		cnt := newCounting(b.Store)
		s := e.store(t, cnt, Options{Now: now, Grace: time.Hour})
		if err := s.Put(t.Context(), bigDoc("p", "old", 40_000, 10)); err != nil {
			t.Fatal(err)
		}
		// A concurrent writer commits after this write put its blobs and
		// before its entity write, which then fails and tries again, 40
		// minutes later by the clock.
		other := e.store(t, nil, Options{})
		slow := &slowTable{before: func() {
			offset = 40 * time.Minute
			if err := other.Put(context.Background(), bigDoc("p", "theirs", 40_000, 10)); err != nil {
				t.Error(err)
			}
		}}
		s.table = slow.wrap(cnt.Table(e.table))
		cnt.reset()
		mine := bigDoc("p", "mine", 50_000, 10)
		if err := s.Put(t.Context(), mine); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(t.Context(), "p", "d")
		if err != nil || !same(&got, mine) {
			t.Fatalf("after the slow write: %v", err)
		}
		if cnt.get("blob put") != 2 || cnt.get("blob delete") != 2 {
			t.Fatalf("%d blob puts and %d deletes: want the blob written twice, the first and the old version's removed", cnt.get("blob put"), cnt.get("blob delete"))
		}
		if refs, blobs := e.refs(t, s, "p", "d"), e.blobs(t); len(refs) != 1 || len(blobs) != 1 || refs[0] != blobs[0] {
			t.Fatalf("blobs %v, references %v", blobs, refs)
		}
	})
}

// slowTable runs before once, before the first entity update (in either
// lane).
type slowTable struct {
	before func()
	done   bool
}

func (s *slowTable) wrap(t store.Table) store.Table {
	return storetest.WrapTable(t, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if op, _ := opName(c); op == "update" && !s.done {
			s.done = true
			s.before()
		}
		return do(ctx)
	})
}

// Another kind of entity in the same table whose large property has the
// same name and the other type: the sweeper of one type tells its blobs'
// references by their text, so it never takes them for orphans.
func TestSweepKeepsOtherKindsBlobs(t *testing.T) {
	type Attachment struct {
		Folder string `table:",pk"`
		ID     string `table:",rk"`
		Body   []byte `table:",large"` // Doc.Body is a string
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		ctx := t.Context()
		docs := e.store(t, nil, Options{})
		atts, err := New[Attachment](b.Store, e.table, e.container, &Options{Random: seeded()})
		if err != nil {
			t.Fatal(err)
		}
		if err := docs.Put(ctx, bigDoc("f", "doc", 40_000, 10)); err != nil {
			t.Fatal(err)
		}
		if err := atts.Put(ctx, &Attachment{Folder: "f", ID: "att", Body: noise(1, 100_000)}); err != nil {
			t.Fatal(err)
		}
		rep, err := e.later(t).Sweep(ctx, SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Referenced != 2 || rep.Removed != 0 {
			t.Fatalf("sweep by the documents' store: %v", rep)
		}
		if got, err := atts.Get(ctx, "f", "att"); err != nil || len(got.Body) != 100_000 {
			t.Fatalf("the attachment after the sweep: %v", err)
		}
	})
}
