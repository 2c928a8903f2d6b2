package logdata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// Records come back as written, in time order, from blobs named by the
// hour they fall in; payloads of any bytes survive the line format.
func TestWriteReadRoundTrip(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := newClock(at(15, 58, 0))
		w := mustWriter(t, c, "web/eu", Options{ID: "w1", Clock: clk.Now})
		payloads := []string{"GET / 200", "", "multi\nline\r\nrecord", `back\slash \n literal`, "tab\tinside", "\x00\xff binary", "last of the hour"}
		for _, p := range payloads {
			mustWrite(t, w, p)
			clk.Add(10 * time.Second)
		}
		clk.Add(time.Minute) // 16:00:10
		mustWrite(t, w, "next hour")
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range blobNames(t, c, "web/") {
			names = append(names, p.Name)
			if p.Type != store.AppendBlob {
				t.Errorf("%s is a %s", p.Name, p.Type)
			}
		}
		want := []string{"web/eu/2026/11/24/15/w1-00000001.log", "web/eu/2026/11/24/16/w1-00000002.log"}
		if !slices.Equal(names, want) {
			t.Fatalf("blobs %v, want %v", names, want)
		}
		raw, _, err := c.Get(t.Context(), want[0])
		if err != nil {
			t.Fatal(err)
		}
		if first := "2026-11-24T15:58:00.000000000Z\tGET / 200\n2026-11-24T15:58:10.000000000Z\t\n2026-11-24T15:58:20.000000000Z\tmulti\\nline\\r\\nrecord\n"; !strings.HasPrefix(string(raw), first) {
			t.Fatalf("blob starts %q, want %q", raw[:min(len(raw), len(first))], first)
		}
		recs := readAll(t, c, "web/eu", ReaderOptions{}, at(15, 0, 0), at(17, 0, 0))
		if got := pl(recs); !slices.Equal(got, append(slices.Clone(payloads), "next hour")) {
			t.Fatalf("read back %q", got)
		}
		for i, r := range recs[:len(payloads)] {
			if wantAt := at(15, 58, 10*i); !r.Time.Equal(wantAt) || r.Blob != want[0] {
				t.Errorf("record %d at %v in %s, want %v in %s", i, r.Time, r.Blob, wantAt, want[0])
			}
		}
		// A narrower range: [15:58:20, 16:00:10) leaves out both ends.
		got := pl(readAll(t, c, "web/eu", ReaderOptions{}, at(15, 58, 20), at(16, 0, 10)))
		if !slices.Equal(got, payloads[2:]) {
			t.Fatalf("range read %q, want %q", got, payloads[2:])
		}
		st := w.Stats()
		t.Logf("%s: %+v", b.Name, st)
		if st.Records != 8 || st.Blobs != 2 || st.Blocks != 2 || st.Periods != 1 || st.Pending != 0 {
			t.Errorf("stats %+v: want 8 records in 2 blocks of 2 blobs, 1 new period", st)
		}
	})
}

func pl(recs []Record) []string { return payloads(recs) }

// Rollover: a new blob when the next block would pass MaxBlobSize, after
// MaxBlocks blocks, and for a new day with Daily blobs; sequence numbers
// keep one writer's blobs in order.
func TestRollover(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		for _, tc := range []struct {
			name  string
			o     Options
			n     int
			blobs int
			check func(t *testing.T, p store.BlobProps, blocks int)
		}{
			{"by size", Options{BlockSize: 200, MaxBlobSize: 1000}, 60, 3, func(t *testing.T, p store.BlobProps, _ int) {
				if p.Size > 1000 {
					t.Errorf("%s is %d bytes, over MaxBlobSize 1000", p.Name, p.Size)
				}
			}},
			{"by blocks", Options{BlockSize: 100, MaxBlocks: 3}, 40, 7, func(t *testing.T, p store.BlobProps, blocks int) {
				if blocks > 3 {
					t.Errorf("%s has %d blocks, over MaxBlocks 3", p.Name, blocks)
				}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := containerOf(t, b)
				clk := newClock(at(9, 0, 0))
				tc.o.ID, tc.o.Clock = "roll", clk.Now
				w := mustWriter(t, c, "app", tc.o)
				var want []string
				for i := range tc.n {
					s := fmt.Sprintf("record %03d", i)
					want = append(want, s)
					mustWrite(t, w, s)
					clk.Add(time.Second)
				}
				if err := w.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
				blobs := blobNames(t, c, "app/")
				for i, p := range blobs {
					if wantName := fmt.Sprintf("app/2026/11/24/09/roll-%08d.log", i+1); p.Name != wantName {
						t.Errorf("blob %d is %s, want %s", i, p.Name, wantName)
					}
					_, full, err := c.GetRange(t.Context(), p.Name, 0, 0)
					if err != nil {
						t.Fatal(err)
					}
					tc.check(t, p, full.Blocks)
				}
				if len(blobs) != tc.blobs {
					t.Errorf("%d blobs, want %d", len(blobs), tc.blobs)
				}
				got := pl(readAll(t, c, "app", ReaderOptions{}, at(9, 0, 0), at(10, 0, 0)))
				if !slices.Equal(got, want) {
					t.Fatalf("read back %d records, want %d: %q", len(got), len(want), got)
				}
				t.Logf("%s %s: %+v", b.Name, tc.name, w.Stats())
			})
		}

		t.Run("daily", func(t *testing.T) {
			c := containerOf(t, b)
			clk := newClock(at(23, 59, 58))
			w := mustWriter(t, c, "d", Options{ID: "day", Period: Daily, Clock: clk.Now})
			for i := range 4 {
				mustWrite(t, w, fmt.Sprint(i))
				clk.Add(time.Second)
			}
			if err := w.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range blobNames(t, c, "d/") {
				names = append(names, p.Name)
			}
			if want := []string{"d/2026/11/24/day-00000001.log", "d/2026/11/25/day-00000002.log"}; !slices.Equal(names, want) {
				t.Fatalf("blobs %v, want %v", names, want)
			}
			got := pl(readAll(t, c, "d", ReaderOptions{Period: Daily}, at(0, 0, 0), at(0, 0, 0).AddDate(0, 0, 2)))
			if !slices.Equal(got, []string{"0", "1", "2", "3"}) {
				t.Fatalf("read back %q", got)
			}
		})
	})
}

// At the service's limit of 50,000 blocks the writer moves to a new blob
// before the service refuses the 50,001st append. memstore only: it takes
// 50,001 appends (about 95 s on Azurite).
func TestRolloverAtTheServiceBlockLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("50,001 appends")
	}
	c := containerOf(t, backendtest.Memstore())
	clk := newClock(at(12, 0, 0))
	// A 64-byte block holds one record of this size: one append each.
	w := mustWriter(t, c, "full", Options{ID: "w", BlockSize: 64, Clock: clk.Now})
	ctx := context.Background()
	for i := range store.MaxAppendBlocks + 1 {
		if err := w.Write(ctx, fmt.Appendf(nil, "%020d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	blobs := blobNames(t, c, "full/")
	if len(blobs) != 2 {
		t.Fatalf("%d blobs, want 2", len(blobs))
	}
	_, p, err := c.GetRange(ctx, blobs[0].Name, 0, 0)
	if err != nil || p.Blocks != store.MaxAppendBlocks {
		t.Fatalf("first blob: %d blocks, %v; want %d", p.Blocks, err, store.MaxAppendBlocks)
	}
	st := w.Stats()
	if st.Blocks != store.MaxAppendBlocks+1 || st.Rollovers != 1 || st.Records != store.MaxAppendBlocks+1 {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("%+v", st)
}

// When the service refuses an append because the blob is full, deleted or
// taken (as if the writer's count were wrong, or another writer used its
// id), the writer moves to a new blob and loses nothing.
func TestBlobChangedUnderTheWriter(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		for _, tc := range []struct {
			name   string
			change func(c store.Container, blob string) error
		}{
			{"deleted", func(c store.Container, blob string) error { return c.DeleteBlob(context.Background(), blob, "") }},
			{"appended by another writer", func(c store.Container, blob string) error {
				_, err := c.AppendBlock(context.Background(), blob, []byte("intruder\n"), nil)
				return err
			}},
			{"replaced by a block blob", func(c store.Container, blob string) error {
				if err := c.DeleteBlob(context.Background(), blob, ""); err != nil {
					return err
				}
				_, err := c.Put(context.Background(), blob, []byte("x"), nil)
				return err
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := containerOf(t, b)
				clk := newClock(at(8, 0, 0))
				w := mustWriter(t, c, "x", Options{ID: "w", Clock: clk.Now})
				mustWrite(t, w, "one")
				if err := w.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := tc.change(c, "x/2026/11/24/08/w-00000001.log"); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, w, "two")
				if err := w.Close(t.Context()); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if st := w.Stats(); st.Rollovers != 1 || st.Blobs != 2 || st.Records != 2 {
					t.Fatalf("stats %+v: want one rollover to a second blob", st)
				}
				raw, _, err := c.Get(t.Context(), "x/2026/11/24/08/w-00000002.log")
				if err != nil || !bytes.HasSuffix(raw, []byte("\ttwo\n")) || bytes.Count(raw, []byte("\n")) != 1 {
					t.Fatalf("second blob %q, %v; want the record \"two\" alone", raw, err)
				}
			})
		}
	})
}

// A name already taken (a block blob of someone else, or a blob of an
// earlier run of the same writer id) is skipped: the writer never writes a
// blob it did not create.
func TestTakenNamesAreSkipped(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := newClock(at(10, 0, 0))
		mustPutBlob(t, c, "s/2026/11/24/10/w-00000001.log", "someone else's\n")
		earlier := mustWriter(t, c, "s", Options{ID: "w", Clock: clk.Now})
		mustWrite(t, earlier, "earlier run")
		if err := earlier.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		// A restart with the same id in the same hour.
		w := mustWriter(t, c, "s", Options{ID: "w", Clock: clk.Now})
		mustWrite(t, w, "this run")
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range blobNames(t, c, "s/") {
			names = append(names, p.Name)
		}
		want := []string{"s/2026/11/24/10/w-00000001.log", "s/2026/11/24/10/w-00000002.log", "s/2026/11/24/10/w-00000003.log"}
		if !slices.Equal(names, want) {
			t.Fatalf("blobs %v, want %v", names, want)
		}
		raw, _, _ := c.Get(t.Context(), want[0])
		if string(raw) != "someone else's\n" {
			t.Fatalf("the taken blob was changed: %q", raw)
		}
		// The reader finds the foreign blob malformed and says where.
		r, err := NewReader(c, "s", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range r.Records(t.Context(), at(10, 0, 0), at(11, 0, 0)) {
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want[0]) || !strings.Contains(err.Error(), "offset 0") {
				t.Fatalf("error %v does not name the blob and the offset", err)
			}
			return
		}
		t.Fatal("reading a foreign blob gave no error")
	})
}

func mustPutBlob(t *testing.T, c store.Container, name, data string) {
	t.Helper()
	if _, err := c.Put(t.Context(), name, []byte(data), nil); err != nil {
		t.Fatal(err)
	}
}

// MaxDelay: the first Write that finds the buffer's oldest record that
// much older sends the buffer, itself included.
func TestMaxDelayFlushes(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := newClock(at(10, 0, 0))
		w := mustWriter(t, c, "md", Options{ID: "w", MaxDelay: 5 * time.Second, Clock: clk.Now})
		mustWrite(t, w, "a")
		clk.Add(4 * time.Second)
		mustWrite(t, w, "b")
		if st := w.Stats(); st.Blocks != 0 || st.Pending != 2 {
			t.Fatalf("4 s in: %+v, want 2 records buffered", st)
		}
		clk.Add(time.Second)
		mustWrite(t, w, "c")
		if st := w.Stats(); st.Blocks != 1 || st.Records != 3 || st.Pending != 0 {
			t.Fatalf("5 s in: %+v, want the 3 records sent in one append", st)
		}
		if got := pl(readAll(t, c, "md", ReaderOptions{}, at(10, 0, 0), at(11, 0, 0))); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("read back %q", got)
		}
	})
}
