package logtail

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New(tbl, pk, nil) appends and reads
// with the defaults, and a bad option value is refused with
// ErrInvalidInput naming the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	if err := st.CreateTable(ctx, "logtailnilopts"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("logtailnilopts")
	s, err := New[claim](tbl, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.attempts != DefaultAttempts || s.prefix != "" || s.now == nil || s.sleep == nil {
		t.Fatalf("nil options: %+v, want the defaults", s)
	}
	if _, err := s.Append(ctx, claim{Note: "n"}); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, s.Since(ctx, time.Now().Add(-time.Hour))); len(got) != 1 {
		t.Fatalf("read %d events, want 1", len(got))
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Attempts: -1}, "Options.Attempts -1: want 0 (the default, 4) or more"},
		{Options{Prefix: strings.Repeat("p", 1010)}, "Options.Prefix"},
	} {
		if _, err := New[claim](tbl, "p", &tc.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrInvalidInput containing %s", tc.o, err, tc.want)
		}
	}
}
