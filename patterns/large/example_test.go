package large_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/store"
)

// Doc is a document whose body may be megabytes.
type Doc struct {
	Folder string     `table:",pk"`
	ID     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Title  string
	Body   string `table:",large"`
}

func ExampleStore_Put() {
	ctx := context.Background()
	st := memstore.New()
	docs, err := large.New[Doc](st, "Docs", "docs", &large.Options{Compress: true})
	if err != nil {
		panic(err)
	}
	if err := docs.Create(ctx); err != nil { // the table and the container
		panic(err)
	}
	// 3 MiB of text: past the 64 KiB property limit and the 1 MiB entity.
	d := Doc{Folder: "inbox", ID: "report", Title: "Q3", Body: strings.Repeat("quarterly figures ", 3<<20/18)}
	if err := docs.Put(ctx, &d); err != nil {
		panic(err)
	}
	got, err := docs.Get(ctx, "inbox", "report")
	if err != nil {
		panic(err)
	}
	fmt.Println(got.Title, len(got.Body) == len(d.Body), got.Body == d.Body)

	raw, _ := st.Table("Docs").Get(ctx, "inbox", "report", nil)
	ref, _ := large.ParseRef(string(raw.Properties["Body"].([]byte)))
	fmt.Println("the entity holds a reference:", ref.Encoding, ref.Size, "bytes")
	// Output:
	// Q3 true true
	// the entity holds a reference: gzip 3145716 bytes
}

func ExampleStore_GetFields() {
	ctx := context.Background()
	st := memstore.New()
	docs, _ := large.New[Doc](st, "Docs", "docs", nil)
	_ = docs.Create(ctx)
	_ = docs.Put(ctx, &Doc{Folder: "inbox", ID: "report", Title: "Q3", Body: strings.Repeat("x", 200_000)})

	// A listing needs the title only: one point read, no blob read.
	d, err := docs.GetFields(ctx, "inbox", "report", "Title")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q, body %d bytes\n", d.Title, len(d.Body))
	// Output:
	// "Q3", body 0 bytes
}

func ExampleStore_Sweep() {
	ctx := context.Background()
	st := memstore.New()
	docs, _ := large.New[Doc](st, "Docs", "docs", nil)
	_ = docs.Create(ctx)
	_ = docs.Put(ctx, &Doc{Folder: "inbox", ID: "a", Body: strings.Repeat("a", 100_000)})
	// A writer that crashed after its blob put and before its entity
	// write left a blob no entity references.
	orphan := "docs/_inbox/_b/Body/01JCRASHED0000000000000000"
	_, _ = st.Container("docs").Put(ctx, orphan, []byte("left behind"), nil)

	// Within the grace period nothing is removed: a write may be about
	// to reference the blob.
	rep, _ := docs.Sweep(ctx, large.SweepOptions{})
	fmt.Println("now:", rep)

	// A sweeper running two hours later; a dry run first, then for real.
	later, _ := large.New[Doc](st, "Docs", "docs", &large.Options{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	rep, _ = later.Sweep(ctx, large.SweepOptions{DryRun: true})
	fmt.Println("dry run:", rep, rep.Orphans)
	rep, _ = later.Sweep(ctx, large.SweepOptions{})
	fmt.Println("sweep:", rep)
	// Output:
	// now: listed 2, referenced 0, young 2, foreign 0, orphans 0, removed 0, entity reads 0
	// dry run: listed 2, referenced 1, young 0, foreign 0, orphans 1, removed 0, entity reads 2 [docs/_inbox/_b/Body/01JCRASHED0000000000000000]
	// sweep: listed 2, referenced 1, young 0, foreign 0, orphans 1, removed 1, entity reads 2
}

func ExampleBlobError() {
	ctx := context.Background()
	st := memstore.New()
	docs, _ := large.New[Doc](st, "Docs", "docs", nil)
	_ = docs.Create(ctx)
	_ = docs.Put(ctx, &Doc{Folder: "inbox", ID: "a", Title: "kept", Body: strings.Repeat("a", 100_000)})
	// Someone empties the container behind the package's back.
	page, _ := st.Container("docs").List(ctx, store.BlobListOptions{})
	for _, b := range page.Blobs {
		_ = st.Container("docs").DeleteBlob(ctx, b.Name, "")
	}
	_, err := docs.Get(ctx, "inbox", "a")
	var be *large.BlobError
	fmt.Println(errors.Is(err, large.ErrMissingBlob), errors.As(err, &be), be.PartitionKey, be.RowKey, be.Property)
	// Output:
	// true true inbox a Body
}
