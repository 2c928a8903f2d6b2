package logdata

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
)

// benchRecord is a request line of 32 bytes, 64 as a line with its time.
func benchRecord(i int) []byte { return fmt.Appendf(nil, "web-1 GET /items/%06d 200 17ms", i) }

// writeCases are the cases of the write benchmark on c, per record: the
// baseline appends each record as a block of its own (conditional on the
// position, as the writer does); "writer-flush1" is the Writer flushed
// after every record (its own cost over a bare append); "writer-batch100"
// and "writer-batch1000" flush every 100 and 1,000 records, the path a
// logging program takes.
func writeCases(b *testing.B, c store.Container) (interleave.Case, []interleave.Case) {
	ctx := context.Background()
	// The baseline's blob, replaced by a new one when full.
	var bare string
	var pos int64
	blobs := 0
	next := func() error {
		blobs++
		bare, pos = fmt.Sprintf("bench/bare-%d.log", blobs), 0
		_, err := c.CreateAppend(ctx, bare, nil)
		return err
	}
	if err := next(); err != nil {
		b.Fatal(err)
	}
	base := interleave.Case{Name: "append-each", Op: func(i int) error {
		line := appendRecord(nil, time.Now(), benchRecord(i))
		r, err := c.AppendBlock(ctx, bare, line, &store.AppendOptions{AppendPosition: &pos})
		if err != nil {
			return err
		}
		pos = r.Size
		if r.Blocks == store.MaxAppendBlocks {
			return next()
		}
		return nil
	}}
	writer := func(name string, batch int) interleave.Case {
		w := mustWriter(b, c, "bench", Options{ID: name})
		return interleave.Case{Name: name, Ops: batch, Op: func(i int) error {
			for j := range batch {
				if err := w.Write(ctx, benchRecord(i*batch+j)); err != nil {
					return err
				}
			}
			return w.Flush(ctx)
		}}
	}
	return base, []interleave.Case{writer("writer-flush1", 1), writer("writer-batch100", 100), writer("writer-batch1000", 1000)}
}

func runWrite(b *testing.B, c store.Container, cfg interleave.Config) {
	base, cases := writeCases(b, c)
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

// BenchmarkWriteAzurite measures the cost per record of logging through a
// Writer against appending every record on its own, on Azurite over HTTP,
// interleaved in short rounds. Run it once:
//
//	scripts/with-azurite.sh go test -run '^$' -bench WriteAzurite -benchtime 1x ./patterns/logdata/
func BenchmarkWriteAzurite(b *testing.B) {
	runWrite(b, newContainer(b, backendtest.Azurite(b).Store), interleave.Config{Rounds: 15, Slice: 200 * time.Millisecond})
}

// BenchmarkWriteMemstore is the same on memstore: the client-side cost.
//
//	go test -run '^$' -bench WriteMemstore -benchtime 1x ./patterns/logdata/
func BenchmarkWriteMemstore(b *testing.B) {
	runWrite(b, newContainer(b, backendtest.Memstore().Store), interleave.Config{Rounds: 15})
}
