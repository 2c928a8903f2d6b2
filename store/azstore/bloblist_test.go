package azstore

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestBlobListETagsMatchWrites proves a listed blob's ETag is the one Put
// returned and works as an If-Match condition. The service lists the bare
// value (<Etag>0x8DA70795BA89795</Etag>, as in recorded Azure sessions)
// while its ETag headers quote it.
func TestBlobListETagsMatchWrites(t *testing.T) {
	const bare = "0x8DA70795BA89795"
	var mu sync.Mutex
	var ifMatch []string
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("x-ms-version", "2025-01-05")
		switch {
		case r.Method == http.MethodPut:
			w.Header().Set("ETag", `"`+bare+`"`)
			w.Header().Set("Last-Modified", "Thu, 28 Jul 2022 09:12:55 GMT")
			w.WriteHeader(201)
		case r.Method == http.MethodGet && r.URL.Query().Get("comp") == "list":
			w.Header().Set("Content-Type", "application/xml")
			_, _ = io.WriteString(w, "\ufeff"+`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://`+r.Host+`/acct/" ContainerName="ctr"><Blobs><Blob><Name>a</Name><Properties>`+
				`<Creation-Time>Thu, 28 Jul 2022 09:12:55 GMT</Creation-Time><Last-Modified>Thu, 28 Jul 2022 09:12:55 GMT</Last-Modified><Etag>`+bare+`</Etag>`+
				`<Content-Length>1</Content-Length><Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType></Properties></Blob></Blobs><NextMarker /></EnumerationResults>`)
		case r.Method == http.MethodDelete:
			mu.Lock()
			ifMatch = append(ifMatch, r.Header.Get("If-Match"))
			mu.Unlock()
			w.WriteHeader(202)
		default:
			w.WriteHeader(400)
		}
	})
	c := f.sharedKeyStore(t).Container("ctr")
	put, err := c.Put(t.Context(), "a", []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(t.Context(), store.BlobListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Blobs) != 1 || page.Blobs[0].ETag != put.ETag {
		t.Fatalf("listed %+v, want the ETag Put returned, %s", page.Blobs, put.ETag)
	}
	if err := c.DeleteBlob(t.Context(), "a", page.Blobs[0].ETag); err != nil {
		t.Fatalf("delete with the listed ETag: %v", err)
	}
	if len(ifMatch) != 1 || ifMatch[0] != `"`+bare+`"` {
		t.Errorf("delete sent If-Match %q, want %q", ifMatch, `"`+bare+`"`)
	}
}

// TestBlobListETagsOnAzurite proves the same on Azurite, which lists bare
// ETags as Azure does.
func TestBlobListETagsOnAzurite(t *testing.T) {
	st := azuriteStore(t)
	ctx := t.Context()
	c := st.Container(fmt.Sprintf("etags%d", time.Now().UnixNano()%1e9))
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx) })
	put, err := c.Put(ctx, "b", []byte("1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.List(ctx, store.BlobListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Blobs) != 1 || page.Blobs[0].ETag != put.ETag {
		t.Fatalf("listed %+v, want the ETag Put returned, %s", page.Blobs, put.ETag)
	}
	if _, err := c.Put(ctx, "b", []byte("2"), &store.BlobPutOptions{IfMatch: page.Blobs[0].ETag}); err != nil {
		t.Fatalf("put conditional on the listed ETag: %v", err)
	}
	if err := c.DeleteBlob(ctx, "b", page.Blobs[0].ETag); store.Code(err) != store.CodeConditionNotMet {
		t.Errorf("delete conditional on a stale listed ETag: %v, want ConditionNotMet", err)
	}
}
