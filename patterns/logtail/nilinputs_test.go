package logtail

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// New refuses nil inputs with an error matching store.ErrInvalidInput,
// instead of returning a stream that panics on first use.
func TestNewRefusesNilInputs(t *testing.T) {
	tbl := memstore.New().Table("logtailnil")
	for _, tc := range []struct {
		name string
		tbl  store.Table
		opts *Options
	}{
		{"nil table", nil, nil},
		{"nil table, options", nil, &Options{Attempts: 2}},
		{"negative attempts", tbl, &Options{Attempts: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s *Stream[claim]
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("New panicked: %v", r)
					}
				}()
				s, err = New[claim](tc.tbl, "p", tc.opts)
			}()
			if err == nil || s != nil {
				t.Fatalf("New = %v, %v: want an error", s, err)
			}
			if !errors.Is(err, store.ErrInvalidInput) {
				t.Fatalf("New: %v does not match store.ErrInvalidInput", err)
			}
			t.Log(err)
		})
	}
}
