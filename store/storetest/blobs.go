package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// newContainer makes a store and a blob container of its own for one subtest.
func (s *suite) newContainer(t *testing.T) store.Container {
	t.Helper()
	c := s.h.New(t).Container(s.names.next())
	must(t, c.Create(t.Context()), "Container.Create")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Delete(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("cleanup: delete container %s: %v", c.Name(), err)
		}
	})
	return c
}

// mustPut writes a blob unconditionally.
func mustPut(t testing.TB, c store.Container, name string, data []byte) store.BlobProps {
	t.Helper()
	p, err := c.Put(t.Context(), name, data, nil)
	if err != nil {
		t.Fatalf("Put(%q): %v", name, err)
	}
	if p.ETag == "" {
		t.Fatalf("Put(%q) returned no ETag", name)
	}
	return p
}

// wantBlob checks a blob's content and ETag.
func wantBlob(t testing.TB, c store.Container, name string, data []byte, tag store.ETag) {
	t.Helper()
	got, p, err := c.Get(t.Context(), name)
	if err != nil {
		t.Errorf("Get(%q): %v", name, err)
		return
	}
	if !bytes.Equal(got, data) || p.ETag != tag || p.Size != int64(len(data)) {
		t.Errorf("Get(%q) = %q (ETag %s, Size %d), want %q (ETag %s, Size %d)", name, got, p.ETag, p.Size, data, tag, len(data))
	}
}

// blobs proves the blob semantics the large-entity patterns use.
func (s *suite) blobs(t *testing.T) {
	s.run(t, "PutGetDelete", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		p := mustPut(t, c, "a/b.bin", []byte{0, 1, 2})
		if p.Name != "a/b.bin" || p.Size != 3 || p.LastModified.IsZero() {
			t.Errorf("Put returned %+v", p)
		}
		wantBlob(t, c, "a/b.bin", []byte{0, 1, 2}, p.ETag)
		p2 := mustPut(t, c, "a/b.bin", []byte("new"))
		if p2.ETag == p.ETag {
			t.Errorf("overwrite kept ETag %s", p.ETag)
		}
		wantBlob(t, c, "a/b.bin", []byte("new"), p2.ETag)
		empty := mustPut(t, c, "empty", nil)
		wantBlob(t, c, "empty", []byte{}, empty.ETag)
		must(t, c.DeleteBlob(ctx, "a/b.bin", ""), "DeleteBlob")
		_, _, err := c.Get(ctx, "a/b.bin")
		wantErr(t, err, store.CodeBlobNotFound, 404, noIndex)
		err = c.DeleteBlob(ctx, "a/b.bin", "")
		wantErr(t, err, store.CodeBlobNotFound, 404, noIndex)
	})

	s.run(t, "IfMatch_ConditionNotMet", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		old := mustPut(t, c, "x", []byte("v1"))
		cur, err := c.Put(ctx, "x", []byte("v2"), &store.BlobPutOptions{IfMatch: old.ETag})
		must(t, err, "Put with the current ETag")
		_, err = c.Put(ctx, "x", []byte("lost"), &store.BlobPutOptions{IfMatch: old.ETag})
		wantErr(t, err, store.CodeConditionNotMet, 412, noIndex)
		err = c.DeleteBlob(ctx, "x", old.ETag)
		wantErr(t, err, store.CodeConditionNotMet, 412, noIndex)
		wantBlob(t, c, "x", []byte("v2"), cur.ETag)
		// If-Match on a missing blob cannot match.
		_, err = c.Put(ctx, "missing", []byte("v"), &store.BlobPutOptions{IfMatch: cur.ETag})
		wantErr(t, err, store.CodeConditionNotMet, 412, noIndex)
		_, _, err = c.Get(ctx, "missing")
		wantErr(t, err, store.CodeBlobNotFound, 404, noIndex)
		// "*" matches any existing blob.
		star, err := c.Put(ctx, "x", []byte("v3"), &store.BlobPutOptions{IfMatch: store.ETagAny})
		must(t, err, "Put If-Match *")
		wantBlob(t, c, "x", []byte("v3"), star.ETag)
		must(t, c.DeleteBlob(ctx, "x", star.ETag), "DeleteBlob with the current ETag")
	})

	s.run(t, "IfNoneMatchAny_BlobAlreadyExists", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		first, err := c.Put(ctx, "once", []byte("first"), &store.BlobPutOptions{IfNoneMatchAny: true})
		must(t, err, "create-only Put of a new blob")
		_, err = c.Put(ctx, "once", []byte("second"), &store.BlobPutOptions{IfNoneMatchAny: true})
		wantErr(t, err, store.CodeBlobAlreadyExists, 409, noIndex)
		wantBlob(t, c, "once", []byte("first"), first.ETag)
	})

	s.run(t, "List_PrefixOrderAndPaging", func(t *testing.T) {
		c := s.newContainer(t)
		for _, n := range []string{"b/2", "a", "b/10", "c", "b/1", "B/upper", "b0"} {
			mustPut(t, c, n, []byte(n))
		}
		var got []string
		opts := store.BlobListOptions{Prefix: "b/", MaxResults: 2}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("List marker never ends")
			}
			page, err := c.List(t.Context(), opts)
			must(t, err, "List")
			if len(page.Blobs) > 2 {
				t.Errorf("List with MaxResults 2 returned %d blobs", len(page.Blobs))
			}
			for _, b := range page.Blobs {
				got = append(got, b.Name)
				if b.Size != int64(len(b.Name)) || b.ETag == "" {
					t.Errorf("listed %+v, want Size %d and an ETag", b, len(b.Name))
				}
			}
			if page.NextMarker == "" {
				break
			}
			opts.Marker = page.NextMarker
		}
		if want := []string{"b/1", "b/10", "b/2"}; !slices.Equal(got, want) {
			t.Errorf("List(prefix b/) = %v, want %v", got, want)
		}
		page, err := c.List(t.Context(), store.BlobListOptions{})
		must(t, err, "List all")
		var all []string
		for _, b := range page.Blobs {
			all = append(all, b.Name)
		}
		if want := []string{"B/upper", "a", "b/1", "b/10", "b/2", "b0", "c"}; !slices.Equal(all, want) {
			t.Errorf("List() = %v, want %v", all, want)
		}
		_, err = c.List(t.Context(), store.BlobListOptions{MaxResults: -1})
		wantErr(t, err, store.CodeOutOfRangeQueryParameterValue, 400, noIndex)
	})

	s.run(t, "Names_InvalidResourceNameOrOutOfRange", func(t *testing.T) {
		st := s.h.New(t)
		base := s.names.next()
		for _, name := range []string{base + "_x", "-" + base, base + "-", "Upper" + base} {
			err := st.Container(name).Create(t.Context())
			if !wantErr(t, err, store.CodeInvalidResourceName, 400, noIndex) {
				t.Logf("container name %q", name)
			}
		}
		err := st.Container("ab").Create(t.Context())
		wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex)

		c := s.newContainer(t)
		mustPut(t, c, strings.Repeat("b", store.MaxBlobNameUnits), []byte("1"))
		for _, name := range []string{"", strings.Repeat("b", store.MaxBlobNameUnits+1), strings.Repeat("a/", store.MaxBlobPathSegments)} {
			_, err := c.Put(t.Context(), name, []byte("x"), nil)
			if !wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex) {
				t.Logf("blob name of %d bytes", len(name))
			}
		}
		page, err := c.List(t.Context(), store.BlobListOptions{})
		must(t, err, "List")
		if len(page.Blobs) != 1 {
			t.Errorf("container holds %d blobs after the refused puts, want 1", len(page.Blobs))
		}
	})

	s.run(t, "MissingContainer_ContainerNotFound", func(t *testing.T) {
		c := s.h.New(t).Container(s.names.next())
		ctx := t.Context()
		_, err := c.Put(ctx, "x", []byte("x"), nil)
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
		_, _, err = c.Get(ctx, "x")
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
		_, err = c.List(ctx, store.BlobListOptions{})
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
		err = c.Delete(ctx)
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
	})
}
