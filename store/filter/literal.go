package filter

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// literal is a typed constant of a comparison. typ says which field holds
// the value; Int32, Int64 and Boolean (0 or 1) use i.
type literal struct {
	typ store.EdmType
	s   string
	b   []byte
	i   int64
	f   float64
	t   time.Time
	g   store.GUID
}

// literalOf converts a Go value of the closed set of property types into a
// literal. It refuses other types, invalid UTF-8, and the doubles (NaN,
// infinities) the language cannot write.
func literalOf(v any) (literal, error) {
	switch x := v.(type) {
	case string:
		if !utf8Valid(x) {
			return literal{}, store.Errorf(store.CodeInvalidInput, 400, "filter value %s is not valid UTF-8", quoteTok(x))
		}
		return literal{typ: store.EdmString, s: x}, nil
	case []byte:
		return literal{typ: store.EdmBinary, b: bytes.Clone(x)}, nil
	case bool:
		l := literal{typ: store.EdmBoolean}
		if x {
			l.i = 1
		}
		return l, nil
	case int32:
		return literal{typ: store.EdmInt32, i: int64(x)}, nil
	case int64:
		return literal{typ: store.EdmInt64, i: x}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return literal{}, store.Errorf(store.CodeInvalidInput, 400, "filter value %v: NaN and infinities cannot be written in a $filter", x)
		}
		return literal{typ: store.EdmDouble, f: x}, nil
	case time.Time:
		u := x.UTC()
		if u.Year() < 1 || u.Year() > 9999 {
			return literal{}, store.Errorf(store.CodeInvalidInput, 400, "filter value %s: a datetime literal must be in years 0001 to 9999", u.Format(time.RFC3339Nano))
		}
		return literal{typ: store.EdmDateTime, t: u.Truncate(100 * time.Nanosecond)}, nil
	case store.GUID:
		return literal{typ: store.EdmGuid, g: x}, nil
	case nil:
		return literal{}, store.Errorf(store.CodeInvalidInput, 400, "filter value is nil: the service refuses null in a $filter; test for a missing property another way")
	}
	return literal{}, store.Errorf(store.CodeInvalidInput, 400, "filter value of Go type %T is not supported: use string, []byte, bool, int32, int64, float64, time.Time or store.GUID", v)
}

// equal reports whether two literals are the same typed constant (doubles
// by bits, so that -0 and 0 differ as they print differently).
func (l literal) equal(m literal) bool {
	if l.typ != m.typ {
		return false
	}
	switch l.typ {
	case store.EdmString:
		return l.s == m.s
	case store.EdmBinary:
		return bytes.Equal(l.b, m.b)
	case store.EdmDouble:
		return math.Float64bits(l.f) == math.Float64bits(m.f)
	case store.EdmDateTime:
		return l.t.Equal(m.t)
	case store.EdmGuid:
		return l.g == m.g
	}
	return l.i == m.i
}

// appendLiteral writes the canonical form of l.
func appendLiteral(b []byte, l literal) []byte {
	switch l.typ {
	case store.EdmString:
		b = append(b, '\'')
		for i := 0; i < len(l.s); i++ {
			if l.s[i] == '\'' {
				b = append(b, '\'')
			}
			b = append(b, l.s[i])
		}
		return append(b, '\'')
	case store.EdmBinary:
		b = append(b, "X'"...)
		b = append(b, strings.ToUpper(hex.EncodeToString(l.b))...)
		return append(b, '\'')
	case store.EdmBoolean:
		if l.i != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case store.EdmInt32:
		return strconv.AppendInt(b, l.i, 10)
	case store.EdmInt64:
		b = strconv.AppendInt(b, l.i, 10)
		return append(b, 'L')
	case store.EdmDouble:
		return appendDouble(b, l.f)
	case store.EdmDateTime:
		b = append(b, "datetime'"...)
		b = l.t.UTC().AppendFormat(b, "2006-01-02T15:04:05.0000000Z")
		return append(b, '\'')
	case store.EdmGuid:
		b = append(b, "guid'"...)
		b = append(b, l.g.String()...)
		return append(b, '\'')
	}
	return b
}

// appendDouble writes a double so that it reads back as a double: in plain
// decimal notation with a decimal point, the shortest digits that read back
// as the same value, never with an exponent. Every server lexes that form
// (Azurite takes 1e21 for a property name and matches nothing), at the
// cost of long literals for the rare values far from 1.
func appendDouble(b []byte, f float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if bytes.IndexByte(b[start:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
}

// parseDateTime reads the body of a datetime'...' literal:
// YYYY-MM-DDThh:mm[:ss[.f{1,7}]] followed by Z, an offset ±hh:mm, or
// nothing (read as UTC, as Edm.DateTime carries no offset).
func parseDateTime(s string) (time.Time, bool) {
	num := func(s string) (int, bool) {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, len(s) > 0
	}
	if len(s) < 16 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' {
		return time.Time{}, false
	}
	year, ok1 := num(s[0:4])
	month, ok2 := num(s[5:7])
	day, ok3 := num(s[8:10])
	hour, ok4 := num(s[11:13])
	minute, ok5 := num(s[14:16])
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return time.Time{}, false
	}
	rest := s[16:]
	sec, nsec := 0, 0
	if strings.HasPrefix(rest, ":") {
		if len(rest) < 3 {
			return time.Time{}, false
		}
		var ok bool
		if sec, ok = num(rest[1:3]); !ok {
			return time.Time{}, false
		}
		rest = rest[3:]
		if strings.HasPrefix(rest, ".") {
			j := 1
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			digits := rest[1:j]
			if len(digits) < 1 || len(digits) > 7 {
				return time.Time{}, false
			}
			frac, _ := num(digits)
			for k := len(digits); k < 9; k++ {
				frac *= 10
			}
			nsec = frac
			rest = rest[j:]
		}
	}
	offset := 0
	switch {
	case rest == "" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := num(rest[1:3])
		om, ok2 := num(rest[4:6])
		if !ok1 || !ok2 || oh > 14 || om > 59 {
			return time.Time{}, false
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	if year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // February 30th and friends normalise into the next month
		return time.Time{}, false
	}
	t = t.Add(-time.Duration(offset) * time.Second)
	if t.Year() < 1 || t.Year() > 9999 { // an offset moved it out of range
		return time.Time{}, false
	}
	return t, true
}
