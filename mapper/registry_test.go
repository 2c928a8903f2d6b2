package mapper

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

type staff struct {
	Dept      string     `table:",pk"`
	ID        string     `table:",rk"`
	ETag      store.ETag `table:",etag"`
	FirstName string
	Age       int32
}

type dept struct {
	Dept           string `table:",pk"`
	ID             string `table:",rk"`
	EntityType     string
	DepartmentName string
	EmployeeCount  int32
}

// pstaff and pdept are staff and dept declaring their kinds for a
// property registry.
type pstaff staff

func (pstaff) TableKind() Kind { return Kind{Property: "EntityType", Value: "Employee"} }

type pdept dept

func (pdept) TableKind() Kind { return Kind{Property: "EntityType", Value: "Department"} }

func TestPropertyRegistry(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.WithShortPages(11))
	if err := st.CreateTable(ctx, "Mixed"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("Mixed")
	reg, err := NewPropertyRegistry("EntityType")
	if err != nil {
		t.Fatal(err)
	}
	if err := Register[pstaff](reg, "Employee"); err != nil {
		t.Fatal(err)
	}
	if err := Register[pdept](reg, "Department"); err != nil {
		t.Fatal(err)
	}
	s := pstaff{Dept: "Sales", ID: "000123", FirstName: "Don", Age: 34}
	if err := reg.Insert(ctx, tbl, &s); err != nil || s.ETag == "" {
		t.Fatalf("Insert: %v, ETag %q", err, s.ETag)
	}
	d := pdept{Dept: "Sales", ID: "DEPT", EntityType: "ignored: the registry writes the kind", DepartmentName: "Sales", EmployeeCount: 1}
	if err := reg.Upsert(ctx, tbl, &d, store.Replace); err != nil {
		t.Fatal(err)
	}
	// An entity some other writer stored with an unknown kind.
	if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "X", Properties: map[string]any{"EntityType": "Robot"}}); err != nil {
		t.Fatal(err)
	}
	var got []any
	var unknown []error
	for v, err := range reg.Query(ctx, tbl, filter.PK.Eq("Sales")) {
		if err != nil {
			unknown = append(unknown, err)
			continue
		}
		got = append(got, v)
	}
	if len(got) != 2 || len(unknown) != 1 || !errors.Is(unknown[0], ErrUnknownKind) || !strings.Contains(unknown[0].Error(), "Robot") {
		t.Fatalf("got %#v, errors %v", got, unknown)
	}
	for _, v := range got {
		switch x := v.(type) {
		case pstaff:
			if x.FirstName != "Don" || x.Age != 34 || x.ETag != s.ETag {
				t.Errorf("pstaff %+v", x)
			}
		case pdept:
			if x.EmployeeCount != 1 || x.EntityType != "Department" {
				t.Errorf("pdept %+v", x)
			}
		default:
			t.Errorf("unexpected %T", v)
		}
	}
	// Only one kind.
	n := 0
	for v, err := range reg.Query(ctx, tbl, reg.Cond("Employee")) {
		if _, ok := v.(pstaff); !ok || err != nil {
			t.Fatalf("kind filter returned %T, %v", v, err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d employees", n)
	}
}

func TestPrefixRegistry(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Mixed"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("Mixed")
	reg := NewPrefixRegistry()
	if err := Register[staff](reg, "emp_"); err != nil {
		t.Fatal(err)
	}
	if err := Register[dept](reg, "dept_"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{&staff{Dept: "S", ID: "emp_1", FirstName: "a"}, &dept{Dept: "S", ID: "dept_S", DepartmentName: "S"}, &staff{Dept: "S", ID: "emp_2"}} {
		if err := reg.Insert(ctx, tbl, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.Insert(ctx, tbl, &staff{Dept: "S", ID: "dept_x"}); err == nil || !strings.Contains(err.Error(), `"emp_"`) {
		t.Fatalf("an employee with a department prefix: %v", err)
	}
	var kinds []string
	for v, err := range reg.Query(ctx, tbl, filter.Cond{}) {
		if err != nil {
			t.Fatal(err)
		}
		switch v.(type) {
		case staff:
			kinds = append(kinds, "emp")
		case dept:
			kinds = append(kinds, "dept")
		}
	}
	if strings.Join(kinds, ",") != "dept,emp,emp" {
		t.Fatalf("kinds in key order: %v", kinds)
	}
	if c := reg.Cond("emp_").String(); c != "RowKey ge 'emp_' and RowKey lt 'emp`'" {
		t.Fatalf("Cond = %s", c)
	}
	if _, err := reg.Decode(store.Entity{RowKey: "zzz"}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("Decode of an unknown prefix: %v", err)
	}
}

// badDiscriminator declares a discriminator its field cannot hold.
type badDiscriminator struct {
	PK         string `table:",pk"`
	RK         string `table:",rk"`
	EntityType int32
}

func (badDiscriminator) TableKind() Kind { return Kind{Property: "EntityType", Value: "B"} }

func TestRegistryRefuses(t *testing.T) {
	type badDisc2 = badDiscriminator
	reg := NewPrefixRegistry()
	if err := Register[staff](reg, "emp_"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]error{
		"type twice":       Register[staff](reg, "x_"),
		"kind twice":       Register[dept](reg, "emp_"),
		"overlap":          Register[dept](reg, "emp_dept_"),
		"overlap reversed": Register[dept](reg, "em"),
		"empty prefix":     Register[dept](reg, ""),
		"bad prefix":       Register[dept](reg, "a/b"),
	}
	wants := map[string]string{"type twice": "registered already", "kind twice": "registered already",
		"overlap": "overlaps", "overlap reversed": "overlaps", "empty prefix": "empty", "bad prefix": "'/'"}
	for name, err := range cases {
		var me *Error
		if !errors.As(err, &me) || me.Type != reflect.TypeFor[dept]() && me.Type != reflect.TypeFor[staff]() ||
			!strings.Contains(err.Error(), wants[name]) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewPropertyRegistry("bad-name"); err == nil {
		t.Error("an invalid discriminator property name was accepted")
	}
	preg, _ := NewPropertyRegistry("EntityType")
	var me *Error
	if err := Register[badDisc2](preg, "B"); !errors.As(err, &me) || me.Field != "EntityType" {
		t.Errorf("non-string discriminator field: %v", err)
	}
	if _, err := preg.Encode(staff{}); !errors.As(err, &me) || me.Type != reflect.TypeFor[staff]() || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("Encode of an unregistered type: %v", err)
	}
	if err := preg.Insert(context.Background(), nil, staff{}); err == nil || !strings.Contains(err.Error(), "pointer") {
		t.Errorf("Insert of a non-pointer: %v", err)
	}
}

// One transaction writes an employee and updates its department.
func TestRegistryMixedBatch(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Mixed"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("Mixed")
	reg, _ := NewPropertyRegistry("EntityType")
	if err := Register[pstaff](reg, "Employee"); err != nil {
		t.Fatal(err)
	}
	if err := Register[pdept](reg, "Department"); err != nil {
		t.Fatal(err)
	}
	d := pdept{Dept: "Sales", ID: "DEPT", EmployeeCount: 0}
	if err := reg.Insert(ctx, tbl, &d); err != nil {
		t.Fatal(err)
	}
	b := reg.Batch(tbl)
	s := pstaff{Dept: "Sales", ID: "e1", FirstName: "Ann"}
	d.EmployeeCount++
	if err := b.Insert(&s); err != nil {
		t.Fatal(err)
	}
	if err := b.UpdateUnconditional(&d, store.Replace); err != nil {
		t.Fatal(err)
	}
	if err := b.Insert(&pstaff{Dept: "HR", ID: "e2"}); store.Code(err) != store.CodeCommandsInBatchActOnDifferentPartitions {
		t.Fatalf("other partition: %v", err)
	}
	if err := b.Insert(pstaff{Dept: "Sales", ID: "e3"}); err == nil || !strings.Contains(err.Error(), "pointer") {
		t.Fatalf("non-pointer: %v", err)
	}
	if err := b.Insert(&keyed{PK: "Sales", RK: "k"}); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("unregistered type: %v", err)
	}
	if b.Len() != 2 {
		t.Fatalf("Len %d", b.Len())
	}
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if s.ETag == "" {
		t.Fatal("Run did not set the ETag")
	}
	var kinds []string
	for v, err := range reg.Query(ctx, tbl, filter.PK.Eq("Sales")) {
		if err != nil {
			t.Fatal(err)
		}
		switch x := v.(type) {
		case pdept:
			if x.EmployeeCount != 1 || x.EntityType != "Department" {
				t.Fatalf("pdept %+v", x)
			}
			kinds = append(kinds, "pdept")
		case pstaff:
			kinds = append(kinds, "pstaff")
		}
	}
	if strings.Join(kinds, ",") != "pdept,pstaff" {
		t.Fatalf("kinds %v", kinds)
	}
	// A stale conditional delete fails the whole transaction.
	b = reg.Batch(tbl)
	stale := s
	stale.ETag = `W/"datetime'2000-01-01T00%3A00%3A00Z'"`
	if err := b.Delete(&stale); err != nil {
		t.Fatal(err)
	}
	if err := b.Run(ctx); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale delete: %v", err)
	}
}
