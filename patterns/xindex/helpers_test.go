package xindex_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Employee is the guide's employee: stored once in its department's
// partition under its id, found by email (unique, copies in partition
// "email_<department>" of the same table) and by last name (not unique,
// copies in a table of their own).
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"` // "emp_000123"
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Age        int32
}

func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

func emp(dept string, id int, first, last, email string) *Employee {
	return &Employee{Department: dept, ID: fmt.Sprintf("emp_%06d", id), FirstName: first, LastName: last, Email: email, Age: int32(20 + id%40)}
}

// fixture is an indexed staff table on one backend.
type fixture struct {
	e         eventualtest.Env
	st        store.Store // what the engine and the table write through
	o         eventualtest.Options
	eng       *eventual.Engine
	x         *xindex.Table[Employee]
	staff, ix string
	opts      xindex.Options
}

func specs() []xindex.Spec[Employee] {
	return []xindex.Spec[Employee]{
		xindex.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		xindex.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).Project("FirstName", "LastName"),
	}
}

// newFixture makes the tables and the engine; st wraps the backend's
// store (nil for none).
func newFixture(t *testing.T, e eventualtest.Env, queue string, st store.Store, opts xindex.Options) *fixture {
	t.Helper()
	if st == nil {
		st = e.B.Store
	}
	f := &fixture{e: e, st: st, staff: e.B.NewTable(t, "staff"), ix: e.B.NewTable(t, "staffix"), o: e.Opts(queue)}
	if opts.Now == nil && e.Clock != nil {
		opts.Now = e.Clock.Now
	}
	f.opts = opts
	f.eng = eventualtest.NewEngine(t, st, f.o)
	f.x = f.build(t, f.eng)
	return f
}

// build makes the indexed table on eng (a restarted process builds it
// again on its new engine).
func (f *fixture) build(t testing.TB, eng *eventual.Engine) *xindex.Table[Employee] {
	t.Helper()
	sp := specs()
	sp[1] = sp[1].InTable(f.ix)
	x, err := xindex.New[Employee](eng, f.staff, &f.opts, sp...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// restart is a fresh process: a new engine and table over the same store.
func (f *fixture) restart(t testing.TB) {
	eng, err := f.o.New(f.st)
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	f.x = f.build(t, eng)
}

func (f *fixture) drain(t testing.TB) {
	t.Helper()
	eventualtest.Drain(t, f.e, &f.eng, f.o, f.st, f.staff)
}

// counts are what a full scan finds.
type counts struct {
	entities, copies, lost, duplicated, stale, claims int
}

// scan reads every row of both tables, straight from the backend: every
// entity must have exactly its copies, at its version with its values;
// every copy must belong to an entity holding its value. Bare claims are
// counted apart.
func (f *fixture) scan(t testing.TB) counts {
	t.Helper()
	ctx := context.Background()
	st := f.e.B.Store
	var c counts
	type want struct {
		owner   string
		version int64
		props   map[string]any
	}
	wants := map[string]want{} // "table|pk|rk" -> copy
	haves := map[string]store.Entity{}
	emails := map[string]string{}
	for e, err := range store.All(ctx, st.Table(f.staff), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case partition.IsReserved(e.RowKey):
		case strings.HasPrefix(e.RowKey, "emp_"):
			c.entities++
			v, _ := e.Properties[eventual.VersionProperty].(int64)
			owner := e.PartitionKey + "/" + e.RowKey
			if email, _ := e.Properties["Email"].(string); email != "" {
				if other, dup := emails[e.PartitionKey+"|"+email]; dup {
					t.Errorf("entities %s and %s both hold email %q", other, owner, email)
				}
				emails[e.PartitionKey+"|"+email] = owner
				rk, _ := keys.Join("email", email)
				props := map[string]any{}
				for k, pv := range e.Properties {
					if k != eventual.VersionProperty {
						props[k] = pv
					}
				}
				wants[f.staff+"|email_"+e.PartitionKey+"|"+rk] = want{owner, v, props}
			}
			if last, _ := e.Properties["LastName"].(string); last != "" {
				rk, _ := keys.Join("lastname", last, e.PartitionKey, e.RowKey)
				wants[f.ix+"|lastname_"+e.PartitionKey+"|"+rk] = want{owner, v, map[string]any{"FirstName": e.Properties["FirstName"], "LastName": last}}
			}
		default:
			haves[f.staff+"|"+e.PartitionKey+"|"+e.RowKey] = e
		}
	}
	for e, err := range store.All(ctx, st.Table(f.ix), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		haves[f.ix+"|"+e.PartitionKey+"|"+e.RowKey] = e
	}
	for k, h := range haves {
		v, _ := h.Properties[eventual.VersionProperty].(int64)
		owner := fmt.Sprintf("%s/%s", h.Properties[xindex.SourcePartitionProperty], h.Properties[xindex.SourceRowProperty])
		if v == 0 {
			c.claims++
			continue
		}
		c.copies++
		w, ok := wants[k]
		if !ok {
			c.duplicated++
			t.Errorf("copy %s of %s@%d belongs to no entity holding its value", k, owner, v)
			continue
		}
		if w.owner != owner || w.version != v {
			c.stale++
			t.Errorf("copy %s is %s@%d, its entity %s@%d", k, owner, v, w.owner, w.version)
			continue
		}
		for p, pv := range w.props {
			if h.Properties[p] != pv {
				c.stale++
				t.Errorf("copy %s: %s = %v, entity %v", k, p, h.Properties[p], pv)
				break
			}
		}
	}
	for k, w := range wants {
		if h, ok := haves[k]; !ok || h.Properties[eventual.VersionProperty] == nil || h.Properties[eventual.VersionProperty] == int64(0) {
			c.lost++
			t.Errorf("entity %s@%d lacks its copy %s", w.owner, w.version, k)
		}
	}
	return c
}

// bareClaims counts the claim rows (version 0) of the email index of
// partition pk.
func (f *fixture) bareClaims(t testing.TB, pk string) int {
	t.Helper()
	n := 0
	q := store.Query{Filter: filter.PK.Eq("email_" + pk).And(filter.Prop(eventual.VersionProperty).Eq(int64(0))).String()}
	for _, err := range store.All(context.Background(), f.e.B.Store.Table(f.staff), q) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}
