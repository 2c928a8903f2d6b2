package logdata

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// wantRefused checks a bad-input error: InvalidInput (400) from tablekit's
// own checks, naming what the message should.
func wantRefused(t *testing.T, err error, mention string) {
	t.Helper()
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeInvalidInput || se.Status != 400 || se.Source != store.SourceClient {
		t.Fatalf("got %v, want InvalidInput (400) from the client", err)
	}
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), mention) {
		t.Fatalf("error %q does not mention %q", err, mention)
	}
}

func TestNewWriterRefusesBadOptions(t *testing.T) {
	c := memstore.New().Container("logs")
	long := strings.Repeat("p", store.MaxBlobNameUnits)
	for _, tc := range []struct {
		name    string
		prefix  string
		o       Options
		mention string
	}{
		{"no prefix", "", Options{}, "prefix is empty"},
		{"leading slash", "/logs", Options{}, `"/logs"`},
		{"trailing slash", "logs/", Options{}, `"logs/"`},
		{"empty segment", "a//b", Options{}, `"a//b"`},
		{"control character", "a\x01b", Options{}, "control character"},
		{"prefix too long", long, Options{}, "limit of 1024 characters"},
		{"id with a slash", "p", Options{ID: "a/b"}, `'/' at offset 1`},
		{"id not ASCII", "p", Options{ID: "wé"}, "offset 1"},
		{"id too long", "p", Options{ID: strings.Repeat("i", 65)}, "1 to 64"},
		{"period", "p", Options{Period: Period(7)}, "Period(7)"},
		{"block too small", "p", Options{BlockSize: 10}, "BlockSize 10"},
		{"block over the service's limit", "p", Options{BlockSize: store.MaxAppendBlockSize + 1}, "104857601"},
		{"too many blocks", "p", Options{MaxBlocks: store.MaxAppendBlocks + 1}, "50001"},
		{"negative blob size", "p", Options{MaxBlobSize: -1}, "MaxBlobSize -1"},
		{"negative delay", "p", Options{MaxDelay: -time.Second}, "MaxDelay -1s"},
		{"buffer below a block", "p", Options{BlockSize: 1024, MaxBuffered: 100}, "MaxBuffered 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(c, tc.prefix, &tc.o)
			if w != nil {
				t.Fatal("NewWriter returned a writer with its error")
			}
			wantRefused(t, err, tc.mention)
		})
	}
	_, err := NewWriter(nil, "p", nil)
	wantRefused(t, err, "nil")
}

func TestNewReaderRefusesBadOptions(t *testing.T) {
	c := memstore.New().Container("logs")
	for _, tc := range []struct {
		prefix  string
		o       ReaderOptions
		mention string
	}{
		{"", ReaderOptions{}, "prefix is empty"},
		{"p/", ReaderOptions{}, `"p/"`},
		{"p", ReaderOptions{Period: -1}, "Period(-1)"},
		{"p", ReaderOptions{ChunkSize: -1}, "ChunkSize -1"},
	} {
		_, err := NewReader(c, tc.prefix, &tc.o)
		wantRefused(t, err, tc.mention)
	}
	r, err := NewReader(c, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rng := range [][2]time.Time{{at(10, 0, 0), at(9, 0, 0)}, {at(10, 0, 0), at(10, 0, 0)}, {{}, at(10, 0, 0)}} {
		n := 0
		for _, err := range r.Records(context.Background(), rng[0], rng[1]) {
			n++
			wantRefused(t, err, "empty or reversed")
		}
		for _, err := range r.Blobs(context.Background(), rng[0], rng[1]) {
			n++
			wantRefused(t, err, "empty or reversed")
		}
		if n != 2 {
			t.Fatalf("range %v: %d yields, want one error from each iterator", rng, n)
		}
	}
}

// A record too large for one block is refused before anything is sent,
// and does not disturb the records around it; a closed writer refuses
// records; a reader of a missing container says so.
func TestBadWritesAreRefused(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		c := containerOf(t, b)
		clk := newClock(at(7, 0, 0))
		w := mustWriter(t, c, "b", Options{ID: "w", BlockSize: 128, Clock: clk.Now})
		mustWrite(t, w, "before")
		// 96 bytes, 97 with the backslash's escape: a line of 129 bytes.
		big := strings.Repeat("x", 95) + `\`
		err := w.Write(t.Context(), []byte(big))
		var se *store.Error
		if !errors.As(err, &se) || se.Code != store.CodeRequestBodyTooLarge || se.Status != 413 || se.Source != store.SourceClient ||
			!errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "line of 129 bytes") || !strings.Contains(err.Error(), "block size of 128") {
			t.Fatalf("got %v; want RequestBodyTooLarge (413) from the client naming the line's size and the block size", err)
		}
		mustWrite(t, w, strings.Repeat("y", 96)) // 128 bytes: fits
		if err := w.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(t.Context(), []byte("late")); !errors.Is(err, ErrClosed) {
			t.Fatalf("Write after Close: %v, want ErrClosed", err)
		}
		got := payloads(readAll(t, c, "b", ReaderOptions{}, at(7, 0, 0), at(8, 0, 0)))
		if len(got) != 2 || got[0] != "before" || len(got[1]) != 96 {
			t.Fatalf("read back %q", got)
		}

		r, err := NewReader(b.Store.Container("nosuchcontainer"), "b", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range r.Records(t.Context(), at(7, 0, 0), at(8, 0, 0)) {
			if store.Code(err) != store.CodeContainerNotFound || !strings.Contains(err.Error(), "b/2026/11/24/07/") {
				t.Fatalf("reading a missing container: %v; want ContainerNotFound naming the folder", err)
			}
		}
	})
}

// Write refuses records once MaxBuffered bytes wait because appends fail,
// naming the last failure; the records it accepted are all appended once
// the store recovers.
func TestBacklog(t *testing.T) {
	var down bool
	st := memstore.New(memstore.WithFaults(func(op memstore.Operation, _ string) error {
		if down && op == memstore.OpAppendBlock {
			return memstore.ServerBusy()
		}
		return nil
	}))
	c := newContainer(t, st)
	clk := newClock(at(6, 0, 0))
	w := mustWriter(t, c, "q", Options{ID: "w", BlockSize: 64, MaxBuffered: 256, Clock: clk.Now})
	down = true
	accepted := 0
	var err error
	for i := range 20 {
		if err = w.Write(t.Context(), []byte(strings.Repeat("r", 20))); err != nil {
			break
		}
		accepted = i + 1
	}
	if !errors.Is(err, ErrBacklog) || !errors.Is(err, store.ErrThrottled) {
		t.Fatalf("after %d records: %v; want ErrBacklog wrapping the 503", accepted, err)
	}
	if st := w.Stats(); st.Pending != accepted || accepted == 0 {
		t.Fatalf("stats %+v, %d accepted", st, accepted)
	}
	if err := w.Flush(t.Context()); !errors.Is(err, store.ErrThrottled) {
		t.Fatalf("Flush while down: %v; want the 503", err)
	}
	down = false
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, "q", ReaderOptions{}, at(6, 0, 0), at(7, 0, 0)); len(got) != accepted {
		t.Fatalf("read back %d records, want the %d accepted", len(got), accepted)
	}
}
