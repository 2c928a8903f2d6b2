package indexentity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// nothingWritten fails the test when the entity table holds any row
// (entities, index entities, fence or outbox rows), the engine's queue a
// message, or the lists' blob container a blob: after a refused write.
func (f *fixture) nothingWritten(t *testing.T, what string) {
	t.Helper()
	ctx := context.Background()
	st := f.e.B.Store
	for _, tbl := range []string{f.table, f.index} {
		if tbl == "" {
			continue
		}
		for e, err := range store.All(ctx, st.Table(tbl), store.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			t.Fatalf("%s: row (%q, %.40q) of %s was written", what, e.PartitionKey, e.RowKey, tbl)
		}
	}
	if f.eng != nil {
		if m, err := st.Queue(f.eo.Queue).Peek(ctx, 1); err != nil || len(m) != 0 {
			t.Fatalf("%s: the engine's queue holds %d messages (%v)", what, len(m), err)
		}
	}
	if f.container != "" {
		if p, err := st.Container(f.container).List(ctx, store.BlobListOptions{}); err != nil || len(p.Blobs) != 0 {
			t.Fatalf("%s: the container holds %d blobs (%v)", what, len(p.Blobs), err)
		}
	}
}

// TestBadInputIsRefusedBeforeWriting: a list value too long for the key
// or blob name it makes, a value that is not UTF-8, an entity key with a
// character the service forbids, and (SamePartition) an entity RowKey
// too long for its head's ("~" + it) are refused with an error naming
// the value and the limit (InvalidInput, made by the client), and nothing
// is written: no entity, no index entity, no blob, no fence or outbox
// row, no message. An update that would move an entity to such a value
// leaves the entity and its list as they were. A value holding the
// characters keys forbid is escaped and works.
func TestBadInputIsRefusedBeforeWriting(t *testing.T) {
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				f := newFixture(t, e, p, Options{}, nil)
				tooLong := strings.Repeat("J", 1020)
				cases := []struct {
					name string
					v    Employee
					want []string // in the message
				}{
					{"value too long", Employee{Dept: "Sales", ID: "emp_1", Last: tooLong}, []string{"JJJJJJJJ", "1024"}},
					{"value not UTF-8", Employee{Dept: "Sales", ID: "emp_1", Last: "Jo\xffnes"}, []string{"Last", "UTF-8"}},
					{"key with a slash", Employee{Dept: "Sales", ID: "emp_a/b", Last: "Jones"}, []string{`"emp_a/b"`, "'/'"}},
					{"key with a control character", Employee{Dept: "Sal\nes", ID: "emp_1", Last: "Jones"}, []string{"PartitionKey"}},
				}
				if p == SamePartition {
					// The entity's head sits at "~" + its RowKey.
					cases = append(cases, struct {
						name string
						v    Employee
						want []string
					}{"RowKey too long for its head", Employee{Dept: "Sales", ID: "emp_" + strings.Repeat("x", 1020), Last: "Jones"}, []string{"~emp_xxx", "1024"}})
				}
				for _, c := range cases {
					for _, op := range []string{"insert", "upsert"} {
						v := c.v
						var err error
						if op == "insert" {
							err = f.x.Insert(ctx, &v)
						} else {
							err = f.x.Upsert(ctx, &v)
						}
						var se *store.Error
						if !errors.Is(err, store.ErrInvalidInput) || !errors.As(err, &se) || se.Source != store.SourceClient {
							t.Fatalf("%s (%s): %v, want InvalidInput made by the client", c.name, op, err)
						}
						for _, w := range c.want {
							if !strings.Contains(err.Error(), w) {
								t.Errorf("%s (%s): %q does not name %q", c.name, op, err, w)
							}
						}
						f.nothingWritten(t, c.name)
					}
				}
				if p == SamePartition {
					if err := f.x.Insert(ctx, &Employee{Dept: "Sales", ID: "emp_1", Last: tooLong}); !errors.Is(err, store.ErrTooLarge) &&
						!strings.Contains(err.Error(), "RowKey") {
						t.Errorf("a value too long for the RowKey: %v", err)
					}
				}

				// A good entity; a move to a bad value changes nothing.
				ann := Employee{Dept: "Sales", ID: "emp_1", Last: "Jones"}
				must(t, f.x.Insert(ctx, &ann))
				f.drain(t)
				before := f.check(t)
				moved := ann
				moved.Last = tooLong
				if err := f.x.Update(ctx, &moved); !errors.Is(err, store.ErrInvalidInput) {
					t.Fatalf("a move to a value too long: %v", err)
				}
				f.drain(t)
				if got, err := f.x.Get(ctx, "Sales", "emp_1"); err != nil || got.Last != "Jones" || got.ETag != ann.ETag {
					t.Fatalf("after a refused move: %+v, %v", got, err)
				}
				if after := f.check(t); after != before {
					t.Fatalf("after a refused move: %v, before %v", after, before)
				}

				// Forbidden key characters in a value are escaped.
				odd := "O'Brien/#?\\ \t~"
				bo := Employee{Dept: "Sales", ID: "emp_2", Last: odd}
				must(t, f.x.Insert(ctx, &bo))
				f.drain(t)
				if got := idsOf(collect(t, f.x.FindAll(ctx, f.scope("Sales"), "lastname", odd))); !slices.Equal(got, []string{"Sales/emp_2"}) {
					t.Fatalf("lookup of %q: %v", odd, got)
				}

				// Lookups: a list that does not exist, a partition where
				// none is wanted (or none where one is), a value too long.
				if _, err := f.x.Keys(ctx, f.scope("Sales"), "firstname", "Ann"); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "lastname") {
					t.Errorf("unknown list: %v", err)
				}
				if p != SamePartition {
					if _, err := f.x.Keys(ctx, "Sales", "lastname", "Jones"); !errors.Is(err, store.ErrInvalidInput) {
						t.Errorf("a partition for a list of the whole table: %v", err)
					}
				}
				for _, err := range f.x.FindAll(ctx, f.scope("Sales"), "lastname", tooLong) {
					if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "1024") {
						t.Errorf("lookup of a value too long: %v", err)
					}
				}
			})
		})
	}
}

// Nokind has no RowKey prefix.
type Nokind struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

// Tilde's RowKeys start with "~", which marks a SamePartition table's
// head rows.
type Tilde struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

func (Tilde) TableKind() mapper.Kind { return mapper.Kind{Prefix: "~t_"} }

// TestNewRefusesBadOptions: New names what is wrong.
func TestNewRefusesBadOptions(t *testing.T) {
	st := memstore.New()
	eng, err := eventual.New(st, "qqq", nil)
	must(t, err)
	list := List("lastname", lastName)
	cases := []struct {
		name string
		fn   func() error
		want string
	}{
		{"no prefix", func() error {
			_, err := New(st, "Tab1", &Options{}, List("x", func(*Nokind) string { return "" }))
			return err
		}, "prefix"},
		{"no list", func() error { _, err := New[Employee](st, "Tab1", &Options{}); return err }, "no list"},
		{"bad list name", func() error { _, err := New(st, "Tab1", &Options{}, List("last-name", lastName)); return err }, "last-name"},
		{"twice", func() error { _, err := New(st, "Tab1", &Options{}, list, list); return err }, "twice"},
		{"nil value", func() error { _, err := New(st, "Tab1", &Options{}, List[Employee]("x", nil)); return err }, "value function"},
		{"overlaps the prefix", func() error { _, err := New(st, "Tab1", &Options{}, List("emp", lastName)); return err }, "overlap"},
		{"prefix of the heads", func() error {
			_, err := New(st, "Tab1", &Options{}, List("x", func(*Tilde) string { return "" }))
			return err
		}, "head rows"},
		{"bad table", func() error { _, err := New(st, "1T", &Options{}, list); return err }, "1T"},
		{"engine on SamePartition", func() error { _, err := New(st, "Tab1", &Options{Engine: eng}, list); return err }, "SamePartition"},
		{"no engine", func() error {
			_, err := New(st, "Tab1", &Options{Placement: SeparatePartition, IndexTable: "Idx1"}, list)
			return err
		}, "Engine"},
		{"no index table", func() error {
			_, err := New(st, "Tab1", &Options{Placement: SeparatePartition, Engine: eng}, list)
			return err
		}, "IndexTable"},
		{"no container", func() error { _, err := New(st, "Tab1", &Options{Placement: InBlobs, Engine: eng}, list); return err }, "Container"},
		{"layout", func() error {
			_, err := New(st, "Tab1", &Options{Layout: Layout{ChunkBytes: 2 << 20}}, list)
			return err
		}, "ChunkBytes"},
		{"property units", func() error {
			_, err := New(st, "Tab1", &Options{Layout: Layout{PropertyUnits: 1 << 20}}, list)
			return err
		}, "PropertyUnits"},
		{"attempts", func() error { _, err := New(st, "Tab1", &Options{Attempts: -1}, list); return err }, "Attempts"},
		{"placement", func() error { _, err := New(st, "Tab1", &Options{Placement: Placement(9)}, list); return err }, "Placement(9)"},
		{"registered twice", func() error {
			o := Options{Placement: SeparatePartition, Engine: eng, IndexTable: "Idx1"}
			if _, err := New(st, "Tab2", &o, list); err != nil {
				return fmt.Errorf("first: %w", err)
			}
			_, err := New(st, "Tab2", &o, list)
			return err
		}, "registered already"},
	}
	for _, c := range cases {
		err := c.fn()
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want InvalidInput naming %q", c.name, err, c.want)
		}
	}
	if _, err := New(st, "Tab1", &Options{}, list); err != nil {
		t.Fatalf("good options: %v", err)
	}
}
