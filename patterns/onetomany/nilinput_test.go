package onetomany_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/patterns/onetomany"
	"github.com/tablekit/tablekit/store"
)

// nilStore is a store.Store whose methods cannot be called: a typed nil
// pointer of it is the nil store of a program that forgot to open one.
type nilStore struct{ store.Store }

// noPanic runs f, turning a panic into a test failure named by what.
func noPanic(t *testing.T, what string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// TestNilInputsAreRefused: a nil store (untyped or a typed nil pointer),
// a nil parentOf and nil values given to every method are refused with an
// error matching store.ErrInvalidInput, never a panic, and nothing is
// written.
func TestNilInputsAreRefused(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		name := b.NewTable(t, "famnil")
		newWith := func(st store.Store, po func(*Review) Employee) func() error {
			return func() error {
				f, err := onetomany.New[Employee, Review](st, name, po)
				if err == nil {
					// What a caller does next: its first request.
					_, err = f.Get(ctx, Employee{Department: "Sales", ID: "1"})
					return fmt.Errorf("New accepted it, and Get then returned %v", err)
				}
				return err
			}
		}
		f := newFamilies(t, b)
		emp := func() *Employee { return &Employee{Department: "Sales", ID: "1"} }
		for _, c := range []struct {
			what string
			call func() error
			want string // a word the message must hold
		}{
			{"New with a nil store", newWith(nil, parentOf), "store"},
			{"New with a typed nil store", newWith((*nilStore)(nil), parentOf), "store"},
			{"New with a nil parentOf", newWith(b.Store, nil), "parentOf"},
			{"Insert of a nil parent", func() error { return f.Insert(ctx, nil) }, "nil"},
			{"Insert of a nil child", func() error { return f.Insert(ctx, emp(), nil) }, "nil"},
			{"Update of a nil parent", func() error { return f.Update(ctx, nil) }, "nil"},
			{"Update of a nil child", func() error { e := emp(); e.ETag = `W/"x"`; return f.Update(ctx, e, nil) }, "nil"},
			{"Add to a nil parent", func() error { return f.Add(ctx, nil, reviews("1", 2020)...) }, "nil"},
			{"Add of a nil child", func() error { return f.Add(ctx, emp(), nil) }, "nil"},
			{"Remove from a nil parent", func() error { return f.Remove(ctx, nil) }, "nil"},
			{"Remove of a nil child", func() error { return f.Remove(ctx, emp(), nil) }, "nil"},
			{"Delete of a nil parent", func() error { return f.Delete(ctx, nil) }, "nil"},
		} {
			err := noPanic(t, c.what, c.call)
			if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an error matching store.ErrInvalidInput naming %s", c.what, err, c.want)
			}
		}
		if n := rowsOf(t, f.Table()); n != 0 {
			t.Fatalf("%d rows written by refused calls", n)
		}
	})
}
