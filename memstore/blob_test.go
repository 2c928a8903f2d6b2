package memstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/store"
)

func newTestContainer(t *testing.T) (store.Container, *testClock) {
	t.Helper()
	clock := newTestClock()
	c := newBlobService(clock.tick).container("docs")
	if err := c.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, clock
}

func putBlob(t *testing.T, c store.Container, name, data string, opts *store.BlobPutOptions) store.BlobProps {
	t.Helper()
	p, err := c.Put(context.Background(), name, []byte(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestContainerNamesAndMissing(t *testing.T) {
	ctx := context.Background()
	svc := newBlobService(newTestClock().tick)
	wantCode(t, svc.container("Docs").Create(ctx), store.CodeInvalidResourceName, 400)
	wantCode(t, svc.container("do").Create(ctx), store.CodeOutOfRangeInput, 400)
	wantCode(t, svc.container("a--b").Create(ctx), store.CodeInvalidResourceName, 400)

	c := svc.container("missing")
	if c.Name() != "missing" {
		t.Fatalf("Name = %q", c.Name())
	}
	errs := map[string]error{"Delete": c.Delete(ctx), "DeleteBlob": c.DeleteBlob(ctx, "b", "")}
	_, errs["Put"] = c.Put(ctx, "b", nil, nil)
	_, _, errs["Get"] = c.Get(ctx, "b")
	_, errs["List"] = c.List(ctx, store.BlobListOptions{})
	for op, err := range errs {
		t.Run(op, func(t *testing.T) {
			wantCode(t, err, store.CodeContainerNotFound, 404)
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%v is not ErrNotFound", err)
			}
		})
	}
}

func TestContainerCreateDelete(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	putBlob(t, c, "a", "1", nil)
	if err := c.Create(ctx); err != nil {
		t.Fatalf("second Create = %v, want nil", err)
	}
	if _, _, err := c.Get(ctx, "a"); err != nil {
		t.Fatalf("Create dropped a blob: %v", err)
	}
	if err := c.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.Get(ctx, "a")
	wantCode(t, err, store.CodeContainerNotFound, 404)
	wantCode(t, c.Delete(ctx), store.CodeContainerNotFound, 404)
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "a"); !errors.Is(err, store.ErrNotFound) || store.Code(err) != store.CodeBlobNotFound {
		t.Fatalf("re-created container still has the blob: %v", err)
	}
}

func TestBlobPutGet(t *testing.T) {
	ctx := context.Background()
	c, clock := newTestContainer(t)
	p1 := putBlob(t, c, "dir/a.json", "hello", nil)
	if p1.Name != "dir/a.json" || p1.Size != 5 || !p1.LastModified.Equal(clock.now()) {
		t.Fatalf("props %+v: want name, size 5, LastModified from the clock %v", p1, clock.now())
	}
	if len(p1.ETag) < 3 || p1.ETag[0] != '"' || p1.ETag[len(p1.ETag)-1] != '"' {
		t.Fatalf("ETag %s is not quoted", p1.ETag)
	}
	data, p, err := c.Get(ctx, "dir/a.json")
	if err != nil || string(data) != "hello" || p != p1 {
		t.Fatalf("Get = %q, %+v, %v; want hello, %+v", data, p, err, p1)
	}
	p2 := putBlob(t, c, "dir/a.json", "hello", nil)
	if p2.ETag == p1.ETag {
		t.Fatal("an identical rewrite kept the ETag: every write must change it")
	}
	_, _, err = c.Get(ctx, "dir/b.json")
	wantCode(t, err, store.CodeBlobNotFound, 404)
}

func TestBlobDataCopied(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	in := []byte("abc")
	if _, err := c.Put(ctx, "b", in, nil); err != nil {
		t.Fatal(err)
	}
	in[0] = 'X'
	out, _, _ := c.Get(ctx, "b")
	out[1] = 'Y'
	again, _, _ := c.Get(ctx, "b")
	if string(again) != "abc" {
		t.Fatalf("stored data = %q: callers' slices reach the store", again)
	}
}

func TestBlobConditionalPut(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	create := &store.BlobPutOptions{IfNoneMatchAny: true}
	p := putBlob(t, c, "lock", "v1", create)

	_, err := c.Put(ctx, "lock", []byte("v2"), create)
	wantCode(t, err, store.CodeBlobAlreadyExists, 409)
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("%v is not ErrPreconditionFailed", err)
	}

	p2 := putBlob(t, c, "lock", "v2", &store.BlobPutOptions{IfMatch: p.ETag})
	_, err = c.Put(ctx, "lock", []byte("v3"), &store.BlobPutOptions{IfMatch: p.ETag})
	wantCode(t, err, store.CodeConditionNotMet, 412)
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("%v is not ErrPreconditionFailed", err)
	}
	if data, _, _ := c.Get(ctx, "lock"); string(data) != "v2" {
		t.Fatalf("a refused write changed the blob to %q", data)
	}
	// The service accepts the ETag without its quotes.
	bare := store.ETag(strings.Trim(string(p2.ETag), `"`))
	p3 := putBlob(t, c, "lock", "v3", &store.BlobPutOptions{IfMatch: bare})
	// "*" matches any existing blob.
	putBlob(t, c, "lock", "v4", &store.BlobPutOptions{IfMatch: store.ETagAny})

	for _, cond := range []store.ETag{p3.ETag, store.ETagAny} {
		_, err = c.Put(ctx, "absent", []byte("x"), &store.BlobPutOptions{IfMatch: cond})
		wantCode(t, err, store.CodeConditionNotMet, 412)
	}
	if _, _, err := c.Get(ctx, "absent"); store.Code(err) != store.CodeBlobNotFound {
		t.Fatalf("a refused conditional write created the blob: %v", err)
	}
}

// Many writers racing to create the same blob: exactly one wins.
func TestBlobCreateRace(t *testing.T) {
	c, _ := newTestContainer(t)
	var wins, losses atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			_, err := c.Put(context.Background(), "leader", []byte("me"), &store.BlobPutOptions{IfNoneMatchAny: true})
			switch store.Code(err) {
			case "":
				wins.Add(1)
			case store.CodeBlobAlreadyExists:
				losses.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || losses.Load() != 15 {
		t.Fatalf("%d wins and %d losses, want 1 and 15", wins.Load(), losses.Load())
	}
}

func TestBlobDelete(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	p := putBlob(t, c, "b", "1", nil)
	putBlob(t, c, "b", "2", nil)
	wantCode(t, c.DeleteBlob(ctx, "b", p.ETag), store.CodeConditionNotMet, 412)
	_, cur, _ := c.Get(ctx, "b")
	if err := c.DeleteBlob(ctx, "b", cur.ETag); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.DeleteBlob(ctx, "b", ""), store.CodeBlobNotFound, 404)
	wantCode(t, c.DeleteBlob(ctx, "b", cur.ETag), store.CodeConditionNotMet, 412)
	putBlob(t, c, "b", "3", nil)
	if err := c.DeleteBlob(ctx, "b", ""); err != nil {
		t.Fatalf("unconditional delete: %v", err)
	}
	if page, _ := c.List(ctx, store.BlobListOptions{}); len(page.Blobs) != 0 {
		t.Fatalf("deleted blob still listed: %+v", page.Blobs)
	}
}

func TestBlobNames(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	for _, tc := range []struct {
		what, name, code string
	}{
		{"empty", "", store.CodeOutOfRangeInput},
		{"1025 characters", strings.Repeat("a", 1025), store.CodeOutOfRangeInput},
		{"513 characters beyond the BMP (1026 UTF-16 units)", strings.Repeat("😀", 513), store.CodeOutOfRangeInput},
		{"255 path segments", strings.Repeat("a/", 254) + "a", store.CodeOutOfRangeInput},
		{"invalid UTF-8", "a\xffb", store.CodeInvalidResourceName},
	} {
		t.Run(tc.what, func(t *testing.T) {
			_, err := c.Put(ctx, tc.name, []byte("x"), nil)
			wantCode(t, err, tc.code, 400)
			_, _, err = c.Get(ctx, tc.name)
			wantCode(t, err, tc.code, 400)
		})
	}
	for _, ok := range []string{"a", strings.Repeat("a", 1024), strings.Repeat("a/", 253) + "a", "spaces and ünïcode.txt"} {
		if _, err := c.Put(ctx, ok, []byte("x"), nil); err != nil {
			t.Errorf("Put(%.20q) = %v", ok, err)
		}
	}
}

func listAll(t *testing.T, c store.Container, prefix string, max int) (names []string, pages int) {
	t.Helper()
	marker := ""
	for {
		page, err := c.List(context.Background(), store.BlobListOptions{Prefix: prefix, MaxResults: max, Marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if max > 0 && len(page.Blobs) > max {
			t.Fatalf("page of %d blobs exceeds MaxResults %d", len(page.Blobs), max)
		}
		for _, b := range page.Blobs {
			names = append(names, b.Name)
		}
		if page.NextMarker == "" {
			return names, pages
		}
		marker = page.NextMarker
	}
}

func TestBlobList(t *testing.T) {
	c, _ := newTestContainer(t)
	all := []string{"b/2", "a", "b/10", "b/1", "B", "b-", "bz", "é", "b/1/x"}
	for _, n := range all {
		putBlob(t, c, n, n, nil)
	}
	want := slices.Clone(all)
	slices.Sort(want) // ordinal byte order
	got, pages := listAll(t, c, "", 0)
	if !slices.Equal(got, want) || pages != 1 {
		t.Fatalf("List = %q in %d pages, want %q in 1", got, pages, want)
	}
	got, pages = listAll(t, c, "b/", 2)
	if w := []string{"b/1", "b/1/x", "b/10", "b/2"}; !slices.Equal(got, w) || pages != 2 {
		t.Fatalf("List(prefix b/, 2 a page) = %q in %d pages, want %q in 2", got, pages, w)
	}
	got, _ = listAll(t, c, "", 1)
	if !slices.Equal(got, want) {
		t.Fatalf("one-a-page listing = %q, want %q", got, want)
	}
	if got, _ := listAll(t, c, "nothing", 0); len(got) != 0 {
		t.Fatalf("List(prefix nothing) = %q", got)
	}
	if page, _ := c.List(context.Background(), store.BlobListOptions{MaxResults: 1_000_000}); len(page.Blobs) != len(all) {
		t.Fatalf("MaxResults over 5000 is capped, not refused: got %d blobs", len(page.Blobs))
	}
}

func TestBlobListResumesAcrossWrites(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	for _, n := range []string{"a", "c", "e", "g"} {
		putBlob(t, c, n, n, nil)
	}
	page, err := c.List(ctx, store.BlobListOptions{MaxResults: 2})
	if err != nil || page.NextMarker == "" {
		t.Fatalf("first page %+v, %v: want a marker", page, err)
	}
	// Between pages: delete the blob the marker points at, add before and after.
	if err := c.DeleteBlob(ctx, "e", ""); err != nil {
		t.Fatal(err)
	}
	putBlob(t, c, "b", "b", nil)
	putBlob(t, c, "f", "f", nil)
	page, err = c.List(ctx, store.BlobListOptions{MaxResults: 10, Marker: page.NextMarker})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range page.Blobs {
		got = append(got, b.Name)
	}
	if !slices.Equal(got, []string{"f", "g"}) || page.NextMarker != "" {
		t.Fatalf("second page = %q (marker %q), want [f g] and no marker", got, page.NextMarker)
	}
}

func TestBlobListBadOptions(t *testing.T) {
	ctx := context.Background()
	c, _ := newTestContainer(t)
	_, err := c.List(ctx, store.BlobListOptions{MaxResults: -1})
	wantCode(t, err, store.CodeOutOfRangeQueryParameterValue, 400)
	for _, m := range []string{"garbage", "1!***", "2!YQ"} {
		_, err = c.List(ctx, store.BlobListOptions{Marker: m})
		wantCode(t, err, store.CodeInvalidQueryParameterValue, 400)
	}
}
