package wide

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// requestCounter counts the requests made through the tables of a store
// it wraps (the tables keep their typed lane).
type requestCounter struct {
	mu sync.Mutex
	n  int
}

func (c *requestCounter) wrap(st store.Store) store.Store {
	return storetest.WrapStore(st, func(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
		if strings.HasPrefix(call.Op, "Table.") {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
		return do(ctx)
	})
}

func (c *requestCounter) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestPutRefusesNilPropertyValue: a Properties value holding a nil
// property is refused before any request, naming the property, on a new
// value and over an existing one; nothing is written and the stored value
// is unchanged.
func TestPutRefusesNilPropertyValue(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		counter := &requestCounter{}
		w := newWide[Properties](t, counter.wrap(b.Store), freshTable(t, b), nil)
		bad := Properties{"A": "x", "Gone": nil, "Z": int32(1)}
		_, err := w.Put(ctx, "p", "new", &bad, "")
		if !errors.Is(err, store.ErrInvalidInput) || store.SourceOf(err) != store.SourceClient || !strings.Contains(err.Error(), `"Gone"`) {
			t.Fatalf("Put of a nil property: %v, want an invalid-input error from the client naming \"Gone\"", err)
		}
		if n := counter.requests(); n != 0 {
			t.Fatalf("the refused Put made %d requests", n)
		}
		if all := rows(t, w.Table(), "p"); len(all) != 0 {
			t.Fatalf("the refused Put wrote %d rows", len(all))
		}
		// Over an existing value, with each kind of condition.
		good := Properties{"A": "x", "Gone": "still here"}
		etag, err := w.Put(ctx, "p", "old", &good, "")
		if err != nil {
			t.Fatal(err)
		}
		before := rows(t, w.Table(), "p")
		sent := counter.requests()
		for _, cond := range []store.ETag{etag, store.ETagAny} {
			if _, err := w.Put(ctx, "p", "old", &bad, cond); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"Gone"`) {
				t.Fatalf("Put of a nil property over a value (If-Match %s): %v", cond, err)
			}
		}
		if n := counter.requests() - sent; n != 0 {
			t.Fatalf("the refused Puts made %d requests", n)
		}
		after := rows(t, w.Table(), "p")
		if len(after) != len(before) || after[0].ETag != before[0].ETag {
			t.Fatalf("the refused Puts changed the stored rows (%d rows, ETag %s; were %d, %s)", len(after), after[0].ETag, len(before), before[0].ETag)
		}
		got, _, err := w.Get(ctx, "p", "old")
		if err != nil || got["Gone"] != "still here" {
			t.Fatalf("the stored value after the refused Puts: %v, %v", got, err)
		}
	})
}

// nilStore is a store.Store whose methods cannot be called: a typed nil
// pointer of it is the nil store of a program that forgot to open one.
type nilStore struct{ store.Store }

// TestNilInputsAreRefused: a nil store (untyped or a typed nil pointer),
// a nil value pointer and a nil map are refused with errors matching
// store.ErrInvalidInput, never a panic, and nothing is written.
func TestNilInputsAreRefused(t *testing.T) {
	b := backendtest.Memstore()
	name := freshTable(t, b)
	w := newWide[Properties](t, b.Store, name, nil)
	d := newWide[Doc](t, b.Store, name, nil)
	var nilMap Properties
	for _, c := range []struct {
		what string
		call func() error
		want string
	}{
		{"New with a nil store", func() error { _, err := New[Properties](nil, name, nil); return err }, "store"},
		{"New with a typed nil store", func() error { _, err := New[Properties]((*nilStore)(nil), name, nil); return err }, "store"},
		{"Put of a nil pointer", func() error { _, err := w.Put(t.Context(), "p", "v", nil, ""); return err }, "nil"},
		{"Put of a nil struct pointer", func() error { _, err := d.Put(t.Context(), "p", "v", nil, ""); return err }, "nil"},
		{"Put of a nil map", func() error { _, err := w.Put(t.Context(), "p", "v", &nilMap, ""); return err }, "nil"},
	} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return c.call()
		}()
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error matching store.ErrInvalidInput naming %s", c.what, err, c.want)
		}
	}
	if all := rows(t, w.Table(), "p"); len(all) != 0 {
		t.Fatalf("%d rows written by refused calls", len(all))
	}
}
