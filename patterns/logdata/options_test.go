package logdata

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: NewWriter and NewReader with nil
// options write and read records with the defaults, and a bad option
// value is refused with ErrInvalidInput naming the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	c := st.Container("nilopts")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(c, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.o.Period != Hourly || w.o.BlockSize != store.MaxAppendBlockSizeLegacy || w.o.MaxBlocks != store.MaxAppendBlocks ||
		w.o.MaxBuffered != 16*store.MaxAppendBlockSizeLegacy || w.o.Clock == nil || len(w.ID()) != 12 {
		t.Fatalf("nil options: %+v, want the defaults", w.o)
	}
	before := time.Now().Add(-time.Minute)
	mustWrite(t, w, "hello")
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(c, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.chunk != 4<<20 || r.o.Period != Hourly {
		t.Fatalf("nil reader options: %+v, want the defaults", r.o)
	}
	n := 0
	for rec, err := range r.Records(ctx, before, time.Now().Add(time.Minute)) {
		if err != nil {
			t.Fatal(err)
		}
		if string(rec.Data) != "hello" {
			t.Fatalf("read %q", rec.Data)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("read %d records, want 1", n)
	}

	for _, tc := range []struct {
		o       Options
		mention string
	}{
		{Options{Period: Period(7)}, "Options.Period"},
		{Options{BlockSize: 10}, "Options.BlockSize 10 is out of range: 64 to 104857600"},
		{Options{MaxBlocks: -1}, "Options.MaxBlocks -1 is out of range: 1 to 50000"},
		{Options{MaxBlobSize: -1}, "Options.MaxBlobSize -1 is negative: 0"},
		{Options{MaxDelay: -time.Second}, "Options.MaxDelay -1s is negative: 0"},
		{Options{BlockSize: 1024, MaxBuffered: 100}, "Options.MaxBuffered 100 is smaller than BlockSize 1024"},
		{Options{ID: "a/b"}, "writer id"},
	} {
		_, err := NewWriter(c, "p", &tc.o)
		wantRefused(t, err, tc.mention)
	}
	for _, tc := range []struct {
		o       ReaderOptions
		mention string
	}{
		{ReaderOptions{Period: -1}, "ReaderOptions.Period"},
		{ReaderOptions{ChunkSize: -1}, "ReaderOptions.ChunkSize -1 is negative: 0"},
	} {
		_, err := NewReader(c, "p", &tc.o)
		wantRefused(t, err, tc.mention)
	}
}
