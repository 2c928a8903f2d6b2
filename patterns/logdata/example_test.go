package logdata_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/logdata"
	"github.com/tablekit/tablekit/store"
)

// exampleClock returns a clock that starts at 15:59:58 UTC and moves a
// second forward at every reading.
func exampleClock() func() time.Time {
	t := time.Date(2026, 11, 24, 15, 59, 57, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func ExampleWriter() {
	ctx := context.Background()
	st := memstore.New()
	logs := st.Container("logs")
	if err := logs.Create(ctx); err != nil {
		panic(err)
	}
	w, err := logdata.NewWriter(logs, "web", &logdata.Options{ID: "web-1", Clock: exampleClock()})
	if err != nil {
		panic(err)
	}
	for _, line := range []string{"GET /index.html 200", "GET /missing 404", "POST /orders 201"} {
		if err := w.Write(ctx, []byte(line)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(ctx); err != nil { // sends what is buffered
		panic(err)
	}
	page, err := logs.List(ctx, store.BlobListOptions{Prefix: "web/"})
	if err != nil {
		panic(err)
	}
	for _, b := range page.Blobs {
		fmt.Println(b.Name, b.Type, b.Size, "bytes")
	}
	st2 := w.Stats()
	fmt.Println(st2.Records, "records,", st2.Blocks, "appends,", st2.Blobs, "blobs")
	// Output:
	// web/2026/11/24/15/web-1-00000001.log AppendBlob 99 bytes
	// web/2026/11/24/16/web-1-00000002.log AppendBlob 48 bytes
	// 3 records, 2 appends, 2 blobs
}

func ExampleReader_Records() {
	ctx := context.Background()
	st := memstore.New()
	logs := st.Container("logs")
	if err := logs.Create(ctx); err != nil {
		panic(err)
	}
	// Two processes log at once, each with a writer of its own.
	clock := exampleClock()
	for _, id := range []string{"api-1", "api-2"} {
		w, err := logdata.NewWriter(logs, "api", &logdata.Options{ID: id, Clock: clock})
		if err != nil {
			panic(err)
		}
		for _, msg := range []string{"started", "error: disk full"} {
			if err := w.Write(ctx, []byte(id+" "+msg)); err != nil {
				panic(err)
			}
		}
		if err := w.Close(ctx); err != nil {
			panic(err)
		}
	}
	r, err := logdata.NewReader(logs, "api", nil)
	if err != nil {
		panic(err)
	}
	from := time.Date(2026, 11, 24, 15, 59, 59, 0, time.UTC)
	to := time.Date(2026, 11, 24, 16, 0, 2, 0, time.UTC)
	for rec, err := range r.Records(ctx, from, to) {
		if err != nil {
			panic(err)
		}
		fmt.Println(rec.Time.Format(time.TimeOnly), string(rec.Data))
	}
	// Output:
	// 15:59:59 api-1 error: disk full
	// 16:00:00 api-2 started
	// 16:00:01 api-2 error: disk full
}
