package wide

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New(st, name, nil) writes and reads a
// value with the defaults, and a bad option value is refused with
// ErrInvalidInput naming the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	b := backendtest.Memstore()
	name := freshTable(t, b)
	w, err := New[Properties](b.Store, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.attempts != 10 || w.backoff == nil || w.random == nil || w.pageSize != 0 {
		t.Fatalf("nil options: attempts %d, page size %d; want the defaults", w.attempts, w.pageSize)
	}
	if _, err := w.Put(t.Context(), "p", "v", &Properties{"A": "x"}, ""); err != nil {
		t.Fatal(err)
	}
	if got, _, err := w.Get(t.Context(), "p", "v"); err != nil || got["A"] != "x" {
		t.Fatalf("Get: %v, %v", got, err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Attempts: -1}, "Options.Attempts -1 is negative: it must be 0 (the default, 10) or more"},
		{Options{PageSize: 1001}, "Options.PageSize"},
		{Options{PageSize: -1}, "Options.PageSize"},
	} {
		if _, err := New[Properties](b.Store, name, &c.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want ErrInvalidInput containing %s", c.o, err, c.want)
		}
	}
}
