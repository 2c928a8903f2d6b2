package mapper

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store/wire"
)

type withExtra struct {
	PK    string `table:",pk"`
	RK    string `table:",rk"`
	B     string
	M     int64
	Other map[string]any `table:",extra"`
}

// Extra properties are merged into the name order of the wire format.
func TestAppendJSONMergesExtra(t *testing.T) {
	v := withExtra{PK: "p", RK: "r", B: "b", M: 5, Other: map[string]any{
		"A": int32(1), "C": time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "Z": []byte{1}, "N": 2.5, "B": "shadowed", "Nil": nil}}
	e, err := Encode(&v)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := wire.AppendEntity(nil, &e)
	got, err := AppendJSON(nil, &v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var back withExtra
	if err := DecodeJSON(got, &back); err != nil {
		t.Fatal(err)
	}
	delete(v.Other, "B")
	delete(v.Other, "Nil")
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("decoded %+v, want %+v", back, v)
	}
	v.Other = map[string]any{"Bad": uint(1)}
	if _, err := AppendJSON(nil, &v); err == nil || !strings.Contains(err.Error(), "Bad") {
		t.Fatalf("extra of an unsupported type: %v", err)
	}
}

// DecodeJSON reads what the service returns: full metadata, the system
// members, annotations after the value, nulls from $select.
func TestDecodeJSONServiceResponse(t *testing.T) {
	body := `{"odata.metadata":"https://x/$metadata#People/@Element","odata.etag":"W/\"datetime'2024-01-01T00%3A00%3A00Z'\"",` +
		`"PartitionKey":"d","RowKey":"7","Timestamp":"2024-01-01T00:00:00.1234567Z","Name":"Ann","Age":30,` +
		`"Pay":"9000000000","Pay@odata.type":"Edm.Int64","Missing":null}`
	var p person
	if err := DecodeJSON([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	want := person{Dept: "d", ID: "7", ETag: `W/"datetime'2024-01-01T00%3A00%3A00Z'"`,
		Seen: time.Date(2024, 1, 1, 0, 0, 0, 123456700, time.UTC), Name: "Ann", Age: 30, Salary: 9000000000}
	if p != want {
		t.Fatalf("got  %+v\nwant %+v", p, want)
	}
	list := `{"value":[` + body + `,{"PartitionKey":"d","RowKey":"8","Age":31}]}`
	ps, err := DecodeJSONValues[person]([]byte(list))
	if err != nil || len(ps) != 2 || ps[0] != want || ps[1].Age != 31 || ps[1].ID != "8" {
		t.Fatalf("DecodeJSONValues: %+v, %v", ps, err)
	}
}

func TestDecodeJSONRefuses(t *testing.T) {
	cases := []struct {
		body, field string
		want        []string
	}{
		{`{"Age":"x"}`, "Age", []string{"Edm.String", "int32"}},
		{`{"Age":"5000000000","Age@odata.type":"Edm.Int64"}`, "Age", []string{"5000000000", "overflows Go type int32"}},
		{`{"Age":3000000000}`, "Age", []string{"Edm.Double", "int32"}},
		{`{"Name":true}`, "Name", []string{"Edm.Boolean", "string"}},
		{`{"Pay":"12x","Pay@odata.type":"Edm.Int64"}`, "Salary", []string{"12x"}},
		{`{"Name":"a"`, "", []string{"JSON"}},
		{`{"Name":{"a":1}}`, "", []string{"object"}},
	}
	for _, c := range cases {
		var p person
		err := DecodeJSON([]byte(c.body), &p)
		var me *Error
		if !errors.As(err, &me) || me.Field != c.field || me.Type != reflect.TypeFor[person]() {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", c.body, err, w)
			}
		}
	}
	if _, err := DecodeJSONValues[person]([]byte(`{"value":[{"Age":"x"}]}`)); err == nil || !strings.Contains(err.Error(), "Age") {
		t.Errorf("DecodeJSONValues with a bad entity: %v", err)
	}
}
