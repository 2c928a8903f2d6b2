package mapper

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

type bigText string

func (b bigText) MarshalText() ([]byte, error) { return []byte(b), nil }
func (b *bigText) UnmarshalText(p []byte) error {
	*b = bigText(p)
	return nil
}

type unboundedDoc struct {
	PK     string            `table:",pk"`
	RK     string            `table:",rk"`
	ETag   store.ETag        `table:",etag"`
	Body   string            // past the string limit
	Blob   []byte            // past the binary limit
	Text   bigText           // a TextMarshaler past the string limit
	Parts  []string          `table:",json"` // JSON past the string limit
	Custom customAny         // a PropertyMarshaler past the binary limit
	When   time.Time         // still range-checked
	Small  int32             // unchanged
	Extra  map[string]any    `table:",extra"`
	Skip   string            `table:"-"`
	Ptr    *string           `table:",omitempty"`
	Nested map[string]string `table:",json,omitempty"`
}

// EncodeLarge lets strings and binary values pass the per-property limits
// that Encode enforces, keeps every other check, and leaves the keys out;
// Decode reads the large values back.
func TestEncodeUnboundedPassesPropertyLimits(t *testing.T) {
	long := strings.Repeat("ab", store.MaxStringUnits)
	blob := bytes.Repeat([]byte{7}, store.MaxBinaryBytes+1)
	d := unboundedDoc{PK: "p", RK: "r", ETag: `W/"x"`, Body: long, Blob: blob, Text: bigText(long),
		Parts: []string{long}, Custom: customAny{blob}, When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Small: 3,
		Extra: map[string]any{"More": long, "Bytes": blob, "Nil": nil}}
	if _, err := Encode(&d); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("Encode: %v, want a size refusal", err)
	}
	props, err := EncodeUnbounded(&d)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"PK", "RK", "ETag", "Skip", "Ptr", "Nested", "Nil"} {
		if _, ok := props[name]; ok {
			t.Errorf("property %s was encoded", name)
		}
	}
	if props["Body"] != long || props["Text"] != long || props["More"] != long ||
		!bytes.Equal(props["Blob"].([]byte), blob) || !bytes.Equal(props["Custom"].([]byte), blob) || !bytes.Equal(props["Bytes"].([]byte), blob) ||
		props["Small"] != int32(3) || len(props["Parts"].(string)) != len(long)+4 {
		t.Fatalf("EncodeLarge lost a value: %d properties", len(props))
	}
	var back unboundedDoc
	props["Custom"] = nil // customAny does not decode
	if err := Decode(store.Entity{PartitionKey: "p", RowKey: "r", Properties: props}, &back); err != nil {
		t.Fatal(err)
	}
	if back.Body != long || string(back.Text) != long || !bytes.Equal(back.Blob, blob) || len(back.Parts) != 1 || back.Parts[0] != long ||
		back.Extra["More"] != long || !back.When.Equal(d.When) {
		t.Fatal("Decode did not read the large values back")
	}
}

// Everything but the size limits is still refused.
func TestEncodeUnboundedKeepsOtherChecks(t *testing.T) {
	bad := string([]byte{0xff, 'a'})
	for _, tc := range []struct {
		name string
		v    any
		code string
	}{
		{"nil", nil, store.CodeInvalidInput},
		{"not a struct", 3, store.CodeInvalidInput},
		{"time out of range", &unboundedDoc{When: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}, store.CodeOutOfRangeInput},
		{"extra name", &unboundedDoc{Extra: map[string]any{"a-b": "x"}}, store.CodePropertyNameInvalid},
		{"extra type", &unboundedDoc{Extra: map[string]any{"X": 3}}, store.CodeInvalidValueType},
		{"extra long string not UTF-8", &unboundedDoc{Extra: map[string]any{"X": strings.Repeat(bad, store.MaxStringUnits)}}, store.CodeInvalidInput},
		{"extra short string not UTF-8", &unboundedDoc{Extra: map[string]any{"X": bad}}, store.CodeInvalidInput},
		{"custom type", &unboundedDoc{Custom: customAny{3}}, store.CodeInvalidInput},
		{"custom error", &unboundedDoc{Custom: customAny{errors.New("boom")}}, store.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeUnbounded(tc.v)
			if err == nil || store.Code(err) != tc.code {
				t.Fatalf("EncodeLarge: %v (code %q), want code %s", err, store.Code(err), tc.code)
			}
		})
	}
}
