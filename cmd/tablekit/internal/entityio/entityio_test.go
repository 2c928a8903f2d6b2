package entityio

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

func sample() []store.Entity {
	g, _ := store.ParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	return []store.Entity{
		{PartitionKey: "p", RowKey: "1", Properties: map[string]any{
			"S": "a,b \"c\"\nd", "I": int32(-7), "L": int64(math.MaxInt64), "D": 1.0, "F": 2.5, "N": math.NaN(),
			"Inf": math.Inf(-1), "B": false, "T": time.Date(2026, 1, 2, 3, 4, 5, 123456700, time.UTC), "G": g, "X": []byte{0, 1, 2, 255},
		}},
		{PartitionKey: "p", RowKey: "2", Properties: map[string]any{"I": int64(5), "Only": "x"}}, // I with another type
		{PartitionKey: "", RowKey: ""},
	}
}

func same(t *testing.T, got, want []store.Entity) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entities, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.PartitionKey != w.PartitionKey || g.RowKey != w.RowKey || len(g.Properties) != len(w.Properties) {
			t.Fatalf("entity %d: %+v, want %+v", i, g, w)
		}
		for k, v := range w.Properties {
			gv := g.Properties[k]
			tw, _ := store.TypeOf(v)
			tg, _ := store.TypeOf(gv)
			if tw != tg || !store.SameValue(v, gv) {
				t.Errorf("entity %d property %s: %T %v, want %T %v", i, k, gv, gv, v, v)
			}
		}
	}
}

func TestJSONRoundTripKeepsTypes(t *testing.T) {
	var buf bytes.Buffer
	for _, e := range sample() {
		b, err := AppendJSON(nil, &e, false)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	for _, want := range []string{`"D@odata.type":"Edm.Double","D":1.0`, `"L@odata.type":"Edm.Int64","L":"9223372036854775807"`, `"T":"2026-01-02T03:04:05.1234567Z"`, `"N":"NaN"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON lacks %s: %s", want, buf.String())
		}
	}
	recs, err := Parse(buf.Bytes(), "jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []store.Entity
	for _, r := range recs {
		got = append(got, r.Entity)
	}
	same(t, got, sample())
}

func TestCSVRoundTripKeepsTypes(t *testing.T) {
	es := sample()
	cols, err := Columns(es)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewCSVWriter(&buf, cols, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		w.Write(&es[i])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(buf.String(), "\n")
	if head != "PartitionKey,RowKey,B:Edm.Boolean,D:Edm.Double,F:Edm.Double,G:Edm.Guid,I:Edm.Int32,I:Edm.Int64,Inf:Edm.Double,L:Edm.Int64,N:Edm.Double,Only:Edm.String,S:Edm.String,T:Edm.DateTime,X:Edm.Binary" {
		t.Errorf("header: %s", head)
	}
	recs, err := Parse(buf.Bytes(), "csv")
	if err != nil {
		t.Fatal(err)
	}
	var got []store.Entity
	for _, r := range recs {
		got = append(got, r.Entity)
	}
	same(t, got, es)
}

func TestBadLinesNameLineAndRule(t *testing.T) {
	cases := []struct{ format, in, want string }{
		{"jsonl", "{\"PartitionKey\":\"a\",\"RowKey\":\"1\"}\n[1]\n", "line 2: not a JSON object"},
		{"jsonl", "{\"PartitionKey\":\"a\",\"RowKey\":\"1\",\"N@odata.type\":\"Edm.Int64\",\"N\":\"x\"}\n", "line 1:"},
		{"jsonl", "{\"PartitionKey\":\"a\",\"RowKey\":\"1\",\"bad name\":1}\n", "line 1:"},
		{"jsonl", "{\"PartitionKey\":\"a#\",\"RowKey\":\"1\"}\n", "line 1:"},
		{"csv", "PartitionKey,RowKey,N:Edm.Int77\n", "line 1: column 3"},
		{"csv", "PartitionKey,RowKey,N:Edm.Int32\na,1,3000000000\n", "line 2: column N:Edm.Int32: \"3000000000\" is not a valid Edm.Int32: value out of range"},
		{"csv", "PartitionKey,RowKey,G:Edm.Guid\na,1,nope\n", "line 2: column G:Edm.Guid"},
		{"csv", "RowKey,PartitionKey\n", "line 1: the CSV header must start with PartitionKey,RowKey"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in), c.format)
		var le *LineError
		if err == nil || !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s", c.in, err, c.want)
		}
	}
}
