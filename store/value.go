package store

import (
	"encoding/hex"
	"fmt"
	"math"
	"time"
)

// EdmType names one of the eight property types of the Table service.
type EdmType string

// The EDM types the Table service stores. Any other type is refused.
const (
	EdmString   EdmType = "Edm.String"
	EdmBinary   EdmType = "Edm.Binary"
	EdmBoolean  EdmType = "Edm.Boolean"
	EdmInt32    EdmType = "Edm.Int32"
	EdmInt64    EdmType = "Edm.Int64"
	EdmDouble   EdmType = "Edm.Double"
	EdmDateTime EdmType = "Edm.DateTime"
	EdmGuid     EdmType = "Edm.Guid"
)

// GUID is an Edm.Guid value: 16 bytes in the RFC 4122 byte order of its
// canonical string form (the order in which the hex digits are written).
type GUID [16]byte

// String formats g as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in lower case.
func (g GUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], g[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], g[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], g[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], g[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], g[10:16])
	return string(b[:])
}

// MarshalText implements encoding.TextMarshaler.
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (g *GUID) UnmarshalText(b []byte) error {
	v, err := ParseGUID(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// ParseGUID parses the canonical 36-character form of a GUID (hex digits in
// either case, dashes at positions 8, 13, 18 and 23).
func ParseGUID(s string) (GUID, error) {
	var g GUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, fmt.Errorf("store: invalid GUID %q: want the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", s)
	}
	parts := [...]struct{ from, to, at int }{{0, 8, 0}, {9, 13, 4}, {14, 18, 6}, {19, 23, 8}, {24, 36, 10}}
	for _, p := range parts {
		if _, err := hex.Decode(g[p.at:], []byte(s[p.from:p.to])); err != nil {
			return GUID{}, fmt.Errorf("store: invalid GUID %q: %v", s, err)
		}
	}
	return g, nil
}

// MinTime and MaxTime bound an Edm.DateTime value: the service stores UTC
// instants from 1601-01-01 to the end of 9999 with 100 ns precision.
var (
	MinTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// TypeOf reports the EDM type of a property value. It accepts exactly the
// closed set of Go types a Properties map may hold: string, []byte, bool,
// int32, int64, float64, time.Time and GUID. Anything else, including other
// integer widths and named types, is refused so that no value is ever stored
// with a type the caller did not choose.
func TypeOf(v any) (EdmType, error) {
	switch v.(type) {
	case string:
		return EdmString, nil
	case []byte:
		return EdmBinary, nil
	case bool:
		return EdmBoolean, nil
	case int32:
		return EdmInt32, nil
	case int64:
		return EdmInt64, nil
	case float64:
		return EdmDouble, nil
	case time.Time:
		return EdmDateTime, nil
	case GUID:
		return EdmGuid, nil
	}
	return "", fmt.Errorf("store: unsupported property type %T: use string, []byte, bool, int32, int64, float64, time.Time or store.GUID", v)
}

// NormalizeDouble returns f as every tablekit backend stores it: a
// negative zero becomes 0 and every NaN becomes math.NaN(). The wire has a
// single "NaN", and a negative zero does not survive Azurite (it writes
// 0.0 back), so tablekit never sends or keeps either distinction: a value
// reads back identically from memstore, Azurite and Azure. Comparisons are
// unaffected, since -0 == 0 in IEEE 754 and NaN matches no comparison.
func NormalizeDouble(f float64) float64 {
	if f == 0 {
		return 0
	}
	if math.IsNaN(f) {
		return math.NaN()
	}
	return f
}

// NormalizeTime returns t in UTC truncated to the service's 100 ns precision.
func NormalizeTime(t time.Time) time.Time {
	return t.UTC().Truncate(100 * time.Nanosecond)
}
