package mapper_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Three versions of an employee and a department share a partition.
// Version 1 (declared before versions existed: no Version) had one Name;
// version 2 splits it; version 3 renames Phone to Mobile and adds Email.

type staffV1 struct {
	Dept  string     `table:",pk"`
	ID    string     `table:",rk"`
	ETag  store.ETag `table:",etag"`
	Name  string
	Phone string
}

func (staffV1) TableKind() mapper.Kind { return mapper.Kind{Property: "Type", Value: "employee"} }

type staffV2 struct {
	Dept      string     `table:",pk"`
	ID        string     `table:",rk"`
	ETag      store.ETag `table:",etag"`
	FirstName string
	LastName  string
	Phone     string
}

func (staffV2) TableKind() mapper.Kind {
	return mapper.Kind{Property: "Type", Value: "employee", Version: 2}
}

type staffV3 struct {
	Dept      string     `table:",pk"`
	ID        string     `table:",rk"`
	ETag      store.ETag `table:",etag"`
	FirstName string
	LastName  string
	Mobile    string
	Email     string
}

func (staffV3) TableKind() mapper.Kind {
	return mapper.Kind{Property: "Type", Value: "employee", Version: 3}
}

type deptRow struct {
	Dept    string `table:",pk"`
	ID      string `table:",rk"`
	Manager string
}

func (deptRow) TableKind() mapper.Kind { return mapper.Kind{Property: "Type", Value: "department"} }

// versionedRegistry registers every version and the migrations between
// them; the migrations are chained: a version 1 row goes through 2 to 3.
func versionedRegistry(t *testing.T) *mapper.Registry {
	t.Helper()
	r, err := mapper.NewPropertyRegistry("Type")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		mapper.Register[staffV1](r, "employee"),
		mapper.Register[staffV3](r, "employee"),
		mapper.Register[staffV2](r, "employee"),
		mapper.Register[deptRow](r, "department"),
		mapper.Migrate(r, func(v staffV1) (staffV2, error) {
			first, last, _ := strings.Cut(v.Name, " ")
			return staffV2{FirstName: first, LastName: last, Phone: v.Phone}, nil
		}),
		mapper.Migrate(r, func(v staffV2) (staffV3, error) {
			return staffV3{FirstName: v.FirstName, LastName: v.LastName, Mobile: v.Phone}, nil
		}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestVersionsCoexistAndMigrateOnRead: rows written by each version of a
// struct carry their version in the marker; a Repository of one version
// reads only its own rows and refuses the others; the registry reads
// every row as the newest version, migrating on read, with the row's keys
// and ETag, so an update of a migrated value is conditional on what was
// read; Upgrade rewrites the old rows once.
func TestVersionsCoexistAndMigrateOnRead(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		table := b.NewTable(t, "versions")
		v1 := mapper.NewRepository[staffV1](b.Store, table)
		v2 := mapper.NewRepository[staffV2](b.Store, table)
		v3 := mapper.NewRepository[staffV3](b.Store, table)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(v1.Insert(ctx, &staffV1{Dept: "Sales", ID: "e1", Name: "Ann Lee", Phone: "555-1"}))
		must(v2.Insert(ctx, &staffV2{Dept: "Sales", ID: "e2", FirstName: "Bob", LastName: "Ray", Phone: "555-2"}))
		must(v3.Insert(ctx, &staffV3{Dept: "Sales", ID: "e3", FirstName: "Cy", LastName: "Ng", Mobile: "555-3", Email: "cy@x"}))
		must(mapper.NewRepository[deptRow](b.Store, table).Insert(ctx, &deptRow{Dept: "Sales", ID: "d", Manager: "e3"}))

		raw, err := b.Store.Table(table).Get(ctx, "Sales", "e2", nil)
		must(err)
		if raw.Properties["Type"] != "employee@2" {
			t.Fatalf("version 2's marker is %v, want employee@2", raw.Properties["Type"])
		}
		raw, err = b.Store.Table(table).Get(ctx, "Sales", "e1", nil)
		must(err)
		if raw.Properties["Type"] != "employee" {
			t.Fatalf("version 1's marker is %v, want employee (rows from before versions)", raw.Properties["Type"])
		}

		// Each version's repository reads its own rows only.
		for name, n := range map[string]int{"v1": count(t, v1), "v2": count(t, v2), "v3": count(t, v3)} {
			if n != 1 {
				t.Fatalf("repository %s read %d rows, want its 1", name, n)
			}
		}
		if _, err := v1.Get(ctx, "Sales", "e3"); !errors.Is(err, mapper.ErrWrongKind) {
			t.Fatalf("version 1 reading a version 3 row: %v", err)
		}

		// The registry reads every row as the newest version.
		reg := versionedRegistry(t).On(b.Store, table)
		var got []string
		for v, err := range reg.Query(ctx) {
			must(err)
			switch x := v.(type) {
			case staffV3:
				got = append(got, fmt.Sprintf("%s:%s/%s/%s/%s", x.ID, x.FirstName, x.LastName, x.Mobile, x.Email))
				if x.ETag == "" || x.Dept != "Sales" {
					t.Fatalf("migrated value without its keys or ETag: %+v", x)
				}
			case deptRow:
				got = append(got, "dept:"+x.Manager)
			default:
				t.Fatalf("read a %T: every employee must come back as the newest version", v)
			}
		}
		sort.Strings(got)
		if want := "dept:e3 e1:Ann/Lee/555-1/ e2:Bob/Ray/555-2/ e3:Cy/Ng/555-3/cy@x"; strings.Join(got, " ") != want {
			t.Fatalf("registry read %v, want %s", got, want)
		}
		// An update of a migrated value is conditional on the row read.
		v, err := reg.Get(ctx, "Sales", "e1")
		must(err)
		ann := v.(staffV3)
		stale := ann
		ann.Email = "ann@x"
		must(reg.Update(ctx, &ann, store.Replace))
		if err := reg.Update(ctx, &stale, store.Replace); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("an update from a stale migrated value: %v", err)
		}
		// Upgrade rewrites the remaining old row (e2) as version 3.
		rep, err := reg.Upgrade(ctx)
		must(err)
		if rep.Read != 1 || rep.Upgraded != 1 || rep.Changed != 0 {
			t.Fatalf("Upgrade = %+v, want the one row of version 2 left", rep)
		}
		if n := count(t, v3); n != 3 {
			t.Fatalf("after the upgrade the version 3 repository reads %d rows, want 3", n)
		}
		if rep, err := reg.Upgrade(ctx); err != nil || rep.Read != 0 {
			t.Fatalf("a second Upgrade: %+v, %v", rep, err)
		}
	})
}

func count[T any](t *testing.T, r *mapper.Repository[T]) int {
	t.Helper()
	n := 0
	for _, err := range r.Partition("Sales").Query(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

type badVersion struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

func (badVersion) TableKind() mapper.Kind { return mapper.Kind{Prefix: "b_", Version: 2} }

type atVersion struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

func (atVersion) TableKind() mapper.Kind {
	return mapper.Kind{Property: "Type", Value: "a@b", Version: 2}
}

// TestVersionRefusals: bad declarations and migrations are refused,
// naming the types; a row with no migration path names the missing one.
func TestVersionRefusals(t *testing.T) {
	if _, err := mapper.Encode(&badVersion{PK: "p", RK: "b_1"}); err == nil || !strings.Contains(err.Error(), "discriminator") {
		t.Fatalf("a version without a discriminator: %v", err)
	}
	if _, err := mapper.Encode(&atVersion{PK: "p", RK: "r"}); err == nil || !strings.Contains(err.Error(), "'@'") {
		t.Fatalf("a value holding '@': %v", err)
	}
	r, _ := mapper.NewPropertyRegistry("Type")
	_ = mapper.Register[staffV1](r, "employee")
	_ = mapper.Register[staffV3](r, "employee")
	_ = mapper.Register[deptRow](r, "department")
	if err := mapper.Register[staffV3](r, "employee"); err == nil {
		t.Fatal("a version registered twice was accepted")
	}
	if err := mapper.Migrate(r, func(v staffV3) (staffV1, error) { return staffV1{}, nil }); err == nil || !strings.Contains(err.Error(), "not newer") {
		t.Fatalf("a migration to an older version: %v", err)
	}
	if err := mapper.Migrate(r, func(v staffV1) (deptRow, error) { return deptRow{}, nil }); err == nil || !strings.Contains(err.Error(), "one kind") {
		t.Fatalf("a migration across kinds: %v", err)
	}
	if err := mapper.Migrate(r, func(v staffV1) (staffV2, error) { return staffV2{}, nil }); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("a migration to an unregistered type: %v", err)
	}
	// A version 1 row with no way to version 3.
	e, err := mapper.Encode(&staffV1{Dept: "Sales", ID: "e1", Name: "A B"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Decode(e); !errors.Is(err, mapper.ErrNoMigration) || !strings.Contains(err.Error(), "staffV1") {
		t.Fatalf("no migration path: %v", err)
	}
	// A migration that fails names the row and the types.
	_ = mapper.Migrate(r, func(v staffV1) (staffV3, error) { return staffV3{}, errors.New("bad name") })
	if _, err := r.Decode(e); err == nil || !strings.Contains(err.Error(), "bad name") || !strings.Contains(err.Error(), "e1") {
		t.Fatalf("a failing migration: %v", err)
	}
}
