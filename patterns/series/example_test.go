package series_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/series"
)

func ExampleSeries_Add() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Messages"); err != nil {
		panic(err)
	}
	// Instant messages an employee sent on one day, per hour: one entity.
	s, err := series.New(st.Table("Messages"), "emp000123", "20261122", series.Layout{Slots: 24}, nil)
	if err != nil {
		panic(err)
	}
	for _, hour := range []int{9, 9, 10, 14, 9} {
		if _, err := s.Add(ctx, hour, 1); err != nil {
			panic(err)
		}
	}
	snap, err := s.Read(ctx) // the whole day: one request
	if err != nil {
		panic(err)
	}
	counts, _ := snap.Int64s()
	fmt.Println(counts[8:15], "in", snap.Segments, "entity")
	// Output:
	// [0 3 1 0 0 0 1] in 1 entity
}

func ExampleSeries_Update() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Messages"); err != nil {
		panic(err)
	}
	// A year of daily values passes the 252-property limit of one entity.
	s, err := series.New(st.Table("Messages"), "emp000123", "2026", series.Layout{Slots: 365, Prefix: "Day"}, nil)
	if err != nil {
		panic(err)
	}
	err = s.Update(ctx, func(current []any) (map[int]any, error) {
		m := map[int]any{}
		for day := range 365 {
			m[day] = int64(day % 7)
		}
		return m, nil
	})
	if err != nil {
		panic(err)
	}
	snap, err := s.Read(ctx)
	if err != nil {
		panic(err)
	}
	days, _ := snap.Int64s()
	fmt.Println("first week", days[:7], "last day", days[364], "in", snap.Segments, "entities, version", snap.Version)
	// Output:
	// first week [0 1 2 3 4 5 6] last day 0 in 2 entities, version 1
}
