package large

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New(..., nil) builds a Store with the
// defaults that writes and reads a document, and a bad option value is
// refused with ErrInvalidInput naming the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	ctx := t.Context()
	st := backendtest.Memstore().Store
	s, err := New[Doc](st, "Nilopts", "nilopts", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.o.Threshold != DefaultThreshold || s.o.EntityBudget != DefaultEntityBudget || s.o.Grace != DefaultGrace ||
		s.o.Attempts != DefaultAttempts || s.o.Parallel != DefaultParallel || s.o.Now == nil || s.o.Sleep == nil {
		t.Fatalf("nil options: %+v, want the defaults", s.o)
	}
	if err := s.Create(ctx); err != nil {
		t.Fatal(err)
	}
	d := Doc{Folder: "f", ID: "1", Body: strings.Repeat("x", 40_000)}
	if err := s.Put(ctx, &d); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "f", "1")
	if err != nil || got.Body != d.Body {
		t.Fatalf("Get: %v", err)
	}
	for _, c := range []struct {
		field, limit string
		o            Options
	}{
		{"Threshold", "65536", Options{Threshold: MaxThreshold + 1}},
		{"Threshold", "65536", Options{Threshold: -1}},
		{"EntityBudget", "1048576", Options{EntityBudget: store.MaxEntitySize + 1}},
		{"Grace", "0", Options{Grace: -time.Second}},
		{"Attempts", "0", Options{Attempts: -1}},
		{"Parallel", "0", Options{Parallel: -1}},
	} {
		_, err := New[Doc](st, "Nilopts", "nilopts", &c.o)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.limit) {
			t.Errorf("bad %s: %v; want ErrInvalidInput naming it and %s", c.field, err, c.limit)
		}
	}
}
