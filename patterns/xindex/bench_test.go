package xindex_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// BenchmarkView measures the view's lookups against a point get of the
// entity (model.Get), interleaved in short rounds: Find (the unique
// value's copy, one point read), FindFresh (the copy and the entity),
// FindAll of a non-unique value held by two entities (a query of the
// value's partition), and Prefix over ten values (a query across ten
// partitions of the index). Run it with
//
//	go test -run '^$' -bench '^BenchmarkView$/memstore' -benchtime 1x -v ./patterns/xindex/
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkView$/azurite-rtt5ms' -benchtime 1x -v ./patterns/xindex/
//
// azurite-rtt5ms goes through a loopback proxy that holds every answer
// for 5 ms, as a round trip to the service does.
func BenchmarkView(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchView(b, memstore.New(), 40*time.Millisecond) })
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchView(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 400*time.Millisecond)
	})
}

func benchView(b *testing.B, st store.Store, slice time.Duration) {
	ctx := context.Background()
	suffix := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
	table, emails := "BenchStaff"+suffix, "BenchEmails"+suffix
	for _, t := range []string{table, emails} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		defer st.DeleteTable(context.WithoutCancel(ctx), t)
	}
	eng, err := eventual.New(st, "benchx"+suffix, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, q := range []string{"benchx" + suffix, "benchx" + suffix + "-poison"} {
			_ = st.Queue(q).Delete(context.WithoutCancel(ctx))
		}
	}()
	m, err := model.Define(st, table, &model.Options{Engine: eng},
		model.GlobalUnique("email", email).In(emails), model.GlobalIndex("lastname", lastName))
	if err != nil {
		b.Fatal(err)
	}
	x, err := xindex.New(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	const n = 300
	mk := func(i int) *Employee {
		return &Employee{Department: fmt.Sprint("d", i%7), ID: fmt.Sprintf("e%05d", i), FirstName: "F",
			LastName: fmt.Sprintf("L%04d", i/2), Email: fmt.Sprintf("e%05d@contoso.com", i), Age: int(i)}
	}
	for i := range n {
		if err := m.Insert(ctx, mk(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := eng.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	want := func(got int, n int) error {
		if got != n {
			return fmt.Errorf("%d hits, want %d", got, n)
		}
		return nil
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 15, Slice: slice},
		interleave.Case{Name: "model Get (point get of the entity)", Op: func(i int) error {
			e := mk(i % n)
			_, err := m.Get(ctx, e.Department, e.ID)
			return err
		}},
		interleave.Case{Name: "Find (the copy of a unique value)", Op: func(i int) error {
			e := mk(i % n)
			h, err := x.Find(ctx, "email", e.Email)
			if err == nil && (h.ID != e.ID || h.Claimed) {
				return fmt.Errorf("found %+v, want the copy of %s", h, e.ID)
			}
			return err
		}},
		interleave.Case{Name: "FindFresh (the copy and the entity)", Op: func(i int) error {
			e := mk(i % n)
			f, err := x.FindFresh(ctx, "email", e.Email)
			if err == nil && (f.Entity.ID != e.ID || f.Stale) {
				return fmt.Errorf("found %+v", f)
			}
			return err
		}},
		interleave.Case{Name: "FindAll (a value of two entities)", Op: func(i int) error {
			e := mk(i % n)
			c := 0
			for _, err := range x.FindAll(ctx, "lastname", e.LastName) {
				if err != nil {
					return err
				}
				c++
			}
			return want(c, 2)
		}},
		interleave.Case{Name: "Prefix (ten values, twenty copies)", Op: func(i int) error {
			p := fmt.Sprintf("L%03d", (i % (n / 20))) // L000 to L014: ten values each
			c := 0
			for _, err := range x.Prefix(ctx, "lastname", p) {
				if err != nil {
					return err
				}
				c++
			}
			return want(c, 20)
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", rep.Table())
	for name, unit := range map[string]string{"Find (the copy of a unique value)": "find-x", "FindFresh (the copy and the entity)": "fresh-x",
		"FindAll (a value of two entities)": "findall-x", "Prefix (ten values, twenty copies)": "prefix-x"} {
		r, _ := rep.Row(name)
		b.ReportMetric(r.WallRatio.Median, unit)
	}
}
