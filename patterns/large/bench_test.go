package large

import (
	"context"
	"fmt"
	"github.com/tablekit/tablekit/internal/backendtest"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// scans is the benchmark's type: four large values.
type scans struct {
	PK         string `table:",pk"`
	RK         string `table:",rk"`
	Title      string
	A, B, C, D []byte `table:",large"`
}

// header is the baseline's type: the same entity without its values.
type header struct {
	PK    string `table:",pk"`
	RK    string `table:",rk"`
	Title string
}

// benchValue is the size of each of the four values: past the property
// limit, so each is a blob.
const benchValue = 100_000

// readCases are the cases of the read benchmark: the baseline, a
// Repository point read of a small entity; Get of an entity with four
// values in blobs, read in parallel and one after another; and GetFields
// of its title, which reads no blob.
func readCases(b *testing.B, st store.Store, table, container string) (interleave.Case, []interleave.Case) {
	ctx := context.Background()
	par, err := New[scans](st, table, container, nil)
	if err != nil {
		b.Fatal(err)
	}
	seq, _ := New[scans](st, table, container, &Options{Parallel: 1})
	if err := par.Create(ctx); err != nil {
		b.Fatal(err)
	}
	v := scans{PK: "p", RK: "s", Title: "four scans",
		A: noise(1, benchValue), B: noise(2, benchValue), C: noise(3, benchValue), D: noise(4, benchValue)}
	if err := par.Put(ctx, &v); err != nil {
		b.Fatal(err)
	}
	repo := mapper.NewRepository[header](st, table)
	if err := repo.Upsert(ctx, &header{PK: "p", RK: "h", Title: "header"}, store.Replace); err != nil {
		b.Fatal(err)
	}
	check := func(got scans, err error) error {
		if err == nil && (len(got.A) != benchValue || len(got.D) != benchValue) {
			err = fmt.Errorf("read %d and %d bytes", len(got.A), len(got.D))
		}
		return err
	}
	base := interleave.Case{Name: "pointget", Op: func(int) error { _, err := repo.Get(ctx, "p", "h"); return err }}
	return base, []interleave.Case{
		{Name: "get4blobs", Op: func(int) error { return check(par.Get(ctx, "p", "s")) }},
		{Name: "get4blobsSequential", Op: func(int) error { return check(seq.Get(ctx, "p", "s")) }},
		{Name: "getTitle", Op: func(int) error { _, err := par.GetFields(ctx, "p", "s", "Title"); return err }},
	}
}

// BenchmarkGet measures reads of an entity with four 100 KB values in
// blobs on memstore, interleaved with a point read in short rounds. Run
// it once:
//
//	go test -run '^$' -bench 'Get$' -benchtime 1x ./patterns/large/
func BenchmarkGet(b *testing.B) {
	runBench(b, memstore.New(), "Scans", "scans", interleave.Config{Rounds: 15})
}

// BenchmarkGetAzurite is the same on Azurite, over HTTP: straight to
// Azurite (whose single JavaScript thread serves the blob reads one at a
// time, so reading them in parallel gains little), and through loopback
// proxies that add 5 ms to every request, as a network round trip to the
// service does, where the parallel reads pay one round trip for the four
// blobs:
//
//	scripts/with-azurite.sh go test -run '^$' -bench GetAzurite -benchtime 1x ./patterns/large/
func BenchmarkGetAzurite(b *testing.B) {
	b.Run("direct", func(b *testing.B) { benchAzurite(b, 0) })
	b.Run("rtt5ms", func(b *testing.B) { benchAzurite(b, 5*time.Millisecond) })
}

func benchAzurite(b *testing.B, rtt time.Duration) {
	st := backendtest.AzuriteBehindDelay(b, rtt).Store
	n := time.Now().UnixNano() % 1_000_000_000
	table, container := fmt.Sprintf("Scans%d", n), fmt.Sprintf("scans-%d", n)
	defer st.DeleteTable(context.Background(), table)
	defer st.Container(container).Delete(context.Background())
	runBench(b, st, table, container, interleave.Config{Rounds: 15, Slice: 200 * time.Millisecond})
}

func runBench(b *testing.B, st store.Store, table, container string, cfg interleave.Config) {
	base, cases := readCases(b, st, table, container)
	b.ResetTimer()
	for range b.N {
		rep, err := interleave.Measure(cfg, base, cases...)
		if err != nil {
			b.Fatal(err)
		}
		rep.Metrics(b.ReportMetric)
		b.Log("\n" + rep.Table())
	}
}
