package xindex_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Age        int
}

func email(e *Employee) string    { return e.Email }
func lastName(e *Employee) string { return e.LastName }

// staff is a model of employees with a unique email in a table of its
// own, a last name index in the index table and a badge in the
// partition, its engine and its view.
type staff struct {
	e     eventualtest.Env
	o     eventualtest.Options
	eng   *eventual.Engine
	table string
	m     *model.Model[Employee]
	x     *xindex.View[Employee]
}

func newStaff(t *testing.T, e eventualtest.Env, st store.Store) *staff {
	t.Helper()
	s := &staff{e: e, o: e.Opts("xindex"), table: e.B.NewTable(t, "Staff")}
	if st == nil {
		st = e.B.Store
	}
	emails := e.B.NewTable(t, "Emails")
	s.eng = eventualtest.NewEngine(t, st, s.o)
	var err error
	s.m, err = model.Define(st, s.table, &model.Options{Engine: s.eng, Now: e.Now},
		model.GlobalUnique("email", email).In(emails),
		model.GlobalIndex("lastname", lastName),
		model.Unique("badge", func(e *Employee) string { return e.FirstName }))
	if err != nil {
		t.Fatal(err)
	}
	if s.x, err = xindex.New(s.m, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *staff) drain(t *testing.T) {
	t.Helper()
	eventualtest.Drain(t, s.e, &s.eng, s.o, s.e.B.Store, s.table)
}

// ids lists the entity ids of hits, failing on an error.
func ids(t *testing.T, seq func(func(xindex.Hit[Employee], error) bool)) string {
	t.Helper()
	var out []string
	for h, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.ID)
	}
	return strings.Join(out, " ")
}

// TestLookups: the view's point, range and prefix lookups over the
// model's global indexes; a write found through its claim before the
// engine ran; a copy behind its entity (Stale) and one whose entity gave
// the value up (ErrNotFound).
func TestLookups(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		s := newStaff(t, e, nil)
		for _, v := range []*Employee{
			{Department: "Sales", ID: "ann", FirstName: "Ann", LastName: "Jones", Email: "ann@contoso.com", Age: 30},
			{Department: "Ops", ID: "bob", FirstName: "Bob", LastName: "Jones", Email: "bob@contoso.com"},
			{Department: "Sales", ID: "cy", FirstName: "Cy", LastName: "Johnson", Email: "cy@fabrikam.com"},
			{Department: "Ops", ID: "di", FirstName: "Di", LastName: "Lee", Email: "di@contoso.com"},
		} {
			if err := s.m.Insert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		// Read-your-writes: the copies are not written yet, the claims
		// lead to the entities.
		h, err := s.x.Find(ctx, "email", "ann@contoso.com")
		if err != nil || !h.Claimed || h.ID != "ann" || h.Entity.Age != 30 {
			t.Fatalf("Find through the claim: %+v, %v", h, err)
		}
		if got := ids(t, s.x.FindAll(ctx, "lastname", "Jones")); got != "bob ann" {
			t.Fatalf("FindAll through the claims: %q", got)
		}
		s.drain(t)
		h, err = s.x.Find(ctx, "email", "ann@contoso.com")
		if err != nil || h.Claimed || h.PK != "Sales" || h.Entity.FirstName != "Ann" || h.Version == 0 {
			t.Fatalf("Find: %+v, %v", h, err)
		}
		if _, err := s.x.Find(ctx, "email", "nobody@contoso.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Find of a value nobody holds: %v", err)
		}
		for _, c := range []struct{ got, want string }{
			{ids(t, s.x.FindAll(ctx, "lastname", "Jones")), "bob ann"},
			{ids(t, s.x.FindAll(ctx, "email", "cy@fabrikam.com")), "cy"},
			{ids(t, s.x.Prefix(ctx, "lastname", "Jo")), "cy bob ann"},
			{ids(t, s.x.Range(ctx, "lastname", "Jones", "")), "bob ann di"},
			{ids(t, s.x.Range(ctx, "lastname", "A", "Jones")), "cy"},
			{ids(t, s.x.Prefix(ctx, "email", "b")), "bob"},
			{ids(t, s.x.Range(ctx, "email", "b", "d")), "bob cy"},
		} {
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		}
		// A write that keeps the value: the copy is behind (Stale).
		ann, err := s.m.Get(ctx, "Sales", "ann")
		if err != nil {
			t.Fatal(err)
		}
		ann.Age = 31
		if err := s.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		f, err := s.x.FindFresh(ctx, "email", "ann@contoso.com")
		if err != nil || !f.Stale || f.Entity.Age != 31 || f.Hit.Entity.Age != 30 || f.Entity.ETag == "" {
			t.Fatalf("FindFresh of a copy behind: %+v, %v", f, err)
		}
		s.drain(t)
		if f, err := s.x.FindFresh(ctx, "email", "ann@contoso.com"); err != nil || f.Stale || f.Hit.Entity.Age != 31 {
			t.Fatalf("FindFresh after the engine ran: %+v, %v", f, err)
		}
		// A write that gives the value up: the old copy leads nowhere
		// until the engine removes it; the new value is found at once.
		ann.Email = "ann@fabrikam.com"
		if err := s.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		if _, err := s.x.FindFresh(ctx, "email", "ann@contoso.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("FindFresh of a copy whose entity gave the value up: %v", err)
		}
		if h, err := s.x.Find(ctx, "email", "ann@fabrikam.com"); err != nil || h.ID != "ann" {
			t.Fatalf("Find of the new value: %+v, %v", h, err)
		}
		for h, err := range s.x.FindAll(ctx, "lastname", "Jones") {
			if err != nil {
				t.Fatal(err)
			}
			if f, err := s.x.Check(ctx, h); err != nil || f.Entity.ID != h.ID {
				t.Fatalf("Check of %s: %+v, %v", h.ID, f, err)
			}
		}
		s.drain(t)
		if _, err := s.x.Find(ctx, "email", "ann@contoso.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the old copy after the engine ran: %v", err)
		}
	})
}

// TestBadInput: New refuses a nil model and one without a global index;
// a lookup of an index of the partition says what reads it; an unknown
// index, Find on a non-unique index, a value that cannot make a key and
// a hit no lookup made are refused. Every refusal matches
// store.ErrInvalidInput.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	eng, err := eventual.New(st, "badinput", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := xindex.New[Employee](nil, nil); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("nil model: %v", err)
	}
	local, err := model.Define(st, "Local", &model.Options{Engine: eng}, model.Unique("email", email))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := xindex.New(local, nil); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "no global index") {
		t.Fatalf("a model without a global index: %v", err)
	}
	m, err := model.Define(st, "Staff", &model.Options{Engine: eng},
		model.GlobalUnique("email", email), model.GlobalIndex("lastname", lastName), model.Index("first", func(e *Employee) string { return e.FirstName }))
	if err != nil {
		t.Fatal(err)
	}
	x, err := xindex.New(m, &xindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := func(seq func(func(xindex.Hit[Employee], error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	_, findErr := x.Find(ctx, "first", "Ann")
	_, freshErr := x.FindFresh(ctx, "lastname", "Jones")
	_, checkErr := x.Check(ctx, xindex.Hit[Employee]{Index: "email", Value: "a"})
	_, badErr := x.Find(ctx, "email", "\xff")
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"partition index, Find":  {findErr, "patterns/index or model.FindIn"},
		"partition index, Range": {first(x.Range(ctx, "first", "A", "B")), "patterns/index or model.FindIn"},
		"unknown index":          {first(x.FindAll(ctx, "nope", "x")), "email, lastname"},
		"Find, not unique":       {freshErr, "use FindAll"},
		"a hit no lookup made":   {checkErr, "not returned by a lookup"},
		"invalid UTF-8":          {badErr, "email"},
		"prefix too long":        {first(x.Prefix(ctx, "lastname", strings.Repeat("/", 400))), "lastname"},
	} {
		if !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidInput naming %q", name, c.err, c.want)
		}
	}
}
