package wire

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// minimalResponse is shaped like the service's odata=minimalmetadata point
// read (the example of the "Payload format" REST page, with a whole Double).
const minimalResponse = `{
 "odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Customers/@Element",
 "odata.etag":"W/\"0x5B168C7B6E589D2\"",
 "PartitionKey":"mypartitionkey",
 "RowKey":"myrowkey",
 "Timestamp@odata.type":"Edm.DateTime",
 "Timestamp":"2013-08-22T01:12:06.2608595Z",
 "Address":"Mountain View",
 "Age":23,
 "AmountDue":200.23,
 "Whole":200.0,
 "Big":3000000000,
 "CustomerCode@odata.type":"Edm.Guid",
 "CustomerCode":"c9da6455-213d-42c9-9a79-3e9149a57833",
 "CustomerSince@odata.type":"Edm.DateTime",
 "CustomerSince":"2008-07-10T00:00:00",
 "IsActive":true,
 "NumberOfOrders@odata.type":"Edm.Int64",
 "NumberOfOrders":"255",
 "Blob@odata.type":"Edm.Binary",
 "Blob":"AQID",
 "Missing":null
}`

func TestDecodeEntityMinimalMetadata(t *testing.T) {
	e, err := DecodeEntity([]byte(minimalResponse))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := store.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	want := store.Entity{
		PartitionKey: "mypartitionkey",
		RowKey:       "myrowkey",
		Timestamp:    time.Date(2013, 8, 22, 1, 12, 6, 260859500, time.UTC),
		ETag:         `W/"0x5B168C7B6E589D2"`,
		Properties: map[string]any{
			"Address":        "Mountain View",
			"Age":            int32(23),
			"AmountDue":      200.23,
			"Whole":          200.0,
			"Big":            3000000000.0,
			"CustomerCode":   g,
			"CustomerSince":  time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC),
			"IsActive":       true,
			"NumberOfOrders": int64(255),
			"Blob":           []byte{1, 2, 3},
		},
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("DecodeEntity =\n%#v\nwant\n%#v", e, want)
	}
}

// TestDecodeEntityFullAndNoMetadata covers the other two metadata levels:
// full metadata adds odata.type/id/editLink members and annotates more
// properties; no metadata drops every annotation, so Timestamp is typed by
// its name and the rest by their JSON tokens.
func TestDecodeEntityFullAndNoMetadata(t *testing.T) {
	full := `{"odata.type":"acct.T","odata.id":"https://x/T(PartitionKey='a',RowKey='b')","odata.etag":"W/\"1\"","odata.editLink":"T(PartitionKey='a',RowKey='b')",
	 "PartitionKey":"a","RowKey":"b","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2020-01-01T00:00:00Z",
	 "N@odata.type":"Edm.Int32","N":5,"D@odata.type":"Edm.Double","D":5,"S@odata.type":"Edm.String","S":"5"}`
	e, err := DecodeEntity([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	wantProps := map[string]any{"N": int32(5), "D": 5.0, "S": "5"}
	if !reflect.DeepEqual(e.Properties, wantProps) || e.ETag != `W/"1"` || e.PartitionKey != "a" || e.RowKey != "b" {
		t.Errorf("full metadata: got %#v", e)
	}
	none := `{"PartitionKey":"a","RowKey":"b","Timestamp":"2020-01-01T00:00:00.5Z","N":-2147483648,"M":2147483648}`
	e, err = DecodeEntity([]byte(none))
	if err != nil {
		t.Fatal(err)
	}
	if !e.Timestamp.Equal(time.Date(2020, 1, 1, 0, 0, 0, 5e8, time.UTC)) {
		t.Errorf("Timestamp = %v", e.Timestamp)
	}
	if !reflect.DeepEqual(e.Properties, map[string]any{"N": int32(math.MinInt32), "M": 2147483648.0}) {
		t.Errorf("no metadata: got %#v", e.Properties)
	}
}

// TestDecodeAnnotationAfterValue proves an annotation that follows its
// value still types it.
func TestDecodeAnnotationAfterValue(t *testing.T) {
	e, err := DecodeEntity([]byte(`{"A":"12","B":1,"A@odata.type":"Edm.Int64","B@odata.type":"Edm.Double"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Properties, map[string]any{"A": int64(12), "B": 1.0}) {
		t.Errorf("got %#v", e.Properties)
	}
}

func TestDecodeEscapes(t *testing.T) {
	e, err := DecodeEntity([]byte(`{"PartitionKey":"a\"b\\c\/d\u00e9\ud83d\ude00\n","RowKey":"\ud800x","Na\u006de":"v"}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.PartitionKey != "a\"b\\c/dé😀\n" || e.RowKey != "\uFFFDx" || e.Properties["Name"] != "v" {
		t.Errorf("got %#v", e)
	}
}

// TestDecodeEntityErrors proves malformed and mistyped input is refused
// with an error that names the problem.
func TestDecodeEntityErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, "end of input"},
		{`[]`, "want '{'"},
		{`{"A":1`, "want ',' or '}'"},
		{`{"A":1} x`, "after the top-level value"},
		{`{"A":01}`, "want ',' or '}'"},
		{`{"A":1.}`, "no digits after '.'"},
		{`{"A":tru}`, "invalid literal"},
		{`{"A":"x` + "\n" + `"}`, "control character"},
		{`{"A":"\x"}`, "escape"},
		{`{"A":{"b":1}}`, "object or array"},
		{`{"A@odata.type":"Edm.Int16","A":1}`, "unsupported type"},
		{`{"A@odata.type":5,"A":1}`, "not a string"},
		{`{"A@odata.type":"Edm.Int32","A":2147483648}`, "32-bit"},
		{`{"A@odata.type":"Edm.Int64","A":"9223372036854775808"}`, "64-bit"},
		{`{"A@odata.type":"Edm.Int64","A":"12x"}`, "64-bit"},
		{`{"A@odata.type":"Edm.Double","A":"nope"}`, "a number"},
		{`{"A@odata.type":"Edm.Double","A":"1e999"}`, "finite"},
		{`{"A@odata.type":"Edm.Guid","A":"c9da6455-213d-42c9-9a79-3e9149a5783"}`, "GUID"},
		{`{"A@odata.type":"Edm.Guid","A":"c9da6455-213d-42c9-9a79-3e9149a5783g"}`, "GUID"},
		{`{"A@odata.type":"Edm.Binary","A":"AQI*"}`, "base64"},
		{`{"A@odata.type":"Edm.DateTime","A":"2021-02-29T00:00:00Z"}`, "date and time"},
		{`{"A@odata.type":"Edm.DateTime","A":"2021-01-01T00:00:00.1234567890Z"}`, "date and time"},
		{`{"A@odata.type":"Edm.Boolean","A":1}`, "true or false"},
		{`{"A@odata.type":"Edm.String","A":1}`, "JSON string"},
	}
	for _, tc := range cases {
		_, err := DecodeEntity([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeEntity(%s) error = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
}

// TestScanStopsOnCallbackError proves fn's error comes back unchanged.
func TestScanStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Scan([]byte(`{"A":1,"B":2}`), func(p Property) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("Scan = %v after %d calls, want stop after 1", err, n)
	}
}

func TestDecodeEntities(t *testing.T) {
	resp := `{"odata.metadata":"x","value":[{"PartitionKey":"a","RowKey":"1","V":1},{"PartitionKey":"a","RowKey":"2","V@odata.type":"Edm.Int64","V":"2"}],"extra":{"n":[1,2]}}`
	es, err := DecodeEntities([]byte(resp))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].RowKey != "1" || es[0].Properties["V"] != int32(1) || es[1].Properties["V"] != int64(2) {
		t.Errorf("got %#v", es)
	}
	es, err = DecodeEntities([]byte(`{"value":[]}`))
	if err != nil || len(es) != 0 {
		t.Errorf("empty page: %v, %v", es, err)
	}
	for _, bad := range []string{`{"value":[1]}`, `{"value":[{"A":1},]}`, `{"value":[{"A":1}}`, `{"value":{}}`, `{"value":[{"A":1}]`} {
		if _, err := DecodeEntities([]byte(bad)); err == nil {
			t.Errorf("DecodeEntities(%s) succeeded, want an error", bad)
		}
	}
}

func TestParseTimeForms(t *testing.T) {
	base := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2024-05-06T07:08:09Z":           base,
		"2024-05-06T07:08:09":            base,
		"2024-05-06T07:08:09.1Z":         base.Add(100 * time.Millisecond),
		"2024-05-06T07:08:09.123456789Z": base.Add(123456789),
		"2024-05-06T09:08:09+02:00":      base,
		"2024-05-06T05:38:09-01:30":      base,
	} {
		got, err := ParseTime([]byte(in))
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%s) = %v, %v; want %v in UTC", in, got, err, want)
		}
	}
	for _, bad := range []string{"2024-13-01T00:00:00Z", "2024-05-06 07:08:09Z", "2024-05-06T24:00:00Z", "2024-05-06T07:08:09.Z", "2024-05-06T07:08:09+2:00", "2024-05-06T07:08:09ZZ"} {
		if _, err := ParseTime([]byte(bad)); err == nil {
			t.Errorf("ParseTime(%s) succeeded", bad)
		}
	}
}

// TestScanTypesEveryAnnotationPlacement builds entities of up to 300
// properties whose annotations sit just before their value, just after
// it, far from it in either direction, or nowhere, in random member
// orders, and checks that Scan gives every property the type its
// annotation names (or the one its token implies without one), as the
// pairing of neighbours and the search of the rest must agree.
func TestScanTypesEveryAnnotationPlacement(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 300 {
		n := 1 + rng.IntN(300)
		type member struct{ name, value string }
		var ms []member
		want := map[string]store.EdmType{}
		var far []member // annotations placed elsewhere
		for i := range n {
			name := fmt.Sprintf("P%03d", i)
			if rng.IntN(20) == 0 {
				name = fmt.Sprintf("P\\u0030%02d", i) // an escaped name: "P0%02d"
			}
			plain := strings.ReplaceAll(name, "\\u0030", "0")
			value, typ := `"s"`, store.EdmString
			annotated := rng.IntN(3) != 0
			if annotated {
				value, typ = `"7"`, store.EdmInt64
			}
			want[plain] = typ
			ann := member{name + "@odata.type", `"Edm.Int64"`}
			switch p := rng.IntN(4); {
			case !annotated:
				ms = append(ms, member{name, value})
			case p == 0:
				ms = append(ms, ann, member{name, value})
			case p == 1:
				ms = append(ms, member{name, value}, ann)
			default:
				ms = append(ms, member{name, value})
				far = append(far, ann)
			}
		}
		for _, a := range far { // anywhere, before or after its value
			i := rng.IntN(len(ms) + 1)
			ms = slices.Insert(ms, i, a)
		}
		var b strings.Builder
		b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
		for _, m := range ms {
			fmt.Fprintf(&b, `,"%s":%s`, m.name, m.value)
		}
		b.WriteString("}")
		got := map[string]store.EdmType{}
		err := Scan([]byte(b.String()), func(p Property) error {
			if s := string(p.Name); s != "PartitionKey" && s != "RowKey" {
				got[s] = p.Type
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !maps.Equal(got, want) {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("round %d: %s typed %q, want %q", round, k, got[k], v)
				}
			}
			t.Fatalf("round %d: %d properties, %d typed", round, len(want), len(got))
		}
		e, err := DecodeEntity([]byte(b.String()))
		if err != nil || len(e.Properties) != n {
			t.Fatalf("round %d: DecodeEntity: %d properties, %v", round, len(e.Properties), err)
		}
	}
}
