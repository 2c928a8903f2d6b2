package periods

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New(st, prefix, period, nil) takes the
// defaults and writes into its period's table, and a bad option value is
// refused with ErrInvalidInput naming the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	st := memstore.New()
	p, err := New(st, "Nilopts", keys.Day, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := p.Options()
	if o.Retention != 0 || o.Attempts != 8 || o.Backoff != 2*time.Second || o.MaxBackoff != 30*time.Second ||
		o.Now == nil || o.Sleep == nil || o.Random == nil || p.Prefix() != "Nilopts" || p.Period() != keys.Day {
		t.Fatalf("nil options: %+v, want the defaults", o)
	}
	r, err := NewRepo[login](p)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	if err := r.Insert(t.Context(), at, &login{User: "ann", ID: "1", At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(t.Context(), at, "ann", "1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Attempts: -1}, "Options.Attempts -1: want 0 (the default, 8) or more"},
		{Options{Retention: -time.Hour}, "Options.Retention -1h0m0s is negative"},
		{Options{Backoff: -time.Second}, "Options.Backoff -1s"},
		{Options{MaxBackoff: -time.Second}, "Options.MaxBackoff -1s"},
		{Options{Backoff: time.Minute}, "Options.MaxBackoff 30s is below Options.Backoff 1m0s"},
	} {
		if _, err := New(st, "Nilopts", keys.Day, &tc.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrInvalidInput containing %s", tc.o, err, tc.want)
		}
	}
}
