package wire

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit/store"
)

// Property is one property of an entity as Scan reads it: its name, its
// EDM type (from its annotation, or inferred from the JSON token), and the
// raw JSON token of its value. Name and Raw alias the scanned input: copy
// them (or convert with the accessors) before the input is reused.
type Property struct {
	// Name is the property name, unescaped. System members keep their wire
	// names: "PartitionKey", "RowKey", "Timestamp" and "odata.etag".
	Name []byte
	// Type is the value's EDM type.
	Type store.EdmType
	// Raw is the JSON token: a string with its quotes, a number, true or false.
	Raw []byte

	escaped bool // Raw is a string token containing backslashes
}

func (p Property) typeErr(want string) error {
	return fmt.Errorf("wire: property %q of type %s: value %s is not %s", p.Name, p.Type, truncRaw(p.Raw), want)
}

func truncRaw(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

func (p Property) isString() bool { return len(p.Raw) >= 2 && p.Raw[0] == '"' }

// strBody returns the content of a string token, or Raw itself for other
// tokens (so a number written as a string or as a number parse alike).
func (p Property) strBody() []byte {
	if p.isString() {
		return p.Raw[1 : len(p.Raw)-1]
	}
	return p.Raw
}

// AsString returns an Edm.String value (or the text of any string token).
func (p Property) AsString() (string, error) {
	if !p.isString() {
		return "", p.typeErr("a JSON string")
	}
	return unquote(p.Raw, p.escaped)
}

// AsBool returns an Edm.Boolean value.
func (p Property) AsBool() (bool, error) {
	switch string(p.Raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, p.typeErr("true or false")
}

// AsInt32 returns an Edm.Int32 value.
func (p Property) AsInt32() (int32, error) {
	v, ok := parseInt(p.strBody())
	if !ok || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, p.typeErr("a 32-bit integer")
	}
	return int32(v), nil
}

// AsInt64 returns an Edm.Int64 value (a decimal string, or a number).
func (p Property) AsInt64() (int64, error) {
	v, ok := parseInt(p.strBody())
	if !ok {
		return 0, p.typeErr("a 64-bit integer")
	}
	return v, nil
}

// AsDouble returns an Edm.Double value: a number, or one of the strings
// "NaN", "Infinity" and "-Infinity" (or "INF" and "-INF").
func (p Property) AsDouble() (float64, error) {
	b := p.strBody()
	switch string(b) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "INF":
		return math.Inf(1), nil
	case "-Infinity", "-INF":
		return math.Inf(-1), nil
	}
	if len(b) == 0 || !(b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return 0, p.typeErr("a number")
	}
	v, err := strconv.ParseFloat(unsafeString(b), 64)
	if err != nil {
		return 0, p.typeErr("a finite 64-bit number")
	}
	return store.NormalizeDouble(v), nil
}

// AsTime returns an Edm.DateTime value in UTC.
func (p Property) AsTime() (time.Time, error) {
	if !p.isString() || p.escaped {
		return time.Time{}, p.typeErr("a date and time string")
	}
	t, err := ParseTime(p.strBody())
	if err != nil {
		return time.Time{}, p.typeErr("a date and time (" + err.Error() + ")")
	}
	return t, nil
}

// AsGUID returns an Edm.Guid value.
func (p Property) AsGUID() (store.GUID, error) {
	g, ok := parseGUID(p.strBody())
	if !ok || !p.isString() {
		return g, p.typeErr("a GUID")
	}
	return g, nil
}

// AsBinary returns an Edm.Binary value, decoded from base64 into a new slice.
func (p Property) AsBinary() ([]byte, error) {
	if !p.isString() || p.escaped {
		return nil, p.typeErr("a base64 string")
	}
	b := p.strBody()
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(out, b)
	if err != nil {
		return nil, p.typeErr("standard base64")
	}
	return out[:n], nil
}

// Value converts the property to the Go type store uses for its EDM type:
// string, []byte, bool, int32, int64, float64, time.Time or store.GUID.
func (p Property) Value() (any, error) {
	switch p.Type {
	case store.EdmString:
		return p.AsString()
	case store.EdmBoolean:
		return p.AsBool()
	case store.EdmInt32:
		return p.AsInt32()
	case store.EdmInt64:
		return p.AsInt64()
	case store.EdmDouble:
		return p.AsDouble()
	case store.EdmDateTime:
		return p.AsTime()
	case store.EdmGuid:
		return p.AsGUID()
	case store.EdmBinary:
		return p.AsBinary()
	}
	return nil, fmt.Errorf("wire: property %q has unsupported type %q", p.Name, p.Type)
}

// unsafeString views b as a string for a call that does not keep it.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// parseInt parses an optionally signed decimal integer that fits in 64 bits.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// parseGUID parses the 36-character canonical form, hex in either case.
func parseGUID(b []byte) (store.GUID, bool) {
	var g store.GUID
	if len(b) != 36 || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return g, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := unhex(b[i])
		lo, ok2 := unhex(b[i+1])
		if !ok1 || !ok2 {
			return store.GUID{}, false
		}
		g[j] = hi<<4 | lo
		j++
		i += 2
	}
	return g, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
