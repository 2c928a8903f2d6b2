package mapper

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

type filtered struct {
	Dept  string    `table:",pk"`
	ID    string    `table:",rk"`
	When  time.Time `table:",timestamp"`
	Name  string
	Tag   Tag
	Age   int32
	Small int8
	Count uint16
	Pay   int64 `table:"Salary"`
	Big   uint64
	Score float64
	On    bool
	Born  time.Time
	Photo []byte
	G     store.GUID
	U     UUID
	Pt    Point
	Cash  Money
	PAge  *int32
	Doc   Nested `table:",json"`
}

func TestWhereBuildsTypedLiterals(t *testing.T) {
	g := store.GUID{0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9}
	cases := []struct {
		c    Cond[filtered]
		want string
	}{
		{Where[filtered]("Age").Gt(30), "Age gt 30"},
		{Where[filtered]("Age").Le(int64(-7)), "Age le -7"},
		{Where[filtered]("Small").Eq(uint8(100)), "Small eq 100"},
		{Where[filtered]("Count").Ge(65535), "Count ge 65535"},
		{Where[filtered]("Pay").Ge(100), "Salary ge 100L"},
		{Where[filtered]("Salary").Lt(int32(5)), "Salary lt 5L"},
		{Where[filtered]("Big").Eq(uint64(math.MaxInt64)), "Big eq 9223372036854775807L"},
		{Where[filtered]("Score").Gt(2), "Score gt 2.0"},
		{Where[filtered]("Score").Lt(2.5), "Score lt 2.5"},
		{Where[filtered]("On").Eq(true), "On eq true"},
		{Where[filtered]("Name").Eq("O'Brien"), "Name eq 'O''Brien'"},
		{Where[filtered]("Name").Eq(Tag("t")), "Name eq 't'"},
		{Where[filtered]("Tag").Ne("x"), "Tag ne 'x'"},
		{Where[filtered]("Born").Ge(time.Date(2024, 1, 1, 2, 0, 0, 0, time.FixedZone("x", 7200))), "Born ge datetime'2024-01-01T00:00:00.0000000Z'"},
		{Where[filtered]("Timestamp").Lt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), "Timestamp lt datetime'2030-01-01T00:00:00.0000000Z'"},
		{Where[filtered]("When").Lt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), "Timestamp lt datetime'2030-01-01T00:00:00.0000000Z'"},
		{Where[filtered]("G").Eq(g), "G eq guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'"},
		{Where[filtered]("U").Eq([16]byte(g)), "U eq guid'0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'"},
		{Where[filtered]("Photo").Eq([]byte{0x0a, 0xff}), "Photo eq X'0AFF'"},
		{Where[filtered]("Pt").Eq(Point{1, 2}), "Pt eq '1;2'"},
		{Where[filtered]("Cash").Gt(Money{250}), "Cash gt 250L"},
		{Where[filtered]("PAge").Eq(3), "PAge eq 3"},
		{Where[filtered]("Dept").Eq("Sales"), "PartitionKey eq 'Sales'"},
		{Where[filtered]("RowKey").Between("a", "b"), "RowKey ge 'a' and RowKey lt 'b'"},
		{Where[filtered]("ID").HasPrefix("emp_"), "RowKey ge 'emp_' and RowKey lt 'emp`'"},
		{Where[filtered]("Age").Gt(1).And(Where[filtered]("Name").Eq("a")).Or(Where[filtered]("On").Eq(false)),
			"(Age gt 1 and Name eq 'a') or On eq false"},
		{Not(Where[filtered]("Age").Eq(1)), "not (Age eq 1)"},
		{Where[filtered]("RowKey").InRange(keys.PrefixRange("emp_")), "RowKey ge 'emp_' and RowKey lt 'emp`'"},
		{Where[filtered]("ID").InRange(keys.Range{Lower: "a", Upper: "c", HasUpper: true, UpperIncluded: true}), "RowKey ge 'a' and RowKey le 'c'"},
		{Where[filtered]("ID").InRange(keys.Range{}), ""},
	}
	for _, c := range cases {
		if err := c.c.Err(); err != nil {
			t.Errorf("%s: %v", c.want, err)
			continue
		}
		if got := c.c.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

func TestWhereRefuses(t *testing.T) {
	cases := []struct {
		c     Cond[filtered]
		field string
		want  []string
	}{
		{Where[filtered]("Agee").Eq(1), "Agee", []string{`no property or field named "Agee"`, "Age"}},
		{Where[filtered]("Age").Eq("30"), "Age", []string{"Edm.Int32", `string value 30`}},
		{Where[filtered]("Age").Eq(int64(1) << 40), "Age", []string{"1099511627776", "range of int32"}},
		{Where[filtered]("Small").Gt(300), "Small", []string{"300", "int8"}},
		{Where[filtered]("Count").Gt(-1), "Count", []string{"-1", "uint16"}},
		{Where[filtered]("Age").Eq(1.5), "Age", []string{"float64 value 1.5"}},
		{Where[filtered]("Big").Eq(uint64(math.MaxUint64)), "Big", []string{"out of range"}},
		{Where[filtered]("Name").Eq(5), "Name", []string{"Edm.String", "int value 5"}},
		{Where[filtered]("On").Eq("true"), "On", []string{"Edm.Boolean"}},
		{Where[filtered]("Born").Eq("2024-01-01"), "Born", []string{"Edm.DateTime"}},
		{Where[filtered]("Born").Eq(time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)), "Born", []string{"outside the range"}},
		{Where[filtered]("G").Eq("0a1b"), "G", []string{"Edm.Guid"}},
		{Where[filtered]("Photo").Eq("x"), "Photo", []string{"Edm.Binary"}},
		{Where[filtered]("Pt").Eq(3), "Pt", []string{"mapper.Point"}},
		{Where[filtered]("Cash").Eq(250), "Cash", []string{"MarshalTableProperty"}},
		{Where[filtered]("Doc").Eq("{}"), "Doc", []string{"JSON cannot be compared"}},
		{Where[filtered]("Age").Eq(nil), "Age", []string{"no null"}},
		{Where[filtered]("PartitionKey").Eq(1), "PartitionKey", []string{"PartitionKey", "int value 1"}},
		{Where[filtered]("Timestamp").Eq("now"), "Timestamp", []string{"time.Time"}},
		{Where[filtered]("Age").HasPrefix("x"), "Age", []string{"Edm.Int32"}},
		{Where[filtered]("Age").InRange(keys.PrefixRange("1")), "Age", []string{"Edm.Int32"}},
	}
	for _, c := range cases {
		err := c.c.Err()
		var me *Error
		if !errors.As(err, &me) {
			t.Errorf("%s: got %v, want *mapper.Error", c.want[0], err)
			continue
		}
		if me.Field != c.field {
			t.Errorf("%v: names field %q, want %q", err, me.Field, c.field)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: does not mention %q", err, w)
			}
		}
		// The error survives joins, and a query never sends it.
		joined := Where[filtered]("Age").Eq(1).And(c.c).Or(Where[filtered]("On").Eq(true))
		if !errors.Is(joined.Err(), err) && joined.Err().Error() != err.Error() {
			t.Errorf("joined condition lost the error: %v", joined.Err())
		}
		if !strings.HasPrefix(c.c.String(), "<invalid filter") {
			t.Errorf("a bad condition prints as %q", c.c.String())
		}
	}
}

func TestQueryWithBadCondSendsNothing(t *testing.T) {
	queries := 0
	r, _ := newRepo[person](t, memstore.WithFaults(func(op memstore.Operation, _ string) error {
		if op == memstore.OpQuery {
			queries++
		}
		return nil
	}))
	seed(t, r, 3, 1)
	n := 0
	for _, err := range r.Query(t.Context(), Where[person]("Nope").Eq(1)) {
		n++
		if err == nil || !strings.Contains(err.Error(), "Nope") {
			t.Fatalf("got %v", err)
		}
	}
	if n != 1 || queries != 0 {
		t.Fatalf("%d results and %d queries sent, want the one error and none", n, queries)
	}
}
