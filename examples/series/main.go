// Command series shows the data series pattern: an employee's instant
// message counts per hour of a day kept in one entity and incremented by
// many writers at once without losing a count, a year of daily values
// that spills into a second entity at the 252-property limit, and large
// values spread by the 1 MiB limit. It runs on memstore by default; pass
// -conn (or set TABLEKIT_CONN) to run it against Azurite or Azure.
//
//	go run ./examples/series
//	go run ./examples/series -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/patterns/series"
	"github.com/tablekit/tablekit/store"
)

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "MessageCounts", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("series on %s: %v", name, err)
	}
}

const (
	writers = 8
	each    = 25
)

func run(ctx context.Context, w io.Writer, st store.Store, table string) (err error) {
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.WithoutCancel(ctx), table); err == nil {
			err = derr
		}
	}()
	tbl := st.Table(table)

	// Many writers count messages into one entity at once; each has its
	// own Series, as separate processes would.
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := series.New(tbl, "emp000123", "20261122", series.Layout{Slots: 24}, &series.Options{Attempts: 200})
			if err != nil {
				errs <- err
				return
			}
			for j := range each {
				if _, err := s.Add(ctx, 9+(i+j)%6, 1); err != nil {
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
	day, err := series.New(tbl, "emp000123", "20261122", series.Layout{Slots: 24}, nil)
	if err != nil {
		return err
	}
	snap, err := day.Read(ctx)
	if err != nil {
		return err
	}
	counts, err := snap.Int64s()
	if err != nil {
		return err
	}
	var sum int64
	for _, c := range counts {
		sum += c
	}
	fmt.Fprintf(w, "%d writers added %d messages at once: %d counted, %d writes applied, none lost\n", writers, writers*each, sum, snap.Version)
	fmt.Fprintf(w, "the day in one read of %d entity: %v\n", snap.Segments, counts)

	// A year of daily values passes 252 properties: a second entity.
	year, err := series.New(tbl, "emp000123", "2026", series.Layout{Slots: 365, Prefix: "Day"}, nil)
	if err != nil {
		return err
	}
	err = year.Update(ctx, func([]any) (map[int]any, error) {
		m := map[int]any{}
		for d := range 365 {
			m[d] = int64(d%7) * 10
		}
		return m, nil
	})
	if err != nil {
		return err
	}
	ys, err := year.Read(ctx)
	if err != nil {
		return err
	}
	yv, _ := ys.Int64s()
	fmt.Fprintf(w, "a year of daily values: %d slots in %d entities, read back in order: first week %v\n", len(yv), ys.Segments, yv[:7])

	// Large values spread by the 1 MiB limit.
	frames, err := series.New(tbl, "sensor7", "frames", series.Layout{Slots: 24}, nil)
	if err != nil {
		return err
	}
	err = frames.Update(ctx, func([]any) (map[int]any, error) {
		m := map[int]any{}
		for i := range 24 {
			m[i] = bytes.Repeat([]byte{byte(i)}, 60_000)
		}
		return m, nil
	})
	if err != nil {
		return err
	}
	fs, err := frames.Read(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "24 frames of 60,000 bytes: %d entities of at most 1 MiB\n", fs.Segments)

	// A value no entity can hold is refused before anything is sent.
	refused := frames.Set(ctx, 0, bytes.Repeat([]byte{1}, 70_000))
	if !errors.Is(refused, store.ErrTooLarge) {
		return fmt.Errorf("a 70,000-byte value: %v, want a size error", refused)
	}
	after, err := frames.Read(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "a 70,000-byte value is refused (%s), the series unchanged at version %d\n", store.Code(refused), after.Version)
	return nil
}
