package storetest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// mustCreateAppend creates an empty append blob.
func mustCreateAppend(t testing.TB, c store.Container, name string) store.BlobProps {
	t.Helper()
	p, err := c.CreateAppend(t.Context(), name, nil)
	if err != nil {
		t.Fatalf("CreateAppend(%q): %v", name, err)
	}
	if p.ETag == "" || p.Name != name || p.Type != store.AppendBlob {
		t.Fatalf("CreateAppend(%q) = %+v, want the name, an ETag and type AppendBlob", name, p)
	}
	return p
}

// mustAppend appends a block, failing the test on an error.
func mustAppend(t testing.TB, c store.Container, name string, block []byte, opts *store.AppendOptions) store.AppendResult {
	t.Helper()
	r, err := c.AppendBlock(t.Context(), name, block, opts)
	if err != nil {
		t.Fatalf("AppendBlock(%q, %d bytes): %v", name, len(block), err)
	}
	return r
}

// wantContent checks a blob's whole content, and its type and size.
func wantContent(t testing.TB, c store.Container, name string, data []byte, typ store.BlobType) store.BlobProps {
	t.Helper()
	got, p, err := c.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	if !bytes.Equal(got, data) || p.Size != int64(len(data)) || p.Type != typ {
		t.Fatalf("Get(%q) = %q (Size %d, %s), want %q (Size %d, %s)", name, got, p.Size, p.Type, data, len(data), typ)
	}
	return p
}

// appendBlobs proves the append blob rules: blocks land at the end, one
// per request, under the append position, size and If-Match conditions,
// with the service's codes for every refusal.
func (s *suite) appendBlobs(t *testing.T) {
	s.run(t, "CreateAppendGet", func(t *testing.T) {
		c := s.newContainer(t)
		created := mustCreateAppend(t, c, "log/a.log")
		wantContent(t, c, "log/a.log", []byte{}, store.AppendBlob)
		r1 := mustAppend(t, c, "log/a.log", []byte("abc"), nil)
		if r1.Offset != 0 || r1.Size != 3 || r1.Blocks != 1 || r1.ETag == "" || r1.ETag == created.ETag || r1.LastModified.IsZero() {
			t.Errorf("first append = %+v, want offset 0, size 3, 1 block and a new ETag", r1)
		}
		r2 := mustAppend(t, c, "log/a.log", []byte("defg"), nil)
		if r2.Offset != 3 || r2.Size != 7 || r2.Blocks != 2 || r2.ETag == r1.ETag {
			t.Errorf("second append = %+v, want offset 3, size 7, 2 blocks and a new ETag", r2)
		}
		p := wantContent(t, c, "log/a.log", []byte("abcdefg"), store.AppendBlob)
		if p.ETag != r2.ETag || p.Blocks != 2 {
			t.Errorf("Get props %+v, want ETag %s and 2 blocks", p, r2.ETag)
		}
		page, err := c.List(t.Context(), store.BlobListOptions{Prefix: "log/"})
		must(t, err, "List")
		if len(page.Blobs) != 1 || page.Blobs[0].Type != store.AppendBlob || page.Blobs[0].Size != 7 || page.Blobs[0].ETag != r2.ETag {
			t.Errorf("List = %+v, want the 7-byte append blob with ETag %s", page.Blobs, r2.ETag)
		}
		if p := mustPut(t, c, "plain", []byte("x")); p.Type != store.BlockBlob {
			t.Errorf("Put = %+v, want type BlockBlob", p)
		}
		wantContent(t, c, "plain", []byte("x"), store.BlockBlob)
	})

	s.run(t, "GetRange", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		mustCreateAppend(t, c, "r")
		mustAppend(t, c, "r", []byte("abc"), nil)
		last := mustAppend(t, c, "r", []byte("defg"), nil)
		for _, tc := range []struct {
			off, n int64
			want   string
		}{{0, 0, "abcdefg"}, {2, 3, "cde"}, {5, 0, "fg"}, {5, 10, "fg"}, {0, 1, "a"}, {6, 1, "g"}} {
			got, p, err := c.GetRange(ctx, "r", tc.off, tc.n)
			if err != nil || string(got) != tc.want {
				t.Errorf("GetRange(%d, %d) = %q, %v; want %q", tc.off, tc.n, got, err, tc.want)
				continue
			}
			if p.Size != 7 || p.ETag != last.ETag || p.Type != store.AppendBlob || p.Blocks != 2 {
				t.Errorf("GetRange(%d, %d) props %+v, want the whole blob's: size 7, ETag %s, 2 blocks", tc.off, tc.n, p, last.ETag)
			}
		}
		for _, r := range [][2]int64{{7, 0}, {7, 1}, {100, 5}} {
			_, _, err := c.GetRange(ctx, "r", r[0], r[1])
			if !wantErr(t, err, store.CodeInvalidRange, 416, noIndex) {
				t.Logf("GetRange(%d, %d) of a 7-byte blob", r[0], r[1])
			}
		}
		mustCreateAppend(t, c, "empty")
		got, p, err := c.GetRange(ctx, "empty", 0, 0)
		if err != nil || len(got) != 0 || p.Size != 0 {
			t.Errorf("GetRange(0, 0) of an empty blob = %q (size %d), %v; want it empty", got, p.Size, err)
		}
		_, _, err = c.GetRange(ctx, "empty", 0, 1)
		wantErr(t, err, store.CodeInvalidRange, 416, noIndex)
		_, _, err = c.GetRange(ctx, "missing", 0, 1)
		wantErr(t, err, store.CodeBlobNotFound, 404, noIndex)
		for _, r := range [][2]int64{{-1, 0}, {0, -1}} {
			_, _, err := c.GetRange(ctx, "r", r[0], r[1])
			if wantErr(t, err, store.CodeInvalidInput, 400, noIndex) && store.SourceOf(err) != store.SourceClient {
				t.Errorf("GetRange(%d, %d): %v, want it refused before sending", r[0], r[1], err)
			}
		}
		mustPut(t, c, "blockblob", []byte("0123456789"))
		got, _, err = c.GetRange(ctx, "blockblob", 8, 0)
		if err != nil || string(got) != "89" {
			t.Errorf("GetRange of a block blob = %q, %v; want \"89\"", got, err)
		}
	})

	s.run(t, "AppendPosition_AppendPositionConditionNotMet", func(t *testing.T) {
		c := s.newContainer(t)
		mustCreateAppend(t, c, "p")
		r := mustAppend(t, c, "p", []byte("abc"), &store.AppendOptions{AppendPosition: new(int64(0))})
		if r.Offset != 0 || r.Size != 3 {
			t.Errorf("append at 0 = %+v", r)
		}
		_, err := c.AppendBlock(t.Context(), "p", []byte("xyz"), &store.AppendOptions{AppendPosition: new(int64(0))})
		wantErr(t, err, store.CodeAppendPositionConditionNotMet, 412, noIndex)
		_, err = c.AppendBlock(t.Context(), "p", []byte("xyz"), &store.AppendOptions{AppendPosition: new(int64(4))})
		wantErr(t, err, store.CodeAppendPositionConditionNotMet, 412, noIndex)
		r = mustAppend(t, c, "p", []byte("de"), &store.AppendOptions{AppendPosition: new(int64(3))})
		if r.Offset != 3 || r.Size != 5 || r.Blocks != 2 {
			t.Errorf("append at 3 = %+v, want offset 3, size 5, 2 blocks", r)
		}
		wantContent(t, c, "p", []byte("abcde"), store.AppendBlob)
	})

	s.run(t, "MaxSize_MaxBlobSizeConditionNotMet", func(t *testing.T) {
		c := s.newContainer(t)
		mustCreateAppend(t, c, "m")
		mustAppend(t, c, "m", []byte("abc"), nil)
		_, err := c.AppendBlock(t.Context(), "m", []byte("def"), &store.AppendOptions{MaxSize: new(int64(5))})
		wantErr(t, err, store.CodeMaxBlobSizeConditionNotMet, 412, noIndex)
		// Exactly at the limit is allowed.
		mustAppend(t, c, "m", []byte("def"), &store.AppendOptions{MaxSize: new(int64(6))})
		// Already past it: refused whatever the block.
		_, err = c.AppendBlock(t.Context(), "m", []byte("g"), &store.AppendOptions{MaxSize: new(int64(2))})
		wantErr(t, err, store.CodeMaxBlobSizeConditionNotMet, 412, noIndex)
		wantContent(t, c, "m", []byte("abcdef"), store.AppendBlob)
	})

	s.run(t, "IfMatch_ConditionNotMet", func(t *testing.T) {
		c := s.newContainer(t)
		created := mustCreateAppend(t, c, "i")
		r := mustAppend(t, c, "i", []byte("a"), &store.AppendOptions{IfMatch: created.ETag})
		_, err := c.AppendBlock(t.Context(), "i", []byte("b"), &store.AppendOptions{IfMatch: created.ETag})
		wantErr(t, err, store.CodeConditionNotMet, 412, noIndex)
		mustAppend(t, c, "i", []byte("b"), &store.AppendOptions{IfMatch: r.ETag, AppendPosition: new(int64(1)), MaxSize: new(int64(2))})
		wantContent(t, c, "i", []byte("ab"), store.AppendBlob)
	})

	s.run(t, "Missing_BlobNotFoundOrContainerNotFound", func(t *testing.T) {
		c := s.newContainer(t)
		_, err := c.AppendBlock(t.Context(), "nope", []byte("a"), nil)
		wantErr(t, err, store.CodeBlobNotFound, 404, noIndex)
		_, err = c.AppendBlock(t.Context(), "nope", []byte("a"), &store.AppendOptions{AppendPosition: new(int64(0))})
		wantErr(t, err, store.CodeBlobNotFound, 404, noIndex)
		gone := s.h.New(t).Container(s.names.next())
		_, err = gone.CreateAppend(t.Context(), "x", nil)
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
		_, err = gone.AppendBlock(t.Context(), "x", []byte("a"), nil)
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
		_, _, err = gone.GetRange(t.Context(), "x", 0, 1)
		wantErr(t, err, store.CodeContainerNotFound, 404, noIndex)
	})

	s.run(t, "BlockBlob_InvalidBlobType", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		mustPut(t, c, "block", []byte("keep"))
		_, err := c.AppendBlock(ctx, "block", []byte("a"), nil)
		wantErr(t, err, store.CodeInvalidBlobType, 409, noIndex)
		wantContent(t, c, "block", []byte("keep"), store.BlockBlob)

		// Changing a blob's type in place: Azure refuses it.
		_, err = c.CreateAppend(ctx, "block", nil)
		if s.h.ServerReplacesBlobType {
			must(t, err, "CreateAppend over a block blob (the server replaces it)")
			wantContent(t, c, "block", []byte{}, store.AppendBlob)
		} else {
			wantErr(t, err, store.CodeInvalidBlobType, 409, noIndex)
			wantContent(t, c, "block", []byte("keep"), store.BlockBlob)
		}
		mustCreateAppend(t, c, "app")
		mustAppend(t, c, "app", []byte("log"), nil)
		_, err = c.Put(ctx, "app", []byte("over"), nil)
		if s.h.ServerReplacesBlobType {
			must(t, err, "Put over an append blob (the server replaces it)")
			wantContent(t, c, "app", []byte("over"), store.BlockBlob)
		} else {
			wantErr(t, err, store.CodeInvalidBlobType, 409, noIndex)
			wantContent(t, c, "app", []byte("log"), store.AppendBlob)
		}
	})

	s.run(t, "CreateAppend_Conditions", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		first, err := c.CreateAppend(ctx, "c", &store.BlobPutOptions{IfNoneMatchAny: true})
		must(t, err, "create-only CreateAppend of a new blob")
		mustAppend(t, c, "c", []byte("data"), nil)
		_, err = c.CreateAppend(ctx, "c", &store.BlobPutOptions{IfNoneMatchAny: true})
		wantErr(t, err, store.CodeBlobAlreadyExists, 409, noIndex)
		_, err = c.CreateAppend(ctx, "c", &store.BlobPutOptions{IfMatch: first.ETag})
		wantErr(t, err, store.CodeConditionNotMet, 412, noIndex)
		wantContent(t, c, "c", []byte("data"), store.AppendBlob)
		// Unconditional: an append blob is replaced by an empty one.
		again := mustCreateAppend(t, c, "c")
		if again.ETag == first.ETag {
			t.Errorf("re-create kept ETag %s", first.ETag)
		}
		p := wantContent(t, c, "c", []byte{}, store.AppendBlob)
		if p.Blocks != 0 {
			t.Errorf("re-created blob has %d blocks", p.Blocks)
		}
	})

	s.run(t, "BadInput_RefusedBeforeSending", func(t *testing.T) {
		c := s.newContainer(t)
		ctx := t.Context()
		mustCreateAppend(t, c, "b")
		client := func(err error, code string, status int, what string) {
			t.Helper()
			if wantErr(t, err, code, status, noIndex) && store.SourceOf(err) != store.SourceClient {
				t.Errorf("%s: %v, want it refused before sending (Source client)", what, err)
			}
			if err != nil && strings.Contains(what, "block") && !strings.Contains(err.Error(), "\"b\"") {
				t.Errorf("%s: message %q does not name the blob", what, err)
			}
		}
		_, err := c.AppendBlock(ctx, "b", nil, nil)
		client(err, store.CodeInvalidHeaderValue, 400, "empty block")
		big := make([]byte, store.MaxAppendBlockSize+1)
		_, err = c.AppendBlock(ctx, "b", big, nil)
		client(err, store.CodeRequestBodyTooLarge, 413, "block over 100 MiB")
		if err != nil && !strings.Contains(err.Error(), "104857601") {
			t.Errorf("message %q does not name the block's size", err)
		}
		_, err = c.AppendBlock(ctx, "b", []byte("x"), &store.AppendOptions{AppendPosition: new(int64(-1))})
		client(err, store.CodeInvalidHeaderValue, 400, "negative position of a block")
		_, err = c.AppendBlock(ctx, "b", []byte("x"), &store.AppendOptions{MaxSize: new(int64(-5))})
		client(err, store.CodeInvalidHeaderValue, 400, "negative max size of a block")
		_, err = c.AppendBlock(ctx, "", []byte("x"), nil)
		client(err, store.CodeOutOfRangeInput, 400, "empty name")
		_, err = c.CreateAppend(ctx, strings.Repeat("n", store.MaxBlobNameUnits+1), nil)
		client(err, store.CodeOutOfRangeInput, 400, "long name")
		_, err = c.CreateAppend(ctx, "bad\x01name", nil)
		client(err, store.CodeInvalidResourceName, 400, "control character")
		wantContent(t, c, "b", []byte{}, store.AppendBlob)
	})

	s.run(t, "ConcurrentAppendsAtOnePosition_OneWins", func(t *testing.T) {
		c := s.newContainer(t)
		mustCreateAppend(t, c, "race")
		const writers = 8
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.AppendBlock(t.Context(), "race", []byte{'a' + byte(i)}, &store.AppendOptions{AppendPosition: new(int64(0))})
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Errorf("writers %d and %d both appended at position 0", won, i)
			case err == nil:
				won = i
			default:
				wantErr(t, err, store.CodeAppendPositionConditionNotMet, 412, noIndex)
			}
		}
		if won < 0 {
			t.Fatal("no writer appended at position 0")
		}
		wantContent(t, c, "race", []byte{'a' + byte(won)}, store.AppendBlob)
	})

	s.run(t, "FullBlob_BlockCountExceedsLimit", func(t *testing.T) {
		if s.h.SkipBlockCountLimit {
			t.Skip("storetest: Harness.SkipBlockCountLimit: 50,000 appends are too slow on this backend")
		}
		c := s.newContainer(t)
		mustCreateAppend(t, c, "full")
		ctx := context.WithoutCancel(t.Context())
		var last store.AppendResult
		for i := range store.MaxAppendBlocks {
			r, err := c.AppendBlock(ctx, "full", []byte{byte(i)}, &store.AppendOptions{AppendPosition: new(int64(i))})
			if err != nil {
				t.Fatalf("append %d of %d: %v", i+1, store.MaxAppendBlocks, err)
			}
			last = r
		}
		if last.Blocks != store.MaxAppendBlocks || last.Size != store.MaxAppendBlocks {
			t.Fatalf("after %d appends: %+v", store.MaxAppendBlocks, last)
		}
		_, err := c.AppendBlock(ctx, "full", []byte("x"), nil)
		wantErr(t, err, store.CodeBlockCountExceedsLimit, 409, noIndex)
		_, err = c.AppendBlock(ctx, "full", []byte("x"), &store.AppendOptions{AppendPosition: new(int64(store.MaxAppendBlocks))})
		wantErr(t, err, store.CodeBlockCountExceedsLimit, 409, noIndex)
		_, p, err := c.GetRange(ctx, "full", store.MaxAppendBlocks-1, 0)
		if err != nil || p.Size != store.MaxAppendBlocks || p.Blocks != store.MaxAppendBlocks {
			t.Fatalf("full blob: %+v, %v", p, err)
		}
	})
}
