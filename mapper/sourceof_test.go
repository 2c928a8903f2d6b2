package mapper_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

type sourceRow struct {
	Dept   string         `table:",pk"`
	ID     string         `table:",rk"`
	Name   string         `table:"Name"`
	Salary int64          `table:"Salary"`
	Hired  time.Time      `table:"Hired"`
	Photo  []byte         `table:"Photo"`
	Extra  map[string]any `table:",extra"`
}

// SourceOf's source stores what Encode's entity stores, on both backends,
// and its bad inputs are refused before anything is written.
func TestSourceOfWritesWhatEncodeWrites(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "SourceOf")
		tbl := b.Store.Table(name)
		tt, ok := driver.Typed(tbl)
		if !ok {
			t.Fatalf("%s: not a store.TypedTable", b.Name)
		}
		v := sourceRow{Dept: "d", ID: "typed", Name: "Ada", Salary: 1 << 40, Hired: time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC),
			Photo: []byte{1, 2, 3}, Extra: map[string]any{"A": int32(7), "Z": "last"}}
		pk, rk, src, err := mapper.SourceOf(&v)
		if err != nil || pk != "d" || rk != "typed" {
			t.Fatalf("SourceOf = %q, %q, %v", pk, rk, err)
		}
		if _, err := tt.Write(ctx, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, Source: src}); err != nil {
			t.Fatal(err)
		}
		w := v
		w.ID = "encoded"
		e, err := mapper.Encode(&w)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		got1, err := tbl.Get(ctx, "d", "typed", nil)
		if err != nil {
			t.Fatal(err)
		}
		got2, err := tbl.Get(ctx, "d", "encoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got1.Properties, got2.Properties) || len(got1.Properties) != 6 {
			t.Fatalf("through SourceOf: %v\nthrough Encode:   %v", got1.Properties, got2.Properties)
		}
	})
	var nilRow *sourceRow
	for _, bad := range []any{nil, sourceRow{ID: "x"}, nilRow, &struct{ C chan int }{}} {
		_, _, _, err := mapper.SourceOf(bad)
		var me *mapper.Error
		if !errors.As(err, &me) {
			t.Errorf("SourceOf(%T): %v, want a *mapper.Error", bad, err)
		}
	}
}

// NewReader reads what Decode reads, and refuses what is not a pointer to
// a struct.
func TestNewReaderReadsWhatDecodeReads(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := b.Store.Table(b.NewTable(t, "NewReader"))
		in := sourceRow{Dept: "d", ID: "r", Name: "Ada", Salary: -5, Hired: time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC),
			Photo: []byte{9}, Extra: map[string]any{"More": true}}
		e, err := mapper.Encode(&in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		var got sourceRow
		rd, finish, err := mapper.NewReader(&got)
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.(store.TypedTable).GetInto(ctx, "d", "r", nil, rd); err != nil {
			t.Fatal(err)
		}
		if err := finish(); err != nil {
			t.Fatal(err)
		}
		stored, err := tbl.Get(ctx, "d", "r", nil)
		if err != nil {
			t.Fatal(err)
		}
		var want sourceRow
		if err := mapper.Decode(stored, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || got.Name != "Ada" || got.Extra["More"] != true {
			t.Fatalf("NewReader read %+v, Decode %+v", got, want)
		}
	})
	for _, bad := range []any{nil, sourceRow{}, (*sourceRow)(nil)} {
		if _, _, err := mapper.NewReader(bad); err == nil {
			t.Errorf("NewReader(%T) accepted it", bad)
		}
	}
}
