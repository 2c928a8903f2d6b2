package partition_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// nilTable is a store.Table whose methods cannot be called: a typed nil
// pointer of it is the nil table of a program that forgot to open one.
type nilTable struct{ store.Table }

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

// TestNilInputsAreRefused: a nil table (untyped or a typed nil pointer)
// is refused by New and NewOutbox, and an UnknownError the package did
// not return (the zero value, or a nil pointer) by Resolve, with errors
// matching store.ErrInvalidInput, never a panic.
func TestNilInputsAreRefused(t *testing.T) {
	ctx := t.Context()
	tbl := newTable(t, backendtest.Memstore())
	for _, c := range []struct {
		what string
		call func() error
		want string // a word the message must hold
	}{
		{"New with a nil table", func() error {
			p, err := partition.New(nil, "p", nil)
			if err == nil {
				_, err = p.Begin(ctx)
				return fmt.Errorf("New accepted it, and Begin then returned %v", err)
			}
			return err
		}, "table"},
		{"New with a typed nil table", func() error {
			p, err := partition.New((*nilTable)(nil), "p", nil)
			if err == nil {
				_, err = p.Begin(ctx)
				return fmt.Errorf("New accepted it, and Begin then returned %v", err)
			}
			return err
		}, "table"},
		{"NewOutbox with a nil table", func() error {
			o, err := partition.NewOutbox(nil, nil)
			if err == nil {
				_, err = o.Pending(ctx, "p")
				return fmt.Errorf("NewOutbox accepted it, and Pending then returned %v", err)
			}
			return err
		}, "table"},
		{"NewOutbox with a typed nil table", func() error {
			o, err := partition.NewOutbox((*nilTable)(nil), nil)
			if err == nil {
				_, err = o.Pending(ctx, "p")
				return fmt.Errorf("NewOutbox accepted it, and Pending then returned %v", err)
			}
			return err
		}, "table"},
		{"Resolve of a zero UnknownError", func() error {
			_, err := (&partition.UnknownError{}).Resolve(ctx)
			return err
		}, "Commit"},
		{"Resolve of a nil *UnknownError", func() error {
			_, err := (*partition.UnknownError)(nil).Resolve(ctx)
			return err
		}, "Commit"},
		{"BeginAt with the zero Fence", func() error {
			_, err := open(t, tbl, "p", nil).BeginAt(partition.Fence{})
			return err
		}, "fence"},
		{"Txn.Add of the zero action", func() error {
			return begin(t, open(t, tbl, "p", nil)).Add("x", store.Action{})
		}, "reserved"},
		{"Txn.Outbox of the zero message", func() error {
			_, err := begin(t, open(t, tbl, "p", nil)).Outbox(partition.Message{})
			return err
		}, "topic"},
	} {
		err := noPanic(t, c.what, c.call)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error matching store.ErrInvalidInput naming %s", c.what, err, c.want)
		}
	}
	if rows := raw(t, tbl, "p"); len(rows) != 0 {
		t.Fatalf("%d rows written by refused calls", len(rows))
	}
}
