package series

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New(..., nil) adds and reads with the
// defaults, and a bad option value is refused with ErrInvalidInput naming
// the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	tbl := freshTable(t, backendtest.Memstore())
	s, err := New(tbl, "emp", "d", Layout{Slots: 24}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The default backoff is the head's (partition.Options.Backoff).
	if s.opts.attempts != 10 || s.opts.backoff != nil || s.opts.maxSegments != MaxSegments {
		t.Fatalf("nil options: %+v, want the defaults", s.opts)
	}
	if _, err := s.Add(t.Context(), 3, 2); err != nil {
		t.Fatal(err)
	}
	if sn, err := s.Read(t.Context()); err != nil || sn.Values[3] != int64(2) {
		t.Fatalf("Read: %+v, %v", sn, err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Attempts: -1}, "Options.Attempts -1: want 0 (the default, 10) or more"},
		{Options{MaxSegments: -1}, "Options.MaxSegments -1: want 0 (the default) to"},
		{Options{MaxSegments: MaxSegments + 1}, "Options.MaxSegments"},
	} {
		if _, err := New(tbl, "emp", "d", Layout{Slots: 24}, &tc.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrInvalidInput containing %s", tc.o, err, tc.want)
		}
	}
}
