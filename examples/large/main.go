// Command large shows the large entities pattern: documents whose bodies
// pass the service's limits (64 KiB a property, 1 MiB an entity) kept in
// blobs with a reference in the entity; a listing that reads no blob; an
// update that removes the blob it replaced; a writer that crashes between
// its blob and its entity, and the sweeper that cleans up after it; many
// writers of one document at once; and a missing blob reported as such.
// It runs on memstore by default; pass -conn (or set TABLEKIT_CONN) to run
// it against Azurite or Azure.
//
//	go run ./examples/large
//	go run ./examples/large -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
)

// Doc is a document: the title is always in the entity, the body and the
// scan go to blobs when they are big.
type Doc struct {
	Folder string     `table:",pk"`
	ID     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Title  string
	Body   string `table:",large"`
	Scan   []byte `table:",large"`
}

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "LargeDocs", "table to use (created, then deleted)")
	container := flag.String("container", "large-docs", "blob container to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azblobs.Service())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table, *container); err != nil {
		log.Fatalf("large on %s: %v", name, err)
	}
}

func run(ctx context.Context, w io.Writer, st store.Store, table, container string) (err error) {
	docs, err := large.New[Doc](st, table, container, &large.Options{Compress: true})
	if err != nil {
		return err
	}
	if err := docs.Create(ctx); err != nil {
		return err
	}
	defer func() {
		derr := st.DeleteTable(context.WithoutCancel(ctx), table)
		if cerr := st.Container(container).Delete(context.WithoutCancel(ctx)); derr == nil {
			derr = cerr
		}
		if err == nil {
			err = derr
		}
	}()
	blobs := func() int {
		n, _ := countBlobs(ctx, st.Container(container))
		return n
	}

	// A 5 MiB body and a 200 KB scan: neither fits a property.
	d := Doc{Folder: "reports", ID: "q3", Title: "Q3 figures", Body: body(5 << 20), Scan: scan(200_000)}
	if err := docs.Put(ctx, &d); err != nil {
		return err
	}
	raw, err := st.Table(table).Get(ctx, "reports", "q3", nil)
	if err != nil {
		return err
	}
	ref, err := large.ParseRef(string(raw.Properties["Body"].([]byte)))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "put a %d-byte body and a %d-byte scan: blobs %d, the entity under 1 KiB %v; the body's blob is %s\n",
		len(d.Body), len(d.Scan), blobs(), store.EntitySize(&raw) < 1024, ref.Encoding)
	got, err := docs.Get(ctx, "reports", "q3")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read back whole: body equal %v, scan equal %v\n", got.Body == d.Body, string(got.Scan) == string(d.Scan))
	title, err := docs.GetFields(ctx, "reports", "q3", "Title")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "a listing reads the title only: %q, body %d bytes, no blob read\n", title.Title, len(title.Body))

	// An update replaces the body; the blob of the old one goes after the
	// commit. A small body stays in the entity.
	got.Body = "revised: see the appendix"
	if err := docs.Update(ctx, &got); err != nil {
		return err
	}
	fmt.Fprintf(w, "update to a short body: blobs left %d (the scan's)\n", blobs())
	stale := d
	stale.Title = "stale"
	if err := docs.Update(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("an update with a stale ETag: %v", err)
	}
	fmt.Fprintln(w, "an update with the ETag read before that: refused (412), nothing written")

	// A writer crashes after its blob put, before its entity write.
	crashing, err := large.New[Doc](&crashStore{Store: st}, table, container, nil)
	if err != nil {
		return err
	}
	crashed := survive(func() { _ = crashing.Put(ctx, &Doc{Folder: "reports", ID: "q4", Body: body(300_000)}) })
	if _, err := docs.Get(ctx, "reports", "q4"); !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("the crashed write: %v", err)
	}
	fmt.Fprintf(w, "a writer crashed (%v) between its blob and its entity: no entity, blobs %d (one orphan)\n", crashed, blobs())
	rep, err := docs.Sweep(ctx, large.SweepOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep now: young %d, removed %d (the grace period protects writes in flight)\n", rep.Young, rep.Removed)
	later, err := large.New[Doc](st, table, container, &large.Options{Now: func() time.Time { return time.Now().Add(2 * large.DefaultGrace) }})
	if err != nil {
		return err
	}
	if rep, err = later.Sweep(ctx, large.SweepOptions{DryRun: true}); err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep two hours later, dry run: orphans found %d, referenced %d, removed %d\n", len(rep.Orphans), rep.Referenced, rep.Removed)
	if rep, err = later.Sweep(ctx, large.SweepOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep two hours later: removed %d, blobs left %d\n", rep.Removed, blobs())

	// Writers of one document at once, each with its own Store.
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := large.New[Doc](st, table, container, &large.Options{Attempts: 50})
			if err != nil {
				errs <- err
				return
			}
			for j := range 3 {
				v := Doc{Folder: "reports", ID: "shared", Title: fmt.Sprintf("writer %d, version %d", i, j), Body: body(100_000 + i)}
				if err := s.Put(ctx, &v); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	shared, err := docs.Get(ctx, "reports", "shared")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d writers x 3 puts of one document: the last stands whole (body matches: %v), blobs in all %d\n",
		writers, shared.Body == body(len(shared.Body)), blobs())

	// A blob removed behind the package's back.
	c := st.Container(container)
	raw, err = st.Table(table).Get(ctx, "reports", "shared", nil)
	if err != nil {
		return err
	}
	gone, _ := large.ParseRef(string(raw.Properties["Body"].([]byte)))
	if err := c.DeleteBlob(ctx, gone.Blob, ""); err != nil {
		return err
	}
	_, err = docs.Get(ctx, "reports", "shared")
	var be *large.BlobError
	if !errors.As(err, &be) || !errors.Is(err, large.ErrMissingBlob) {
		return fmt.Errorf("a missing blob: %v", err)
	}
	fmt.Fprintf(w, "a missing blob is an error naming the entity (%s, %s) and the property %s\n", be.PartitionKey, be.RowKey, be.Property)

	// Keys too long to name a blob are refused before anything is sent.
	long := strings.Repeat("k", 600)
	err = docs.Put(ctx, &Doc{Folder: long, ID: long, Body: body(100_000)})
	fmt.Fprintf(w, "keys too long for a blob name: refused (%s), blobs %d\n", store.Code(err), blobs())
	return nil
}

// body is n bytes of text that compresses well.
func body(n int) string {
	const line = "revenue, costs and margins by region and quarter\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// scan is n bytes that do not compress.
func scan(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// countBlobs counts a container's blobs.
func countBlobs(ctx context.Context, c store.Container) (int, error) {
	n := 0
	o := store.BlobListOptions{}
	for {
		p, err := c.List(ctx, o)
		if err != nil {
			return n, err
		}
		n += len(p.Blobs)
		if p.NextMarker == "" {
			return n, nil
		}
		o.Marker = p.NextMarker
	}
}

// crash is what crashStore panics with: the process dies there.
type crash struct{}

// crashStore is a process that dies at its first entity write: that
// request and every one after it (the process is gone) never leave.
type crashStore struct {
	store.Store
	dead bool
}

func (c *crashStore) die() {
	c.dead = true
	panic(crash{})
}

func (c *crashStore) Table(name string) store.Table { return &crashTable{c, c.Store.Table(name)} }

func (c *crashStore) Container(name string) store.Container {
	return &crashContainer{c, c.Store.Container(name)}
}

type crashTable struct {
	c *crashStore
	store.Table
}

func (t *crashTable) Insert(context.Context, store.Entity) (store.ETag, error) {
	t.c.die()
	return "", nil
}

func (t *crashTable) Update(context.Context, store.Entity, store.UpdateMode, store.ETag) (store.ETag, error) {
	t.c.die()
	return "", nil
}

type crashContainer struct {
	c *crashStore
	store.Container
}

func (k *crashContainer) DeleteBlob(ctx context.Context, name string, ifMatch store.ETag) error {
	if k.c.dead {
		panic(crash{})
	}
	return k.Container.DeleteBlob(ctx, name, ifMatch)
}

// survive runs f and reports whether it crashed.
func survive(f func()) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	f()
	return false
}
