package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestAppendStringMatchesEncodingJSON proves AppendString writes valid JSON
// that reads back as the same string encoding/json would produce, for
// quotes, backslashes, every control character, U+2028/2029, astral runes
// and invalid UTF-8.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		"", "plain", `quote " and backslash \`, "tab\tnl\ncr\rbs\bff\f",
		"\u2028line\u2029para", "emoji 😀 and 中文", "bad \xff utf8 \xc3", "\x00\x01\x1f\x7f",
		"</script>&", strings.Repeat("é", 300),
	}
	for c := 0; c < 0x20; c++ {
		inputs = append(inputs, "x"+string(rune(c))+"y")
	}
	for _, in := range inputs {
		out := AppendString(nil, in)
		if !json.Valid(out) {
			t.Fatalf("AppendString(%q) = %s: not valid JSON", in, out)
		}
		var got, want string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		ref, _ := json.Marshal(in)
		_ = json.Unmarshal(ref, &want)
		if got != want {
			t.Errorf("AppendString(%q) reads back as %q, want %q", in, got, want)
		}
		if bytes.Contains(out, []byte("\u2028")) || bytes.Contains(out, []byte("\u2029")) {
			t.Errorf("AppendString(%q) = %s: U+2028/2029 left unescaped", in, out)
		}
		for _, b := range out {
			if b < 0x20 {
				t.Errorf("AppendString(%q) = %q: raw control byte %#x", in, out, b)
			}
		}
	}
}

// TestAppendEntityAnnotations proves every type is written with exactly the
// annotation and value form the service expects.
func TestAppendEntityAnnotations(t *testing.T) {
	g, _ := store.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	e := store.Entity{PartitionKey: "p'1", RowKey: "r\"1", Properties: map[string]any{
		"S":     "text",
		"B":     []byte{0, 1, 2, 0xff},
		"T":     true,
		"I32":   int32(-7),
		"I64":   int64(math.MaxInt64),
		"D1":    1.0,
		"D2":    2.5e-9,
		"D3":    1e300,
		"NaN":   math.NaN(),
		"PInf":  math.Inf(1),
		"NInf":  math.Inf(-1),
		"When":  time.Date(2024, 2, 29, 23, 59, 58, 123456789, time.FixedZone("x", 3600)),
		"G":     g,
		"Nil":   nil,
		"Other": "x",
	}}
	out, err := AppendEntity(nil, &e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("not valid JSON: %v\n%s", err, out)
	}
	want := map[string]string{
		"PartitionKey": `"p'1"`, "RowKey": `"r\"1"`,
		"S": `"text"`, "T": `true`, "I32": `-7`,
		"B": `"AAEC/w=="`, "B@odata.type": `"Edm.Binary"`,
		"I64": `"9223372036854775807"`, "I64@odata.type": `"Edm.Int64"`,
		"D1": `1.0`, "D1@odata.type": `"Edm.Double"`,
		"D2@odata.type": `"Edm.Double"`, "D3@odata.type": `"Edm.Double"`,
		"NaN": `"NaN"`, "NaN@odata.type": `"Edm.Double"`,
		"PInf": `"Infinity"`, "PInf@odata.type": `"Edm.Double"`,
		"NInf": `"-Infinity"`, "NInf@odata.type": `"Edm.Double"`,
		"When": `"2024-02-29T22:59:58.1234567Z"`, "When@odata.type": `"Edm.DateTime"`,
		"G": `"c9da6455-213d-42c9-9a79-3e9149a57833"`, "G@odata.type": `"Edm.Guid"`,
		"Other": `"x"`,
	}
	for k, v := range want {
		if string(m[k]) != v {
			t.Errorf("member %s = %s, want %s", k, m[k], v)
		}
	}
	for _, k := range []string{"Nil", "S@odata.type", "T@odata.type", "I32@odata.type", "Timestamp", "odata.etag"} {
		if _, ok := m[k]; ok {
			t.Errorf("member %s must not be written: %s", k, out)
		}
	}
	var f2, f3 float64
	_ = json.Unmarshal(m["D2"], &f2)
	_ = json.Unmarshal(m["D3"], &f3)
	if f2 != 2.5e-9 || f3 != 1e300 {
		t.Errorf("D2, D3 = %s, %s: do not read back as 2.5e-9, 1e300", m["D2"], m["D3"])
	}
	if len(m) != len(want)+2 { // D2 and D3 are checked by value above
		t.Errorf("%d members, want %d: %s", len(m), len(want)+2, out)
	}
}

// TestAppendTimeFormat pins the 7-digit UTC form at the edges of the range.
func TestAppendTimeFormat(t *testing.T) {
	re := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$`)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{store.MinTime, "1601-01-01T00:00:00.0000000Z"},
		{store.MaxTime, "9999-12-31T23:59:59.9999999Z"},
		{time.Date(2000, 1, 2, 3, 4, 5, 99, time.UTC), "2000-01-02T03:04:05.0000000Z"},
		{time.Date(2000, 1, 2, 3, 4, 5, 100, time.UTC), "2000-01-02T03:04:05.0000001Z"},
	} {
		got := string(AppendTime(nil, tc.in))
		if got != tc.want || !re.MatchString(got) {
			t.Errorf("AppendTime(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestAppendPropertyRefusesOtherTypes proves a type outside the closed set
// is an error naming the property and the type.
func TestAppendPropertyRefusesOtherTypes(t *testing.T) {
	for _, v := range []any{int(1), uint8(1), float32(1), struct{}{}, []string{"a"}} {
		_, err := AppendProperty(nil, "Prop", v)
		if err == nil || !strings.Contains(err.Error(), `"Prop"`) {
			t.Errorf("AppendProperty(%T) error = %v, want one naming the property", v, err)
		}
	}
	e := store.Entity{Properties: map[string]any{"X": int(1)}}
	if _, err := AppendEntity(nil, &e); err == nil || !strings.Contains(err.Error(), "int") {
		t.Errorf("AppendEntity with an int property: error = %v", err)
	}
}

// TestNegativeZeroAndNaNPayloads proves the wire keeps no distinction the
// backends cannot all keep: a negative zero is written 0.0 and read as 0,
// and any NaN is written "NaN" and read as math.NaN() (store.NormalizeDouble).
func TestNegativeZeroAndNaNPayloads(t *testing.T) {
	negZero := math.Copysign(0, -1)
	if got := string(AppendDouble(nil, negZero)); got != "0.0" {
		t.Errorf("AppendDouble(-0) = %s, want 0.0", got)
	}
	if got := string(AppendDouble(nil, math.Float64frombits(0x7ff8dead0000beef))); got != `"NaN"` {
		t.Errorf("AppendDouble(a NaN) = %s, want \"NaN\"", got)
	}
	e, err := DecodeEntity([]byte(`{"PartitionKey":"p","RowKey":"r","Z@odata.type":"Edm.Double","Z":-0.0,"Y":-0.0e0}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Z", "Y"} {
		f, ok := e.Properties[name].(float64)
		if !ok || f != 0 || math.Signbit(f) {
			t.Errorf("%s read back as %#v (sign bit %v), want +0", name, e.Properties[name], math.Signbit(f))
		}
	}
}
