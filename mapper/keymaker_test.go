package mapper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// review computes its keys: the PartitionKey is the department, the
// RowKey the compound key (employee, year) built with package keys, so
// that one employee's reviews form a contiguous range.
type review struct {
	Dept     string     `table:"-"`
	Employee string     `table:"-"`
	Year     int        `table:"-"`
	ETag     store.ETag `table:",etag"`
	Text     string
}

func (r *review) TableKeys() (string, string, error) {
	rk, err := keys.Join(r.Employee, fmt.Sprintf("%04d", r.Year))
	return r.Dept, rk, err
}

func (r *review) SetTableKeys(pk, rk string) error {
	parts, err := keys.Split(rk)
	if err != nil {
		return err
	}
	if len(parts) != 2 {
		return fmt.Errorf("review RowKey %q has %d parts, want 2", rk, len(parts))
	}
	r.Dept, r.Employee = pk, parts[0]
	_, err = fmt.Sscanf(parts[1], "%d", &r.Year)
	return err
}

func TestKeyMakerRoundTrip(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[review](t)
	in := []review{
		{Dept: "Sales", Employee: "000123", Year: 2012, Text: "good"},
		{Dept: "Sales", Employee: "000123", Year: 2013, Text: "better"},
		{Dept: "Sales", Employee: "0001234", Year: 2013, Text: "other"},
		{Dept: "Sales", Employee: "a/b#c", Year: 2020, Text: "forbidden characters escaped"},
	}
	for i := range in {
		if err := r.Insert(ctx, &in[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Get(ctx, "Sales", mustJoin(t, "a/b#c", "2020"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Employee != "a/b#c" || got.Year != 2020 || got.Dept != "Sales" || got.Text != in[3].Text {
		t.Fatalf("Get = %+v", got)
	}
	// Every review of employee 000123, and only those: a prefix range.
	rng, err := keys.PrefixOf("000123")
	if err != nil {
		t.Fatal(err)
	}
	var years []int
	for v, err := range r.Partition("Sales").Query(ctx, Where[review]("RowKey").InRange(rng)) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Employee != "000123" {
			t.Fatalf("range returned %+v", v)
		}
		years = append(years, v.Year)
	}
	if fmt.Sprint(years) != "[2012 2013]" {
		t.Fatalf("years %v", years)
	}
}

func mustJoin(t *testing.T, parts ...string) string {
	t.Helper()
	k, err := keys.Join(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKeyMakerErrors(t *testing.T) {
	bad := review{Dept: "d", Employee: "\xff", Year: 1}
	_, err := Encode(&bad)
	var me *Error
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "TableKeys") || !errors.Is(err, keys.ErrInvalidKey) {
		t.Fatalf("Encode with a bad key part: %v", err)
	}
	var v review
	err = Decode(store.Entity{PartitionKey: "d", RowKey: "only-one-part"}, &v)
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "SetTableKeys") || !strings.Contains(err.Error(), "1 parts") {
		t.Fatalf("Decode with a foreign RowKey: %v", err)
	}
}
