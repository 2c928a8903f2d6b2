package model_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/storetest"
)

// counter counts the requests that reach the store, by operation.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) hook(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[call.EntityOp()]++
	c.mu.Unlock()
	return do(ctx)
}

// take returns the counts since the last take, and their total.
func (c *counter) take() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, total := c.n, 0
	for _, v := range n {
		total += v
	}
	c.n = nil
	return n, total
}

// pic is a photo of n bytes that no other seed gives.
func pic(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*seed + i>>8 + seed)
	}
	return b
}

// entityRow reads the stored entity row of (pk, id) past the model.
func (f *fixture) entityRow(t *testing.T, table, pk, id string) (store.Entity, bool) {
	t.Helper()
	row, err := f.raw().Table(table).Get(context.Background(), pk, mustJoin("e", id), nil)
	if store.EntityNotFound(err) {
		return row, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return row, true
}

// ref reads the photo's reference of the entity row of (pk, id).
func (f *fixture) ref(t *testing.T, table, pk, id string) (large.Ref, bool) {
	t.Helper()
	row, ok := f.entityRow(t, table, pk, id)
	s, _ := row.Properties[model.BlobPropertyPrefix+"photo"].(string)
	if !ok || s == "" {
		return large.Ref{}, false
	}
	r, err := large.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r, true
}

// blobNames lists the photos' container.
func (f *fixture) blobNames(t *testing.T) []string {
	t.Helper()
	var out []string
	for marker := ""; ; {
		page, err := f.raw().Container(f.blobs).List(context.Background(), store.BlobListOptions{Marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Blobs {
			out = append(out, b.Name)
		}
		if marker = page.NextMarker; marker == "" {
			return out
		}
	}
}

func (f *fixture) blobExists(t *testing.T, name string) bool {
	t.Helper()
	return slices.Contains(f.blobNames(t), name)
}

// TestBlobRoundTrip writes an entity's photo through every kind of write
// and checks what each leaves: the row holds a reference (never the
// bytes), the copies and the log hold none, a lookup does not fetch the
// photo and ReadBlob does, a Merge without the photo keeps it, a new
// photo or a Replace without it or an empty one or a delete removes the
// old blob once the worker ran, and the requests each costs.
func TestBlobRoundTrip(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		cnt := &counter{}
		f := newFixture(t, e, storetest.WrapStore(e.B.Store, cnt.hook), []string{fBlob, fUnique, fLog})
		photo1, photo2, photo3 := pic(1<<20, 1), pic(300<<10, 2), pic(5000, 3)
		// A first write reads the partition's fence; the engine keeps it.
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "zed", Badge: "b0"}); err != nil {
			t.Fatal(err)
		}
		cnt.take()
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "bob", Badge: "b2"}); err != nil {
			t.Fatal(err)
		}
		plain, plainN := cnt.take()
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", Photo: photo1}); err != nil {
			t.Fatal(err)
		}
		with, withN := cnt.take()
		if withN != plainN+1 || with["Container.Put"] != 1 {
			t.Fatalf("insert with a photo: %v, without: %v: want one request more, the blob's put", with, plain)
		}
		r1, ok := f.ref(t, f.table, "Sales", "ann")
		if !ok || r1.Size != 1<<20 || !strings.HasPrefix(r1.Blob, f.table+"/_Sales/_ann/photo/") {
			t.Fatalf("reference %+v (%v)", r1, ok)
		}
		// Only the entity row names the blob; no row holds the bytes.
		c := filter.PK.Eq("Sales")
		for row, err := range store.All(ctx, f.raw().Table(f.table), store.Query{Filter: c.String()}) {
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range row.Properties {
				if b, ok := v.([]byte); ok && len(b) > 1000 {
					t.Fatalf("row %q holds %d bytes in %s", row.RowKey, len(b), k)
				}
				if strings.HasPrefix(k, model.BlobPropertyPrefix) && row.RowKey != mustJoin("e", "ann") {
					t.Fatalf("row %q (not the entity) holds %s", row.RowKey, k)
				}
			}
		}
		// Lookups do not fetch the photo; ReadBlob does: two requests.
		got, err := f.m.Get(ctx, "Sales", "ann")
		if err != nil || got.Photo != nil || got.Badge != "b1" {
			t.Fatalf("Get: %+v %v", got, err)
		}
		if got, err := f.m.FindIn(ctx, "Sales", "badge", "b1"); err != nil || got.Photo != nil {
			t.Fatalf("FindIn: %+v %v", got, err)
		}
		cnt.take()
		b, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo")
		reads, readN := cnt.take()
		if err != nil || !bytes.Equal(b, photo1) || readN != 2 || reads["Container.Get"] != 1 {
			t.Fatalf("ReadBlob: %d bytes, %v; requests %v", len(b), err, reads)
		}
		if _, err := f.m.ReadBlob(ctx, "Sales", "bob", "photo"); !store.EntityNotFound(err) || !strings.Contains(err.Error(), "has no photo") {
			t.Fatalf("ReadBlob of an entity without a photo: %v", err)
		}
		if _, err := f.m.ReadBlob(ctx, "Sales", "nobody", "photo"); !store.EntityNotFound(err) {
			t.Fatalf("ReadBlob of a missing entity: %v", err)
		}
		// A Merge that does not give the photo keeps it.
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", N: 1}, store.Merge); err != nil {
			t.Fatal(err)
		}
		if r, _ := f.ref(t, f.table, "Sales", "ann"); r != r1 {
			t.Fatalf("a Merge without the photo changed the reference: %+v, was %+v", r, r1)
		}
		f.drain(t)
		if b, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); err != nil || !bytes.Equal(b, photo1) {
			t.Fatalf("after a Merge without the photo: %d bytes, %v", len(b), err)
		}
		// A new photo: a new blob; the old one stays until the worker ran.
		cnt.take()
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", N: 2, Photo: photo2}, store.Merge); err != nil {
			t.Fatal(err)
		}
		upd, _ := cnt.take()
		r2, _ := f.ref(t, f.table, "Sales", "ann")
		if r2.Blob == r1.Blob || upd["Container.Put"] != 1 || !f.blobExists(t, r1.Blob) {
			t.Fatalf("a new photo: %+v over %+v, requests %v, the old blob there: %v", r2, r1, upd, f.blobExists(t, r1.Blob))
		}
		if b, _ := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); !bytes.Equal(b, photo2) {
			t.Fatal("ReadBlob does not read the new photo")
		}
		cnt.take()
		f.drain(t)
		if work, _ := cnt.take(); work["Container.DeleteBlob"] != 1 || f.blobExists(t, r1.Blob) {
			t.Fatalf("the worker: %v; the old blob there: %v", work, f.blobExists(t, r1.Blob))
		}
		// A Replace without the photo removes it.
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", N: 3}, store.Replace); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.ref(t, f.table, "Sales", "ann"); ok {
			t.Fatal("a Replace without the photo kept it")
		}
		if _, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); !store.EntityNotFound(err) {
			t.Fatalf("ReadBlob after the photo's removal: %v", err)
		}
		f.drain(t)
		if n := f.blobNames(t); len(n) != 0 {
			t.Fatalf("blobs left: %v", n)
		}
		// An Upsert gives one; a Merge with an empty photo removes it.
		if err := f.m.Upsert(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", N: 4, Photo: photo3}, store.Merge); err != nil {
			t.Fatal(err)
		}
		r3, ok := f.ref(t, f.table, "Sales", "ann")
		if !ok {
			t.Fatal("Upsert wrote no reference")
		}
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", N: 5, Photo: []byte{}}, store.Merge); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.ref(t, f.table, "Sales", "ann"); ok {
			t.Fatal("a Merge with an empty photo kept it")
		}
		f.drain(t)
		if f.blobExists(t, r3.Blob) {
			t.Fatal("the removed photo's blob is left")
		}
		// A delete removes it after the commit.
		if err := f.m.Upsert(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "b1", N: 6, Photo: photo1}, store.Replace); err != nil {
			t.Fatal(err)
		}
		cnt.take()
		if err := f.m.Delete(ctx, "Sales", "ann", ""); err != nil {
			t.Fatal(err)
		}
		del, _ := cnt.take()
		if len(f.blobNames(t)) != 1 {
			t.Fatal("the blob went before the worker ran")
		}
		f.drain(t)
		if n := f.blobNames(t); len(n) != 0 {
			t.Fatalf("blobs left after the delete: %v", n)
		}
		// The log holds the states, without the photos.
		log, err := f.m.Log(ctx, "Sales", "ann", 20)
		if err != nil || len(log) != 8 || log[0].Op != "delete" || log[1].Entity.Photo != nil || log[1].Entity.N != 6 {
			t.Fatalf("log: %d entries, %v", len(log), err)
		}
		if rep := f.verify(t); rep.bad() || len(rep.orphans) > 0 {
			t.Fatal(rep)
		}
		t.Logf("%s: requests of an insert without a photo %v, with one %v; ReadBlob %v; a Merge with a new photo %v; the delete %v",
			e.B.Name, plain, with, reads, upd, del)
	})
}

// TestBlobBadInput: a photo over Options.MaxBlobSize, or keys too long to
// name its blob, is refused naming the value and the limit before any
// request; Define refuses a blob it cannot keep.
func TestBlobBadInput(t *testing.T) {
	ctx := context.Background()
	e := eventualtest.MemEnv()
	cs := &eventualtest.CrashStore{Store: e.B.Store}
	f := newFixture(t, e, cs, []string{fBlob})
	f.mo.MaxBlobSize = 1024
	f.restart(t)
	for _, c := range []struct {
		e    Employee
		says []string
	}{
		{Employee{Dept: "Sales", ID: "a", Photo: make([]byte, 1025)}, []string{"photo", "1025 bytes", "MaxBlobSize is 1024"}},
		{Employee{Dept: strings.Repeat("k", 1000), ID: "a", Photo: []byte("x")}, []string{"too long to name its blob photo", "the limit is 1024"}},
	} {
		n := cs.Calls()
		for _, write := range []func() error{
			func() error { v := c.e; return f.m.Insert(ctx, &v) },
			func() error { v := c.e; return f.m.Upsert(ctx, &v, store.Merge) },
			func() error { v := c.e; return f.m.Update(ctx, &v, store.Replace) },
		} {
			err := write()
			if !errors.Is(err, store.ErrInvalidInput) || !errors.Is(err, store.ErrTooLarge) {
				t.Fatalf("%.40s: %v, want an error matching ErrInvalidInput and ErrTooLarge", c.e.Dept, err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("%v does not say %q", err, s)
				}
			}
		}
		if cs.Calls() != n {
			t.Fatalf("%d requests made for a refused write", cs.Calls()-n)
		}
	}
	if n := f.blobNames(t); len(n) != 0 {
		t.Fatalf("blobs written: %v", n)
	}
	if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "a", Photo: make([]byte, 1024)}); err != nil {
		t.Fatalf("a photo at the limit: %v", err)
	}
	if _, err := f.m.ReadBlob(ctx, "Sales", "a", "avatar"); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("ReadBlob of an undeclared blob: %v", err)
	}
	type untagged struct {
		PK    string `table:",pk"`
		RK    string `table:",rk"`
		Photo []byte
	}
	type tagged struct {
		PK    string `table:",pk"`
		RK    string `table:",rk"`
		Photo []byte `table:"-"`
	}
	field := func(v *tagged) *[]byte { return &v.Photo }
	for i, c := range []struct {
		define func(table string) error
		says   string
	}{
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng}, model.Blob("photo", f.blobs, func(v *untagged) *[]byte { return &v.Photo }))
			return err
		}, "field Photo is also a property of the row: tag it `table:\"-\"`"},
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng}, model.Blob("bad name", f.blobs, field))
			return err
		}, `blob name "bad name"`},
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng}, model.Blob("photo", "Bad_Container", field))
			return err
		}, "Bad_Container"},
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng}, model.Blob[tagged]("photo", f.blobs, nil))
			return err
		}, "has no field function"},
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng}, model.Blob("photo", f.blobs, field), model.Blob("photo", f.blobs, field))
			return err
		}, "blob photo is declared twice"},
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng, MaxBlobSize: model.MaxBlobSizeLimit + 1}, model.Blob("photo", f.blobs, field))
			return err
		}, "Options.MaxBlobSize"},
		{func(tb string) error {
			_, err := model.Define(f.st, tb, &model.Options{Engine: f.eng, BlobGrace: -time.Second}, model.Blob("photo", f.blobs, field))
			return err
		}, "Options.BlobGrace -1s is negative"},
	} {
		err := c.define(fmt.Sprintf("Refused%d", i))
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("case %d: %v, want a refusal saying %q", i, err, c.says)
		}
	}
}

// TestBlobStale: a write whose commit would come more than BlobGrace/2
// after its blob puts (a sweep may count the blobs as orphans by then)
// fails with ErrBlobStale, writes nothing and removes its blob.
func TestBlobStale(t *testing.T) {
	ctx := context.Background()
	e := eventualtest.MemEnv()
	f := newFixture(t, e, nil, []string{fBlob})
	var calls atomic.Int64
	f.mo.Now = func() time.Time { return e.Now().Add(time.Duration(calls.Add(1)) * 40 * time.Minute) }
	f.restart(t)
	err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "a", Photo: []byte("photo")})
	if !errors.Is(err, model.ErrBlobStale) || errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("a slow write: %v", err)
	}
	if _, ok := f.entityRow(t, f.table, "Sales", "a"); ok {
		t.Fatal("the slow write wrote the entity")
	}
	if n := f.blobNames(t); len(n) != 0 {
		t.Fatalf("the slow write left %v", n)
	}
}

// TestBlobMove: a Move carries the blob itself (the arrival names the
// blob the entity named, ReadBlob reads it in flight and after), is
// refused to a model that does not declare the blob, and the sweep keeps
// a moved blob while the row that names it is one its name does not
// give; the write that replaces it at the destination removes it, and
// the sweep its marker.
func TestBlobMove(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fBlob, fLog})
		arch := f.defineArchive(t, true)
		bare := f.defineArchive(t, false)
		photo1, photo2, photo3 := pic(200<<10, 4), pic(1000, 5), pic(2000, 6)
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "ann", Photo: photo1}); err != nil {
			t.Fatal(err)
		}
		r1, _ := f.ref(t, f.table, "Sales", "ann")
		err := f.m.Move(ctx, "Sales", "ann", bare, "Sales", "")
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "blob photo") {
			t.Fatalf("a move to a model without the blob: %v", err)
		}
		if _, ok := f.entityRow(t, bare.Table(), "Sales", "ann"); ok {
			t.Fatal("the refused move reserved its destination")
		}
		if err := f.m.Move(ctx, "Sales", "ann", arch, "2026", ""); err != nil {
			t.Fatal(err)
		}
		if e.Fake() {
			// In flight, read where it was.
			if b, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); err != nil || !bytes.Equal(b, photo1) {
				t.Fatalf("ReadBlob in flight: %v", err)
			}
		}
		eventualtest.Drain(t, f.e, &f.eng, f.o, f.e.B.Store, f.table, arch.Table())
		if r, ok := f.ref(t, arch.Table(), "2026", "ann"); !ok || r != r1 {
			t.Fatalf("the arrival names %+v, the entity named %+v", r, r1)
		}
		if b, err := arch.ReadBlob(ctx, "2026", "ann", "photo"); err != nil || !bytes.Equal(b, photo1) {
			t.Fatalf("ReadBlob at the destination: %v", err)
		}
		if _, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); !store.EntityNotFound(err) {
			t.Fatalf("ReadBlob at the source after the move: %v", err)
		}
		// A new entity of the same id at the source, with its own photo.
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "ann", Photo: photo2}); err != nil {
			t.Fatal(err)
		}
		rep := f.sweep(t)
		if rep.Moved != 1 || rep.Named != 1 || rep.Removed != 0 || rep.Markers != 1 || len(rep.Orphans) != 0 {
			t.Fatalf("sweep: %s; want the moved blob and the new one kept", rep)
		}
		if b, err := arch.ReadBlob(ctx, "2026", "ann", "photo"); err != nil || !bytes.Equal(b, photo1) {
			t.Fatalf("ReadBlob at the destination after the sweep: %v", err)
		}
		// The destination replaces the moved photo: its old blob goes
		// after the commit, then the sweep removes the marker.
		if err := arch.Update(ctx, &Employee{Dept: "2026", ID: "ann", Photo: photo3}, store.Merge); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, f.e, &f.eng, f.o, f.e.B.Store, f.table, arch.Table())
		if f.blobExists(t, r1.Blob) {
			t.Fatal("the replaced moved blob is left")
		}
		rep = f.sweep(t)
		if rep.MarkersRemoved != 1 || rep.Removed != 0 || rep.Named != 1 {
			t.Fatalf("sweep after the replacement: %s", rep)
		}
		r2, _ := f.ref(t, f.table, "Sales", "ann")
		r3, _ := f.ref(t, arch.Table(), "2026", "ann")
		if got, want := f.blobNames(t), []string{r2.Blob, r3.Blob}; !sameSet(got, want) {
			t.Fatalf("blobs %v, want %v", got, want)
		}
		if b, err := arch.ReadBlob(ctx, "2026", "ann", "photo"); err != nil || !bytes.Equal(b, photo3) {
			t.Fatalf("ReadBlob of the new photo: %v", err)
		}
	})
}

// TestBlobSweepMoveRace: a move that runs entirely between the sweep's
// listing and its read of the entity (the row read no longer names the
// blob; the marker is not in the listing) leaves the blob alone: the
// sweep looks for the marker after the read.
func TestBlobSweepMoveRace(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		var armed atomic.Bool
		var f *fixture
		var arch *model.Model[Employee]
		hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			if c.EntityOp() == "Table.Get" && c.RowKey == mustJoin("e", "ann") && armed.CompareAndSwap(true, false) {
				if err := f.m.Move(ctx, "Sales", "ann", arch, "Sales", ""); err != nil {
					return err
				}
				eventualtest.Drain(t, f.e, &f.eng, f.o, f.e.B.Store, f.table, arch.Table())
			}
			return do(ctx)
		}
		f = newFixture(t, e, storetest.WrapStore(e.B.Store, hook), []string{fBlob})
		arch = f.defineArchive(t, true)
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "ann", Photo: pic(3000, 7)}); err != nil {
			t.Fatal(err)
		}
		r1, _ := f.ref(t, f.table, "Sales", "ann")
		f.pastGrace()
		armed.Store(true)
		rep, err := f.m.SweepBlobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if armed.Load() || rep.Moved != 1 || rep.Removed != 0 || rep.Listed != 1 {
			t.Fatalf("sweep: %s (the move ran: %v)", rep, !armed.Load())
		}
		if r, _ := f.ref(t, arch.Table(), "Sales", "ann"); r != r1 || !f.blobExists(t, r1.Blob) {
			t.Fatalf("the arrival names %+v, the blob is there: %v", r, f.blobExists(t, r1.Blob))
		}
	})
}

// defineArchive defines another model of Employee over a new table on
// the fixture's engine: with the photo in the same container, or without
// it.
func (f *fixture) defineArchive(t *testing.T, photo bool) *model.Model[Employee] {
	t.Helper()
	table := f.e.B.NewTable(t, "Arch")
	feats := []model.Feature[Employee]{model.Log[Employee]()}
	if photo {
		feats = append(feats, model.Blob("photo", f.blobs, func(e *Employee) *[]byte { return &e.Photo }))
	}
	mo := f.mo
	mo.Engine = f.eng
	m, err := model.Define(f.st, table, &mo, feats...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

// TestBlobCheck: Check reports a reference naming a missing blob, or a
// blob of another length; Repair cannot mend it and says so; ReadBlob
// tells the missing blob (ErrBlobMissing, not ErrNotFound) and the
// corrupt one (ErrBlobCorrupt); a new photo mends it.
func TestBlobCheck(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fBlob, fUnique})
		for _, id := range []string{"ann", "bob"} {
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: id, Badge: id, Photo: pic(4000, len(id))}); err != nil {
				t.Fatal(err)
			}
		}
		f.drain(t)
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("check: %v %v", rep, err)
		}
		r, _ := f.ref(t, f.table, "Sales", "ann")
		if err := f.raw().Container(f.blobs).DeleteBlob(ctx, r.Blob, ""); err != nil {
			t.Fatal(err)
		}
		rep, err := f.m.Check(ctx, nil)
		if err != nil || rep.Count(model.DriftBlob) != 1 || len(rep.Findings) != 1 {
			t.Fatalf("check after the blob's removal: %v %v", rep, err)
		}
		fd := rep.Findings[0]
		if fd.Feature != "photo" || fd.Row.RowKey != mustJoin("e", "ann") || !strings.Contains(fd.Detail, r.Blob) || !strings.Contains(fd.Detail, "missing") {
			t.Fatalf("finding %s", fd)
		}
		if _, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); !errors.Is(err, model.ErrBlobMissing) || store.EntityNotFound(err) {
			t.Fatalf("ReadBlob of the missing blob: %v", err)
		}
		rep, err = f.m.Repair(ctx, nil)
		if err != nil || len(rep.Findings) == 0 || rep.Findings[0].Outcome != model.Failed || !errors.Is(rep.Findings[0].Err, model.ErrBlobMissing) || rep.Clean() {
			t.Fatalf("repair: %v %v", rep, err)
		}
		// Another length at the name.
		if _, err := f.raw().Container(f.blobs).Put(ctx, r.Blob, []byte("abc"), nil); err != nil {
			t.Fatal(err)
		}
		rep, err = f.m.Check(ctx, nil)
		if err != nil || rep.Count(model.DriftBlob) != 1 || !strings.Contains(rep.Findings[0].Detail, "holds 3 bytes, the reference records 4000") {
			t.Fatalf("check of a blob of another length: %v %v", rep, err)
		}
		if _, err := f.m.ReadBlob(ctx, "Sales", "ann", "photo"); !errors.Is(err, model.ErrBlobCorrupt) {
			t.Fatalf("ReadBlob of the corrupt blob: %v", err)
		}
		// A new photo mends it.
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "ann", Photo: pic(10, 9)}, store.Merge); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("check after a new photo: %v %v", rep, err)
		}
	})
}

// blobOp is one write of the crash test's entity.
type blobOp struct {
	kind string
	e    Employee
}

// after returns the state op leaves over state p (nil: absent), and
// whether it applies over p at all (an insert over an entity, an update
// or delete of none, are refused).
func (op blobOp) after(p *Employee) (*Employee, bool) {
	e := op.e
	merge := strings.HasSuffix(op.kind, "-merge")
	switch {
	case op.kind == "insert" && p != nil, (op.kind == "delete" || strings.HasPrefix(op.kind, "update")) && p == nil:
		return p, false
	case op.kind == "delete":
		return nil, true
	}
	if merge && e.Photo == nil && p != nil {
		e.Photo = p.Photo
	}
	return &e, true
}

func photoKey(e *Employee) string {
	if e == nil {
		return "absent"
	}
	return fmt.Sprintf("%d/%x", e.N, e.Photo)
}

// TestBlobCrashAtEveryRequest runs one entity through every kind of
// write with a photo (insert, Merges with a new photo, without one and
// with an empty one, Replaces with and without one, an upsert, a delete),
// the worker running after each, and crashes the process before and
// after each request of it in turn (the blob puts, the transaction, the
// queueing, the worker's blob deletes and message delete...), restarting
// and going on with the next write. After the engine drains and the sweep
// runs past the grace period: the entity holds one of the states its
// writes may have left and its reference names a blob that holds exactly
// that photo (lost 0), and no blob is left that no entity names (orphans
// 0).
func TestBlobCrashAtEveryRequest(t *testing.T) {
	ops := []blobOp{
		{"insert", Employee{N: 1, Photo: pic(3000, 11)}},
		{"update-merge", Employee{N: 2, Photo: pic(2000, 12)}},
		{"update-merge", Employee{N: 3}},
		{"update-replace", Employee{N: 4, Photo: pic(1000, 13)}},
		{"update-replace", Employee{N: 5}},
		{"upsert-merge", Employee{N: 6, Photo: pic(1500, 14)}},
		{"update-merge", Employee{N: 7, Photo: []byte{}}},
		{"upsert-replace", Employee{N: 8, Photo: pic(2500, 15)}},
		{"delete", Employee{}},
		{"upsert-merge", Employee{N: 9, Photo: pic(500, 16)}},
	}
	for i := range ops {
		ops[i].e.Dept, ops[i].e.ID = "Sales", "c1"
	}
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		// run plays the writes, crashing at request n (0: never) before or
		// after it; it returns the requests made and the crash points.
		run := func(n int64, after bool) (int64, map[string]int) {
			cs := &eventualtest.CrashStore{Store: e.B.Store}
			f := newFixture(t, e, cs, []string{fBlob, fLog})
			f.o.Concurrency = 1
			f.restart(t)
			cs.Arm(n, after)
			states := []*Employee{nil}
			for _, op := range ops {
				var err error
				crashed := eventualtest.Survive(func() {
					v := op.e
					err = apply(ctx, f, op.kind, &v)
				})
				var next []*Employee
				seen := map[string]bool{}
				add := func(s *Employee) {
					if k := photoKey(s); !seen[k] {
						seen[k] = true
						next = append(next, s)
					}
				}
				switch {
				case crashed:
					for _, p := range states {
						add(p)
						if s, ok := op.after(p); ok {
							add(s)
						}
					}
					f.restart(t)
				case errors.Is(err, partition.ErrDuplicate), errors.Is(err, partition.ErrChanged):
					for _, p := range states {
						if _, ok := op.after(p); !ok {
							add(p)
						}
					}
				case err != nil:
					t.Fatalf("crash at %d (after %v): %s: %v", n, after, op.kind, err)
				default:
					for _, p := range states {
						if s, ok := op.after(p); ok {
							add(s)
						}
					}
				}
				if len(next) == 0 {
					t.Fatalf("crash at %d (after %v): %s answered %v, which no candidate state explains", n, after, op.kind, err)
				}
				states = next
				if eventualtest.Survive(func() { _, _ = f.eng.ProcessOnce(ctx) }) {
					f.restart(t)
				}
			}
			calls := cs.Calls()
			cs.Arm(0, false)
			f.drain(t)
			rep := f.sweep(t)
			v := f.verify(t)
			got, gerr := f.m.Get(ctx, "Sales", "c1")
			ok := false
			for _, s := range states {
				switch {
				case s == nil:
					ok = ok || store.EntityNotFound(gerr)
				case gerr == nil:
					ok = ok || f.holds(t, got, s)
				}
			}
			if v.bad() || len(v.orphans) > 0 || !ok {
				var want []string
				for _, s := range states {
					want = append(want, photoKey(s))
				}
				t.Fatalf("crash at %d (after %v): %s; sweep %s; the entity: %+v (%v), want one of %v", n, after, v, rep, got, gerr, want)
			}
			return calls, cs.Points()
		}
		total, _ := run(0, false)
		step := int64(1)
		if !e.Fake() {
			step = 7 // a sample of the points on the emulator
		}
		points := map[string]int{}
		runs := 0
		for n := int64(1); n <= total; n += step {
			for _, after := range []bool{false, true} {
				_, p := run(n, after)
				runs++
				maps.Copy(points, p)
			}
		}
		names := slices.Sorted(maps.Keys(points))
		for _, want := range []string{"before Blob.Put", "after Blob.Put", "before Table.Transact", "after Table.Transact",
			"before Blob.DeleteBlob", "after Blob.DeleteBlob"} {
			if e.Fake() && !slices.Contains(names, want) {
				t.Fatalf("crash points %v miss %s", names, want)
			}
		}
		t.Logf("%s: %d requests in the run without a crash; %d runs crashing at %d points (%s): lost 0, orphans 0, older-over-newer 0",
			e.B.Name, total, runs, len(names), strings.Join(names, ", "))
	})
}

// TestBlobSweep: a crash between the blob's put and the transaction
// leaves an orphan that the sweep keeps while younger than the grace
// period and removes after; it never removes a blob an entity names, nor
// a name that is not the model's.
func TestBlobSweep(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		cs := &eventualtest.CrashStore{Store: e.B.Store}
		f := newFixture(t, e, cs, []string{fBlob})
		for i := range 3 {
			if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: fmt.Sprint("n", i), Photo: pic(100, i+1)}); err != nil {
				t.Fatal(err)
			}
		}
		cs.Arm(2, false) // the insert's put, then a crash before its transaction
		if !eventualtest.Survive(func() { _ = f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "crashed", Photo: pic(100, 9)}) }) {
			t.Fatal("no crash")
		}
		f.restart(t)
		foreign := f.table + "/notes.txt"
		if _, err := f.raw().Container(f.blobs).Put(ctx, foreign, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		rep, err := f.m.SweepBlobs(ctx)
		if err != nil || rep.Young != 4 || rep.Foreign != 1 || rep.Removed != 0 {
			t.Fatalf("sweep before the grace period: %s %v", rep, err)
		}
		rep = f.sweep(t)
		if len(rep.Orphans) != 1 || !strings.Contains(rep.Orphans[0], "/_crashed/photo/") || rep.Removed != 1 || rep.Named != 3 || rep.Foreign != 1 || rep.EntityReads != 4 {
			t.Fatalf("sweep past the grace period: %s %v", rep, rep.Orphans)
		}
		if v := f.verify(t); v.bad() || len(v.orphans) != 1 || v.orphans[0] != foreign {
			t.Fatalf("after the sweep: %s", v)
		}
		t.Logf("%s: %s", e.B.Name, rep)
	})
}

// TestBlobRunner: NewRunner runs each blob model's sweep as a job of its
// own, and refuses a negative period.
func TestBlobRunner(t *testing.T) {
	e := eventualtest.MemEnv()
	f := newFixture(t, e, nil, []string{fBlob})
	r, err := model.NewRunner(f.eng, []string{f.table}, &model.RunOptions{BlobSweepEvery: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range r.Health().Jobs {
		names = append(names, j.Name)
	}
	if !slices.Contains(names, "model/"+f.table+"/blobs") {
		t.Fatalf("jobs %v", names)
	}
	if _, err := model.NewRunner(f.eng, []string{f.table}, &model.RunOptions{BlobSweepEvery: -time.Second}); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("a negative period: %v", err)
	}
	if _, err := f.m.SweepBlobsJob(&model.JobOptions{Every: -time.Second}); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "JobOptions.Every -1s is negative") {
		t.Fatalf("a negative period: %v", err)
	}
	if j, err := f.m.SweepBlobsJob(nil); err != nil || j.Every != runner.DefaultEvery || j.Name != "model/"+f.table+"/blobs" {
		t.Fatalf("SweepBlobsJob(nil): %s every %s, %v; want every runner.DefaultEvery", j.Name, j.Every, err)
	}
	d, err := model.NewRunner(f.eng, []string{f.table}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if j, ok := d.Health().Job("model/" + f.table + "/blobs"); !ok || j.Every != runner.DefaultEvery {
		t.Fatalf("NewRunner's blob sweep: %+v (found %v), want it every runner.DefaultEvery", j, ok)
	}
}

// Card is a person with a photo the model keeps in a blob.
type Card struct {
	Dept  string `table:",pk"`
	ID    string `table:",rk"`
	Name  string
	Photo []byte `table:"-"` // not a property: in a blob of the container
}

// A photo in a blob: the row holds its reference, a lookup does not fetch
// it, ReadBlob does, a Merge without it keeps it, and the worker removes
// the blob of the photo replaced.
func ExampleBlob() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Cards")
	_ = st.Container("photos").Create(ctx)
	eng, _ := eventual.New(st, "cards", nil)
	_ = eng.Setup(ctx)
	cards, err := model.Define(st, "Cards", &model.Options{Engine: eng},
		model.Blob("photo", "photos", func(c *Card) *[]byte { return &c.Photo }))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = cards.Insert(ctx, &Card{Dept: "Sales", ID: "ann", Name: "Ann", Photo: []byte("first photo")})
	c, _ := cards.Get(ctx, "Sales", "ann")
	fmt.Println(c.Name, c.Photo == nil)
	c.Name = "Anne"
	_ = cards.Update(ctx, c, store.Merge) // the photo stays
	b, _ := cards.ReadBlob(ctx, "Sales", "ann", "photo")
	fmt.Println(string(b))
	c.Photo = []byte("second photo")
	_ = cards.Update(ctx, c, store.Merge)
	_ = eng.Drain(ctx) // the worker removes the first photo's blob
	b, _ = cards.ReadBlob(ctx, "Sales", "ann", "photo")
	page, _ := st.Container("photos").List(ctx, store.BlobListOptions{})
	fmt.Println(string(b), len(page.Blobs))
	// Output:
	// Ann true
	// first photo
	// second photo 1
}
