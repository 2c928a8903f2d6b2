package model_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestRun: Run works the engine's queue until ctx ends, then returns
// ctx's error; a bad option is refused.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := memstore.New()
	if err := st.CreateTable(ctx, "Staff"); err != nil {
		t.Fatal(err)
	}
	eng, err := eventual.New(st, "run", &eventual.Options{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := model.Define(st, "Staff", &model.Options{Engine: eng},
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Run(ctx, eng, nil, &model.RunOptions{SweepEvery: -1}); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("negative SweepEvery: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- model.Run(ctx, eng, []string{"Staff"}, &model.RunOptions{SweepEvery: 10 * time.Millisecond})
	}()
	if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: "1", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		for row, err := range store.All(ctx, st.Table("Staff"), store.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			if row.Properties[model.SourceRowProperty] != nil && eventual.VersionOf(&row) > 0 {
				n++
			}
		}
		if n == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("Run never wrote the copy")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after ctx ended: %v", err)
	}
}
