package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"
)

func wantCode(t *testing.T, name string, err error, code string, status int) {
	t.Helper()
	var se *Error
	if code == "" {
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		return
	}
	if !errors.As(err, &se) || se.Code != code || se.Status != status {
		t.Errorf("%s: got %v, want %s (%d)", name, err, code, status)
	}
}

func TestValidateTableName(t *testing.T) {
	cases := []struct{ name, code string }{
		{"abc", ""}, {"A1b2C3", ""}, {strings.Repeat("a", 63), ""},
		{"ab", CodeOutOfRangeInput}, {strings.Repeat("a", 64), CodeOutOfRangeInput}, {"", CodeOutOfRangeInput},
		{"1abc", CodeInvalidResourceName}, {"ab-c", CodeInvalidResourceName}, {"ab_c", CodeInvalidResourceName}, {"tablé", CodeInvalidResourceName},
		{"tables", CodeInvalidInput}, {"TABLES", CodeInvalidInput},
	}
	for _, c := range cases {
		wantCode(t, c.name, ValidateTableName(c.name), c.code, 400)
	}
	err := ValidateTableName("ab-c")
	if !strings.Contains(err.Error(), `"ab-c"`) || !strings.Contains(err.Error(), "'-'") {
		t.Errorf("message does not name the value and the character: %v", err)
	}
}

func TestValidateKeys(t *testing.T) {
	astral := "\U0001F600" // two UTF-16 units
	cases := []struct {
		name, key, code string
	}{
		{"empty", "", ""},
		{"1024 units", strings.Repeat("k", 1024), ""},
		{"1025 units", strings.Repeat("k", 1025), CodeKeyValueTooLarge},
		{"1024 units with astral", strings.Repeat("k", 1022) + astral, ""},
		{"1025 units with astral", strings.Repeat("k", 1023) + astral, CodeKeyValueTooLarge},
		{"slash", "a/b", CodeOutOfRangeInput}, {"backslash", `a\b`, CodeOutOfRangeInput},
		{"hash", "a#b", CodeOutOfRangeInput}, {"question", "a?b", CodeOutOfRangeInput},
		{"tab", "a\tb", CodeOutOfRangeInput}, {"DEL", "a\x7fb", CodeOutOfRangeInput}, {"C1", "a\u0085b", CodeOutOfRangeInput},
		{"invalid UTF-8", "a\xffb", CodeInvalidInput},
		{"unicode", "Zürich-北京", ""},
	}
	for _, c := range cases {
		wantCode(t, "PartitionKey "+c.name, ValidateKeys(c.key, "r"), c.code, 400)
		wantCode(t, "RowKey "+c.name, ValidateKeys("p", c.key), c.code, 400)
	}
}

func TestValidateEntityLimits(t *testing.T) {
	props := func(n int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("P%d", i)] = int32(i)
		}
		return m
	}
	big := func(n int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("B%d", i)] = make([]byte, MaxBinaryBytes)
		}
		return m
	}
	cases := []struct {
		name  string
		props map[string]any
		code  string
	}{
		{"252 properties", props(252), ""},
		{"253 properties", props(253), CodeTooManyProperties},
		{"253 with one nil", func() map[string]any { m := props(252); m["Nil"] = nil; return m }(), ""},
		{"name 255", map[string]any{strings.Repeat("n", 255): true}, ""},
		{"name 256", map[string]any{strings.Repeat("n", 256): true}, CodePropertyNameTooLong},
		{"name digit first", map[string]any{"1a": true}, CodePropertyNameInvalid},
		{"name dash", map[string]any{"a-b": true}, CodePropertyNameInvalid},
		{"name underscore", map[string]any{"_a1": true}, ""},
		{"name reserved", map[string]any{"ETag": "x"}, CodePropertyNameInvalid},
		{"Timestamp ignored", map[string]any{"Timestamp": time.Now()}, ""},
		{"name empty", map[string]any{"": true}, CodePropertyNameInvalid},
		{"string max", map[string]any{"S": strings.Repeat("s", MaxStringUnits)}, ""},
		{"string over", map[string]any{"S": strings.Repeat("s", MaxStringUnits+1)}, CodePropertyValueTooLarge},
		{"binary max", map[string]any{"B": make([]byte, MaxBinaryBytes)}, ""},
		{"binary over", map[string]any{"B": make([]byte, MaxBinaryBytes+1)}, CodePropertyValueTooLarge},
		{"time min", map[string]any{"T": MinTime}, ""},
		{"time before min", map[string]any{"T": MinTime.Add(-100 * time.Nanosecond)}, CodeOutOfRangeInput},
		{"time max", map[string]any{"T": MaxTime}, ""},
		{"time after max", map[string]any{"T": MaxTime.Add(100 * time.Nanosecond)}, CodeOutOfRangeInput},
		{"int type", map[string]any{"I": 5}, CodeInvalidValueType},
		{"uint type", map[string]any{"I": uint32(5)}, CodeInvalidValueType},
		{"float32 type", map[string]any{"F": float32(1)}, CodeInvalidValueType},
		{"NaN", map[string]any{"F": math.NaN()}, ""},
		{"entity 16 binaries over 1 MiB", big(16), CodeEntityTooLarge},
		{"entity 15 binaries", big(15), ""},
	}
	for _, c := range cases {
		e := Entity{PartitionKey: "p", RowKey: "r", Properties: c.props}
		wantCode(t, c.name, ValidateEntity(&e), c.code, 400)
	}
}

func TestEntitySizeFormula(t *testing.T) {
	e := Entity{PartitionKey: "pk", RowKey: "r", Properties: map[string]any{
		"S": "abc", "B": []byte{1, 2}, "I": int32(1), "L": int64(1), "D": 1.5, "T": time.Now(), "G": GUID{}, "X": true, "N": nil,
	}}
	want := 4 + 2*3 + // keys
		(8 + 2 + 2*3 + 4) + (8 + 2 + 2 + 4) + (8 + 2 + 4) + (8 + 2 + 8) + (8 + 2 + 8) + (8 + 2 + 8) + (8 + 2 + 16) + (8 + 2 + 1)
	if got := EntitySize(&e); got != want {
		t.Fatalf("EntitySize = %d, want %d", got, want)
	}
	// The exact edge: grow a string until the formula hits the limit.
	base := Entity{Properties: map[string]any{}}
	// 15 maximal strings named Sxx, then a binary "Z" takes the rest.
	fill := MaxEntitySize - 4
	for i := range 15 {
		base.Properties[fmt.Sprintf("S%02d", i)] = strings.Repeat("x", MaxStringUnits)
		fill -= 8 + 2*3 + 2*MaxStringUnits + 4
	}
	base.Properties["Z"] = make([]byte, fill-8-2-4)
	if EntitySize(&base) != MaxEntitySize {
		t.Fatalf("edge entity is %d bytes, want %d", EntitySize(&base), MaxEntitySize)
	}
	wantCode(t, "exactly 1 MiB", ValidateEntity(&base), "", 0)
	base.Properties["Z"] = append(base.Properties["Z"].([]byte), 0)
	wantCode(t, "1 MiB + 1", ValidateEntity(&base), CodeEntityTooLarge, 400)
}

func TestValidateETag(t *testing.T) {
	for _, ok := range []ETag{"*", `"abc"`, `W/"datetime'2024-01-01T00%3A00%3A00Z'"`} {
		wantCode(t, string(ok), ValidateETag(ok), "", 0)
	}
	for _, bad := range []ETag{"", "abc", `W/abc`, `"a"b"`, `"`} {
		wantCode(t, string(bad), ValidateETag(bad), CodeInvalidInput, 400)
	}
}

func TestValidateTopAndSelect(t *testing.T) {
	wantCode(t, "top 0", ValidateTop(0), "", 0)
	wantCode(t, "top 1000", ValidateTop(1000), "", 0)
	wantCode(t, "top 1001", ValidateTop(1001), CodeInvalidInput, 400)
	wantCode(t, "top -1", ValidateTop(-1), CodeInvalidInput, 400)
	wantCode(t, "select keys", ValidateSelect([]string{"PartitionKey", "RowKey", "Timestamp", "Name"}), "", 0)
	wantCode(t, "select bad", ValidateSelect([]string{"a b"}), CodePropertyNameInvalid, 400)
}

func TestValidateTransaction(t *testing.T) {
	ins := func(pk, rk string) Action {
		return Action{Kind: ActionInsert, Entity: Entity{PartitionKey: pk, RowKey: rk}}
	}
	many := func(n int) []Action {
		var a []Action
		for i := range n {
			a = append(a, ins("p", fmt.Sprint(i)))
		}
		return a
	}
	type tc struct {
		name    string
		actions []Action
		code    string
		status  int
		index   int
	}
	hugeProps := func() map[string]any {
		m := map[string]any{}
		for i := range 15 {
			m[fmt.Sprintf("B%d", i)] = make([]byte, MaxBinaryBytes)
		}
		return m
	}
	var huge []Action
	for i := range 4 { // 4 entities of ~1.3 MB of base64 each: over 4 MiB
		huge = append(huge, Action{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: hugeProps()}})
	}
	cases := []tc{
		{"empty", nil, CodeInvalidInput, 400, -1},
		{"100", many(100), "", 0, -1},
		{"101", many(101), CodeInvalidInput, 400, -1},
		{"two partitions", []Action{ins("a", "1"), ins("b", "2")}, CodeCommandsInBatchActOnDifferentPartitions, 400, 1},
		{"duplicate row", []Action{ins("a", "1"), ins("a", "2"), ins("a", "1")}, CodeInvalidDuplicateRow, 400, 2},
		{"bad key in batch", []Action{ins("a", "1"), ins("a", "x/y")}, CodeInvalidInput, 400, 1},
		{"update without If-Match", []Action{{Kind: ActionUpdateMerge, Entity: Entity{PartitionKey: "a", RowKey: "1"}}}, CodeInvalidInput, 400, 0},
		{"delete with star", []Action{{Kind: ActionDelete, Entity: Entity{PartitionKey: "a", RowKey: "1"}, IfMatch: ETagAny}}, "", 0, -1},
		{"body over 4 MiB", huge, CodeRequestBodyTooLarge, 413, -1},
	}
	for _, c := range cases {
		err := ValidateTransaction(c.actions)
		wantCode(t, c.name, err, c.code, c.status)
		var se *Error
		if c.code != "" && errors.As(err, &se) && se.Index != c.index {
			t.Errorf("%s: index %d, want %d", c.name, se.Index, c.index)
		}
	}
}

func TestTypeOfAndGUID(t *testing.T) {
	for _, v := range []any{"", []byte{}, true, int32(0), int64(0), 0.0, time.Time{}, GUID{}} {
		if _, err := TypeOf(v); err != nil {
			t.Errorf("TypeOf(%T): %v", v, err)
		}
	}
	for _, v := range []any{0, uint8(1), float32(1), struct{}{}, nil} {
		if _, err := TypeOf(v); err == nil {
			t.Errorf("TypeOf(%T) accepted an unsupported type", v)
		}
	}
	g, err := ParseGUID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")
	if err != nil || g.String() != "3f2504e0-4f89-11d3-9a0c-0305e82c3301" || g[0] != 0x3f || g[15] != 0x01 {
		t.Fatalf("ParseGUID: %v %v", g, err)
	}
	for _, bad := range []string{"", "3F2504E0-4F89-11D3-9A0C-0305E82C330", "3F2504E0x4F89-11D3-9A0C-0305E82C3301", "zF2504E0-4F89-11D3-9A0C-0305E82C3301"} {
		if _, err := ParseGUID(bad); err == nil {
			t.Errorf("ParseGUID(%q) accepted", bad)
		}
	}
}

// TestJSONStringLenBoundsEveryEncoding proves the size estimate is never
// below what a string takes in a body: as encoding/json writes it (the SDK
// re-encodes bodies with it, escaping <, > and &) and in the all-ASCII form
// azstore sends large bodies in.
func TestJSONStringLenBoundsEveryEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	alphabet := []rune{'a', '<', '>', '&', '"', '\\', '\n', 0x01, 0xE9, 0x2028, 0x4E2D, 0xFFFD, 0x1F600}
	for range 5000 {
		r := make([]rune, rng.IntN(40))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(r)
		std, _ := json.Marshal(s)
		ascii := 2
		for _, c := range s {
			switch {
			case c == '"' || c == '\\':
				ascii += 2
			case c < 0x20 || c >= 0x80 && c < 0x10000:
				ascii += 6
			case c >= 0x10000:
				ascii += 12
			default:
				ascii++
			}
		}
		if got := jsonStringLen(s); got < len(std) || got < ascii {
			t.Fatalf("jsonStringLen(%q) = %d, but encoding/json takes %d and ASCII JSON %d", s, got, len(std), ascii)
		}
	}
}

// TestActionWireSizeCountsKeysInURLs proves long keys weigh on the batch
// body twice, in the JSON and percent-encoded in the sub-request URL, so
// that 100 actions with 1,024-character non-ASCII keys are sized as such.
func TestActionWireSizeCountsKeysInURLs(t *testing.T) {
	key := strings.Repeat("é", MaxKeyUnits) // 2 UTF-8 bytes: 6 in a URL, 6 as a JSON escape
	del := Action{Kind: ActionDelete, Entity: Entity{PartitionKey: key, RowKey: key}}
	if got, min := ActionWireSize(&del), 2*len(url.PathEscape(key)); got < min {
		t.Fatalf("delete with two long keys sized %d bytes, below the %d its URL takes", got, min)
	}
	ins := Action{Kind: ActionInsert, Entity: Entity{PartitionKey: key, RowKey: key}}
	if got, min := ActionWireSize(&ins), 2*len(url.PathEscape(key))+2*6*MaxKeyUnits; got < min {
		t.Fatalf("insert with two long keys sized %d bytes, below %d", got, min)
	}
	if urlKeyLen("a'b") != 8 || urlKeyLen("az09-._~") != 8 || urlKeyLen("a b") != 5 {
		t.Fatalf("urlKeyLen: %d %d %d", urlKeyLen("a'b"), urlKeyLen("az09-._~"), urlKeyLen("a b"))
	}
}
