package large

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Values of every size round-trip, in the entity while they are small and
// in a blob past the threshold or the property limit, compressed or not;
// the entity then holds a reference of the other type than the value.
func TestRoundTripSizes(t *testing.T) {
	const th = DefaultThreshold // bytes as the service counts them: 2 per UTF-16 unit
	sizes := []struct {
		name     string
		body     int // bytes of ASCII text: th/2 of them is exactly the threshold
		scan     int
		bodyBlob bool
		scanBlob bool
	}{
		{"empty", 0, 0, false, false},
		{"just under the threshold", th / 2, th, false, false},
		{"just over the threshold", th/2 + 1, th + 1, true, true},
		{"64 KiB", 64 * 1024, 64 * 1024, true, true},
		{"5 MiB", 5 << 20, 5 << 20, true, true},
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		for _, compress := range []bool{false, true} {
			for i, c := range sizes {
				if compress && c.body > 1<<20 && (b.Short() || raceEnabled) {
					// Past 1 MiB is what matters; gzip of 5 MiB is slow
					// under the race detector and over HTTP.
					c.name, c.body, c.scan = "1 MiB + 1", 1<<20+1, 1<<20+1
				}
				t.Run(fmt.Sprintf("%s/compress=%v", c.name, compress), func(t *testing.T) {
					cnt := newCounting(b.Store)
					s := e.store(t, cnt, Options{Compress: compress})
					id := fmt.Sprintf("d%d-%v", i, compress)
					in := Doc{Folder: "inbox", ID: id, Title: "t " + id, Pages: int32(i),
						Body: text(uint64(i), c.body), Scan: noise(uint64(i), c.scan), Notes: map[string]string{"k": id}}
					if err := s.Put(t.Context(), &in); err != nil {
						t.Fatal(err)
					}
					if in.ETag == "" {
						t.Fatal("Put did not set the ETag")
					}
					puts := cnt.get("blob put")
					cnt.reset()
					out, err := s.Get(t.Context(), "inbox", id)
					if err != nil {
						t.Fatal(err)
					}
					if out.Body != in.Body || !bytes.Equal(out.Scan, in.Scan) || out.Title != in.Title || out.Pages != in.Pages ||
						!reflect.DeepEqual(out.Notes, in.Notes) || out.ETag != in.ETag {
						t.Fatalf("round trip changed the value: body %d/%d bytes, scan %d/%d", len(out.Body), len(in.Body), len(out.Scan), len(in.Scan))
					}
					raw, _ := e.raw(t, "inbox", id)
					checkStored(t, s, &raw, "Body", c.bodyBlob, compress)
					checkStored(t, s, &raw, "Scan", c.scanBlob, false) // noise does not shrink
					wantBlobs := 0
					for _, x := range []bool{c.bodyBlob, c.scanBlob} {
						if x {
							wantBlobs++
						}
					}
					if puts != wantBlobs || cnt.get("blob get") != wantBlobs || cnt.get("get") != 1 {
						t.Fatalf("%d blob puts, %d blob gets, %d point reads; want %d, %d, 1", puts, cnt.get("blob get"), cnt.get("get"), wantBlobs, wantBlobs)
					}
					if size := store.EntitySize(&raw); size > DefaultEntityBudget {
						t.Fatalf("the entity is %d bytes, over the budget %d", size, DefaultEntityBudget)
					}
					t.Logf("%s: body %d B, scan %d B: %d blobs, entity %d B", b.Name, c.body, c.scan, wantBlobs, store.EntitySize(&raw))
				})
			}
		}
		// Every value was replaced or is still referenced: no orphan.
		s := e.store(t, nil, Options{})
		var want []string
		for i := range sizes {
			for _, compress := range []bool{false, true} {
				want = append(want, e.refs(t, s, "inbox", fmt.Sprintf("d%d-%v", i, compress))...)
			}
		}
		if got := e.blobs(t); len(got) != len(want) {
			t.Fatalf("%d blobs in the container, %d referenced", len(got), len(want))
		}
	})
}

// checkStored checks how property prop is stored: a reference of the
// other type (gzip-encoded when compressed is expected) or the value.
func checkStored(t *testing.T, s *Store[Doc], raw *store.Entity, prop string, blob, compressed bool) {
	t.Helper()
	lf := s.byProp[prop]
	x, ok := raw.Properties[prop]
	if !ok {
		if blob {
			t.Fatalf("%s: no property", prop)
		}
		return
	}
	r, isRef, err := refOf(x, lf.Type)
	if err != nil {
		t.Fatalf("%s: %v", prop, err)
	}
	if isRef != blob {
		t.Fatalf("%s: in a blob %v, want %v", prop, isRef, blob)
	}
	if !isRef {
		return
	}
	if got, _ := store.TypeOf(x); got == lf.Type {
		t.Fatalf("%s: the reference is stored as %s, the value's own type", prop, got)
	}
	if (r.Encoding == EncodingGzip) != compressed {
		t.Fatalf("%s: encoding %s, want compressed %v", prop, r.Encoding, compressed)
	}
	p, ok := parseName(s.tableName, r.Blob)
	if !ok || p.prop != prop || p.pk != raw.PartitionKey || p.rk != raw.RowKey {
		t.Fatalf("%s: blob name %q does not name its entity and property (%+v)", prop, r.Blob, p)
	}
}

// Several large values each under the threshold but together over the
// entity budget: the biggest go to blobs until the entity fits.
func TestEntityBudget(t *testing.T) {
	type Wide struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		A  string `table:",large"`
		B  string `table:",large"`
		C  string `table:",large"`
		D  []byte `table:",large"`
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		s, err := New[Wide](b.Store, e.table, e.container, &Options{Threshold: MaxThreshold, EntityBudget: 100_000, Random: seeded()})
		if err != nil {
			t.Fatal(err)
		}
		in := Wide{PK: "p", RK: "r", A: text(1, 30_000), B: text(2, 20_000), C: text(3, 10_000), D: noise(4, 30_000)}
		if err := s.Put(t.Context(), &in); err != nil {
			t.Fatal(err)
		}
		raw, _ := e.raw(t, "p", "r")
		var inBlobs []string
		for _, lf := range s.large {
			if _, isRef, _ := refOf(raw.Properties[lf.Property], lf.Type); isRef {
				inBlobs = append(inBlobs, lf.Property)
			}
		}
		// By the service's count A takes 60,000 bytes, B 40,000, D 30,000
		// and C 20,000: 150,000 in all. Moving A, the biggest, leaves about
		// 90,000, within the budget, so A alone goes to a blob.
		size := store.EntitySize(&raw)
		if size > 100_000 || !slices.Equal(inBlobs, []string{"A"}) {
			t.Fatalf("entity %d bytes, values in blobs %v: want [A] and the entity within 100,000", size, inBlobs)
		}
		out, err := s.Get(t.Context(), "p", "r")
		if err != nil || !reflect.DeepEqual(out, in) {
			t.Fatalf("round trip: %v", err)
		}
		t.Logf("%s: values in blobs %v, entity %d bytes", b.Name, inBlobs, size)
	})
}

// GetFields reads only the blobs of the properties asked for, and leaves
// the others zero.
func TestGetFieldsReadsOnlyTheirBlobs(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		cnt := newCounting(b.Store)
		s := e.store(t, cnt, Options{})
		in := Doc{Folder: "f", ID: "1", Title: "title", Pages: 3, Body: text(1, 100_000), Scan: noise(2, 200_000)}
		if err := s.Insert(t.Context(), &in); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			props []string
			blobs int
		}{
			{nil, 0},
			{[]string{"Title"}, 0},
			{[]string{"Title", "Body"}, 1},
			{[]string{"Scan", "Body", "Pages"}, 2},
		} {
			cnt.reset()
			out, err := s.GetFields(t.Context(), "f", "1", c.props...)
			if err != nil {
				t.Fatal(err)
			}
			want := Doc{Folder: "f", ID: "1", ETag: in.ETag}
			for _, p := range c.props {
				f := reflect.ValueOf(&want).Elem().FieldByName(p)
				f.Set(reflect.ValueOf(in).FieldByName(p))
			}
			if !reflect.DeepEqual(out, want) {
				t.Fatalf("GetFields(%v): got title %q pages %d body %d scan %d", c.props, out.Title, out.Pages, len(out.Body), len(out.Scan))
			}
			if cnt.get("blob get") != c.blobs || cnt.get("get") != 1 {
				t.Fatalf("GetFields(%v): %d blob reads and %d point reads, want %d and 1", c.props, cnt.get("blob get"), cnt.get("get"), c.blobs)
			}
		}
		if _, err := s.GetFields(t.Context(), "f", "1", "Nope"); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"Nope"`) {
			t.Fatalf("an unknown property: %v", err)
		}
	})
}

// A blob deleted behind the package's back is a typed error naming the
// entity, the property and the blob, never a zero value; the other
// properties can still be read. A blob whose content changed is another.
func TestMissingAndCorruptBlobs(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		s := e.store(t, nil, Options{Compress: true})
		in := Doc{Folder: "f", ID: "1", Title: "kept", Body: text(1, 100_000), Scan: noise(2, 100_000)}
		if err := s.Put(t.Context(), &in); err != nil {
			t.Fatal(err)
		}
		raw, _ := e.raw(t, "f", "1")
		refs := map[string]Ref{}
		for _, r := range s.refsOf(&raw) {
			p, _ := parseName(s.tableName, r.Blob)
			refs[p.prop] = r
		}
		c := b.Store.Container(e.container)
		if err := c.DeleteBlob(t.Context(), refs["Body"].Blob, ""); err != nil {
			t.Fatal(err)
		}
		_, err := s.Get(t.Context(), "f", "1")
		var be *BlobError
		if !errors.As(err, &be) || !errors.Is(err, ErrMissingBlob) || errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get with a missing blob: %v", err)
		}
		if be.PartitionKey != "f" || be.RowKey != "1" || be.Property != "Body" || be.Blob != refs["Body"].Blob ||
			!strings.Contains(err.Error(), refs["Body"].Blob) || !strings.Contains(err.Error(), "Body") {
			t.Fatalf("the error does not name the entity, property and blob: %+v", be)
		}
		t.Logf("%s: %v", b.Name, err)
		if got, err := s.GetFields(t.Context(), "f", "1", "Title", "Scan"); err != nil || got.Title != "kept" || !bytes.Equal(got.Scan, in.Scan) {
			t.Fatalf("the other properties: %v", err)
		}
		// Another value under the Scan blob's name.
		if _, err := c.Put(t.Context(), refs["Scan"].Blob, noise(3, 100_000), nil); err != nil {
			t.Fatal(err)
		}
		_, err = s.GetFields(t.Context(), "f", "1", "Scan")
		if !errors.As(err, &be) || !errors.Is(err, ErrCorruptBlob) || be.Property != "Scan" {
			t.Fatalf("Get with a changed blob: %v", err)
		}
		t.Logf("%s: %v", b.Name, err)
	})
}

// Insert, conditional Update and Delete keep exactly the blobs the
// stored entity references.
func TestWritesKeepOnlyReferencedBlobs(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		s := e.store(t, nil, Options{})
		ctx := t.Context()
		d := Doc{Folder: "f", ID: "1", Body: text(1, 50_000), Scan: noise(1, 70_000)}
		if err := s.Insert(ctx, &d); err != nil {
			t.Fatal(err)
		}
		again := Doc{Folder: "f", ID: "1"}
		if err := s.Insert(ctx, &again); !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("a second insert: %v", err)
		}
		stale := d
		check := func(step string, n int) {
			t.Helper()
			refs := e.refs(t, s, "f", "1")
			blobs := e.blobs(t)
			slices.Sort(blobs)
			if len(refs) != n || !slices.Equal(refs, blobs) {
				t.Fatalf("after %s: blobs %v, references %v, want %d", step, blobs, refs, n)
			}
		}
		check("insert", 2)
		d.Body = "small now"
		if err := s.Update(ctx, &d); err != nil {
			t.Fatal(err)
		}
		check("update to a small body", 1)
		stale.Title = "stale"
		if err := s.Update(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("an update with a stale ETag: %v", err)
		}
		check("a refused update", 1)
		if err := s.Update(ctx, &Doc{Folder: "f", ID: "1"}); !errors.Is(err, mapper.ErrNoETag) {
			t.Fatalf("an update without an ETag: %v", err)
		}
		d.Scan = noise(2, 300_000)
		if err := s.Put(ctx, &Doc{Folder: "f", ID: "1", ETag: "ignored", Body: text(5, 40_000), Scan: d.Scan}); err != nil {
			t.Fatal(err)
		}
		check("put", 2)
		if err := s.Delete(ctx, &d); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("a delete with a stale ETag: %v", err)
		}
		got, err := s.GetFields(ctx, "f", "1")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, &got); err != nil {
			t.Fatal(err)
		}
		check("delete", 0)
		if _, err := s.Get(ctx, "f", "1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a deleted entity: %v", err)
		}
		if err := s.DeleteKey(ctx, "f", "1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DeleteKey of a missing entity: %v", err)
		}
	})
}

// Keys of any characters the service takes name their blobs, and the
// sweeper reads the keys back from the names: punctuation, spaces, dots,
// the empty key, non-ASCII letters.
func TestKeysOfAnyCharacter(t *testing.T) {
	keys := []string{"", ".", "..", "a.b.", "Zoë & Ünïcødé 名前", "~%20 'q' \"x\" +=;:,!@$^&*()[]{}<>|`", "emoji 😀 text", "tab-less_key-9"}
	for _, k := range keys {
		p, ok := parseName("Docs", blobName("Docs", k, k+"r", "Body", "01ID"))
		if !ok || p.pk != k || p.rk != k+"r" || p.prop != "Body" || p.id != "01ID" {
			t.Fatalf("key %q: parsed back as %+v (%v)", k, p, ok)
		}
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		s := e.store(t, nil, Options{})
		for i, k := range keys {
			in := Doc{Folder: k, ID: k, Body: text(uint64(i), 40_000)}
			if err := s.Put(t.Context(), &in); err != nil {
				t.Fatalf("key %q: %v", k, err)
			}
			out, err := s.Get(t.Context(), k, k)
			if err != nil || out.Body != in.Body {
				t.Fatalf("key %q: %v", k, err)
			}
		}
		rep, err := e.later(t).Sweep(t.Context(), SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Referenced != len(keys) || rep.Removed != 0 || rep.Foreign != 0 {
			t.Fatalf("the sweeper did not find every entity from its blob names: %v", rep)
		}
	})
}
