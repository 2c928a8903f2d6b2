package eventual_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestNilOptionsTakeTheDefaults: New(st, queue, nil) builds an engine
// that carries an operation through, and a bad option value is refused
// with ErrInvalidInput naming the field.
func TestNilOptionsTakeTheDefaults(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := t.Context()
	st := e.B.Store
	eng, err := eventual.New(st, "nilopts"+e.Names, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	src, dst := e.B.NewTable(t, "nilsrc"), e.B.NewTable(t, "nildst")
	if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
		if err := tx.Insert("row", store.Entity{RowKey: "r"}); err != nil {
			return err
		}
		return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "p", RowKey: "r"}))
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := eng.ProcessOnce(ctx); err != nil || n != 1 {
		t.Fatalf("ProcessOnce: %d, %v", n, err)
	}
	if _, err := st.Table(dst).Get(ctx, "p", "r", nil); err != nil {
		t.Fatalf("the copy: %v", err)
	}

	for field, o := range map[string]eventual.Options{
		"MaxReceives":   {MaxReceives: -1},
		"Visibility":    {Visibility: time.Millisecond},
		"StepAttempts":  {StepAttempts: -1},
		"StepTimeout":   {StepTimeout: -time.Second},
		"Backoff":       {Backoff: -time.Second},
		"WriteAttempts": {WriteAttempts: -1},
		"Concurrency":   {Concurrency: -1},
		"SweepAfter":    {SweepAfter: -time.Second},
		"PollInterval":  {PollInterval: -time.Second},
		"PoisonQueue":   {PoisonQueue: "nilopts"},
		"Container":     {Container: "Bad_Container"},
	} {
		_, err := eventual.New(st, "nilopts", &o)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), field) {
			t.Errorf("bad %s: %v; want ErrInvalidInput naming it", field, err)
		}
	}
	if _, err := eventual.New(st, "", nil); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "queue") {
		t.Errorf("no queue: %v", err)
	}
}
