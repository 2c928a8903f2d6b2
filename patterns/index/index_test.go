package index_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// Employee is stored in its department's partition under its id.
type Employee struct {
	Dept      string     `table:",pk"`
	ID        string     `table:",rk"`
	ETag      store.ETag `table:",etag"`
	FirstName string
	LastName  string
	Email     string
	Phone     string
}

func email(e *Employee) string    { return e.Email }
func lastName(e *Employee) string { return e.LastName }

// staff defines the model of the tests over a fresh table: a unique
// email (full copies), a last-name index projected to the first name, a
// global index of phones (which the view does not read).
func staff(t *testing.T, e eventualtest.Env) (*model.Model[Employee], *eventual.Engine) {
	t.Helper()
	st := e.B.Store
	table := e.B.NewTable(t, "IxStaff")
	eng := eventualtest.NewEngine(t, st, e.Opts("ixstaff"))
	m, err := model.Define(st, table, &model.Options{Engine: eng, Now: e.Now},
		model.Unique("email", email),
		model.Index("lastname", lastName).Project("FirstName"),
		model.GlobalIndex("phone", func(e *Employee) string { return e.Phone }))
	if err != nil {
		t.Fatal(err)
	}
	return m, eng
}

var people = []Employee{
	{Dept: "Sales", ID: "000123", FirstName: "Don", LastName: "Hall", Email: "don@contoso.com", Phone: "555-0101"},
	{Dept: "Sales", ID: "000152", FirstName: "Jun", LastName: "Cao", Email: "jun@contoso.com", Phone: "555-0102"},
	{Dept: "Sales", ID: "000155", FirstName: "Ken", LastName: "Kwok", Email: "ken@contoso.com", Phone: "555-0103"},
	{Dept: "Sales", ID: "000171", FirstName: "Ann", LastName: "Hall", Email: "ann@contoso.com", Phone: "555-0104"},
	{Dept: "Ops", ID: "000200", FirstName: "Eve", LastName: "Hall", Email: "eve@contoso.com", Phone: "555-0105"},
}

func ids(t *testing.T, seq func(yield func(*Employee, error) bool)) string {
	t.Helper()
	var out []string
	for e, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.ID)
	}
	return strings.Join(out, " ")
}

// TestViewLookups: Find, FindAll, Range and Prefix read the model's
// partition indexes: through the full copies the entity as the copy
// holds it, through the projected ones the entity read from its row with
// its ETag, and every read follows a write as soon as it returned.
func TestViewLookups(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		m, _ := staff(t, e)
		v, err := index.New(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(v.Indexes(), " "); got != "email lastname" || v.Model() != m {
			t.Fatalf("the view reads %q", got)
		}
		for i := range people {
			p := people[i]
			if err := m.Insert(ctx, &p); err != nil {
				t.Fatal(err)
			}
		}
		jun, err := v.Find(ctx, "Sales", "email", "jun@contoso.com")
		if err != nil || jun.ID != "000152" || jun.Phone != "555-0102" || jun.ETag != "" {
			t.Fatalf("Find = %+v, %v", jun, err)
		}
		if _, err := v.Find(ctx, "Ops", "email", "jun@contoso.com"); !store.EntityNotFound(err) {
			t.Fatalf("Find in another partition: %v", err)
		}
		if got := ids(t, v.FindAll(ctx, "Sales", "lastname", "Hall")); got != "000123 000171" {
			t.Fatalf("FindAll lastname Hall = %s", got)
		}
		for e, err := range v.FindAll(ctx, "Sales", "lastname", "Hall") {
			cur, gerr := m.Get(ctx, e.Dept, e.ID)
			if err != nil || gerr != nil || e.Phone != cur.Phone || e.ETag == "" || e.ETag != cur.ETag {
				t.Fatalf("FindAll through the projection = %+v, %v; Get = %+v, %v", e, err, cur, gerr)
			}
		}
		if got := ids(t, v.FindAll(ctx, "Sales", "email", "ken@contoso.com")); got != "000155" {
			t.Fatalf("FindAll of a unique value = %s", got)
		}
		if got := ids(t, v.Range(ctx, "Sales", "email", "d", "k")); got != "000123 000152" {
			t.Fatalf("Range email [d, k) = %s", got)
		}
		if got := ids(t, v.Range(ctx, "Sales", "lastname", "Hall", "")); got != "000123 000171 000155" {
			t.Fatalf("Range lastname [Hall, ) = %s", got)
		}
		if got := ids(t, v.Prefix(ctx, "Sales", "lastname", "H")); got != "000123 000171" {
			t.Fatalf("Prefix lastname H = %s", got)
		}
		if got := ids(t, v.Prefix(ctx, "Sales", "email", "")); got != "000171 000123 000152 000155" {
			t.Fatalf("Prefix email \"\" = %s", got)
		}

		// A write through the model: the view reads it at once.
		don := people[0]
		don.Email, don.LastName = "donald@contoso.com", "Cao"
		if err := m.Update(ctx, &don, store.Merge); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Find(ctx, "Sales", "email", "don@contoso.com"); !store.EntityNotFound(err) {
			t.Fatalf("the old email: %v", err)
		}
		if got, err := v.Find(ctx, "Sales", "email", "donald@contoso.com"); err != nil || got.ID != don.ID {
			t.Fatalf("the new email: %+v, %v", got, err)
		}
		if got := ids(t, v.FindAll(ctx, "Sales", "lastname", "Cao")); got != "000123 000152" {
			t.Fatalf("FindAll lastname Cao after the move = %s", got)
		}
		if err := m.Delete(ctx, "Sales", "000152", ""); err != nil {
			t.Fatal(err)
		}
		if got := ids(t, v.Prefix(ctx, "Sales", "lastname", "")); got != "000123 000171 000155" {
			t.Fatalf("after the delete = %s", got)
		}
	})
}

// TestViewRefusals: New refuses a nil model, a model without a partition
// index and bad Options.Indexes; a read naming a global index says to
// use xindex or model.Find, one naming an unknown index or Find on a
// non-unique one is refused, all matching store.ErrInvalidInput; a
// bypassed copy is model.ErrBypassed.
func TestViewRefusals(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	m, eng := staff(t, e)
	globalOnly, err := model.Define(e.B.Store, e.B.NewTable(t, "IxGlobal"), &model.Options{Engine: eng},
		model.GlobalUnique("email", email))
	if err != nil {
		t.Fatal(err)
	}
	only, err := index.New(m, &index.Options{Indexes: []string{"lastname"}})
	if err != nil {
		t.Fatal(err)
	}
	first := func(seq func(yield func(*Employee, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	v, _ := index.New(m, nil)
	_, nilModel := index.New[Employee](nil, nil)
	_, noPart := index.New(globalOnly, nil)
	_, unknown := index.New(m, &index.Options{Indexes: []string{"badge"}})
	_, global := index.New(m, &index.Options{Indexes: []string{"phone"}})
	_, twice := index.New(m, &index.Options{Indexes: []string{"email", "email"}})
	_, empty := index.New(m, &index.Options{Indexes: []string{}})
	_, findAll := v.Find(ctx, "Sales", "lastname", "Hall")
	_, findGlobal := v.Find(ctx, "Sales", "phone", "555")
	_, outside := only.Find(ctx, "Sales", "email", "x")
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"nil model", nilModel, "the model is nil"},
		{"no partition index", noPart, "declares no partition index"},
		{"unknown option", unknown, `declares no index "badge"`},
		{"global option", global, "index phone is global"},
		{"twice", twice, `names "email" twice`},
		{"empty", empty, "Options.Indexes is empty"},
		{"Find non-unique", findAll, "index lastname is not unique: use FindAll"},
		{"Find global", findGlobal, "read it with patterns/xindex or model.Find"},
		{"FindAll global", first(v.FindAll(ctx, "Sales", "phone", "555")), "index phone is global"},
		{"Range global", first(v.Range(ctx, "Sales", "phone", "5", "6")), "index phone is global"},
		{"Prefix unknown", first(v.Prefix(ctx, "Sales", "badge", "5")), `no partition index "badge" in the view (its indexes: email, lastname)`},
		{"outside the view", outside, `no partition index "email" in the view (its indexes: lastname)`},
		{"value no key holds", first(v.FindAll(ctx, "Sales", "lastname", strings.Repeat("x", 1100))), "index lastname: value"},
		{"bad utf-8", first(v.Range(ctx, "Sales", "email", "\xff", "")), "index email: from"},
	} {
		if !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}

	// A copy changed around the model is refused, not returned.
	ann := people[3]
	if err := m.Insert(ctx, &ann); err != nil {
		t.Fatal(err)
	}
	rk := fmt.Sprintf("u !email !%s", strings.ReplaceAll(ann.Email, ".", ".2E"))
	row, err := e.B.Store.Table(m.Table()).Get(ctx, "Sales", rk, nil)
	if err != nil {
		t.Fatal(err)
	}
	row.Properties["Phone"] = "555-9999"
	if _, err := e.B.Store.Table(m.Table()).Update(ctx, row, store.Replace, store.ETagAny); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Find(ctx, "Sales", "email", ann.Email); !errors.Is(err, model.ErrBypassed) {
		t.Fatalf("Find through a changed copy: %v", err)
	}
}
