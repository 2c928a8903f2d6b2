package logdata

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// The reader merges the blobs of a period by time, reads them a chunk at
// a time (records cut across chunks), lists one folder per period, and
// skips what is not a log blob of the scheme.
func TestReaderMergesAndSkips(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := newClock(at(14, 30, 0))
		w1 := mustWriter(t, c, "m", Options{ID: "one", Clock: clk.Now})
		w2 := mustWriter(t, c, "m", Options{ID: "two", Clock: clk.Now})
		var want []string
		for i := range 30 {
			w := w1
			if i%3 == 0 {
				w = w2
			}
			s := fmt.Sprintf("%s record %02d %s", w.ID(), i, strings.Repeat("z", i))
			mustWrite(t, w, s)
			want = append(want, s)
			clk.Add(7 * time.Minute) // 30 records over 3.5 hours
		}
		for _, w := range []*Writer{w1, w2} {
			if err := w.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		// Not log blobs of the scheme: skipped.
		mustPutBlob(t, c, "m/2026/11/24/15/notes.txt", "not a log\n")
		mustPutBlob(t, c, "m/2026/11/24/15/sub/one-00000009.log", "deeper\n")
		mustPutBlob(t, c, "m/2026/11/24/15/one-123.log", "short sequence\n")
		if _, err := c.CreateAppend(t.Context(), "m/2026/11/24/15/three-00000001.log", nil); err != nil {
			t.Fatal(err) // an empty log blob: nothing to read
		}
		for _, chunk := range []int{0, 7, 50} {
			got := pl(readAll(t, c, "m", ReaderOptions{ChunkSize: chunk}, at(0, 0, 0), at(23, 0, 0)))
			if !slices.Equal(got, want) {
				t.Fatalf("chunk %d: read back\n%q\nwant\n%q", chunk, got, want)
			}
		}
		r, err := NewReader(c, "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for p, err := range r.Blobs(t.Context(), at(14, 59, 0), at(15, 1, 0)) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
		wantNames := []string{
			"m/2026/11/24/14/one-00000001.log", "m/2026/11/24/14/two-00000001.log",
			"m/2026/11/24/15/one-00000002.log", "m/2026/11/24/15/three-00000001.log", "m/2026/11/24/15/two-00000002.log",
		}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("Blobs = %v, want %v", names, wantNames)
		}
		// Stopping early stops reading.
		n := 0
		for range r.Records(t.Context(), at(0, 0, 0), at(23, 0, 0)) {
			n++
			if n == 3 {
				break
			}
		}
	})
}

// A blob appended to after it was listed yields the records it had when
// listed; the next read sees the rest.
func TestReaderReadsWhatWasListed(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := newClock(at(9, 0, 0))
		w := mustWriter(t, c, "l", Options{ID: "w", Clock: clk.Now})
		mustWrite(t, w, "first")
		clk.Add(time.Second)
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(c, "l", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rec, err := range r.Records(t.Context(), at(9, 0, 0), at(10, 0, 0)) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(rec.Data))
			mustWrite(t, w, "second")
			if err := w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, []string{"first"}) {
			t.Fatalf("got %q, want the record listed", got)
		}
		if got := pl(readAll(t, c, "l", ReaderOptions{}, at(9, 0, 0), at(10, 0, 0))); !slices.Equal(got, []string{"first", "second"}) {
			t.Fatalf("second read %q", got)
		}
	})
}

// Content that is not in the format fails with ErrMalformed, naming the
// blob and the offset of the bad line.
func TestReaderMalformed(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		good := "2026-11-24T08:00:00.000000000Z\tok\n"
		for _, tc := range []struct {
			name, content, mention string
		}{
			{"no time", good + "hello\n", "offset 34"},
			{"bad time", good + "2026-13-24T08:00:00.000000000Z\tx\n", "offset 34"},
			{"bad escape", good + "2026-11-24T08:00:01.000000000Z\ta\\tb\n", `unknown escape \t`},
			{"lone backslash", good + "2026-11-24T08:00:01.000000000Z\tab\\\n", "lone backslash"},
			{"no final line feed", good + "2026-11-24T08:00:01.000000000Z\tcut", "without a line feed"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := containerOf(t, b)
				name := "bad/2026/11/24/08/w-00000001.log"
				if _, err := c.CreateAppend(t.Context(), name, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := c.AppendBlock(t.Context(), name, []byte(tc.content), nil); err != nil {
					t.Fatal(err)
				}
				var recs []string
				var last error
				for rec, err := range readerOf(t, c).Records(t.Context(), at(8, 0, 0), at(9, 0, 0)) {
					if err != nil {
						last = err
						break
					}
					recs = append(recs, string(rec.Data))
				}
				if !errors.Is(last, ErrMalformed) || !strings.Contains(last.Error(), name) || !strings.Contains(last.Error(), tc.mention) {
					t.Fatalf("got %v after %q; want ErrMalformed naming %s and %q", last, recs, name, tc.mention)
				}
				if !slices.Equal(recs, []string{"ok"}) {
					t.Fatalf("records before the error: %q", recs)
				}
			})
		}
	})
}

func readerOf(t *testing.T, c store.Container) *Reader {
	t.Helper()
	r, err := NewReader(c, "bad", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
