package partition_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New and NewOutbox with nil options work
// with the defaults, and a bad option value is refused with
// ErrInvalidInput naming the field and its limit.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	ctx := t.Context()
	tbl := newTable(t, backendtest.Memstore())
	p, err := partition.New(tbl, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(ctx, nil); err != nil {
		t.Fatalf("Read with the default options: %v", err)
	}
	if _, err := partition.NewOutbox(tbl, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    partition.Options
		want string
	}{
		{partition.Options{History: -1}, "Options.History -1 is out of range: it must be 1 to"},
		{partition.Options{History: partition.MaxHistory + 1}, "Options.History"},
		{partition.Options{ReadAttempts: -1}, "Options.ReadAttempts -1 is negative: it must be 0 (the default, 8) or more"},
		{partition.Options{ResolveAttempts: -1}, "Options.ResolveAttempts -1 is negative: it must be 0 (the default, 8) or more"},
	} {
		_, err := partition.New(tbl, "p", &c.o)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New %+v: %v; want ErrInvalidInput containing %s", c.o, err, c.want)
		}
		_, err = partition.NewOutbox(tbl, &c.o)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewOutbox %+v: %v; want ErrInvalidInput containing %s", c.o, err, c.want)
		}
	}
}
