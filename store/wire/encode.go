package wire

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// AppendEntity appends e as one JSON object: PartitionKey, RowKey, then
// every non-nil property in name order with the annotations the service
// needs. Timestamp and ETag are not written (the service sets them). It
// fails only on a property value of a type outside store's closed set.
func AppendEntity(dst []byte, e *store.Entity) ([]byte, error) {
	dst = AppendEntityStart(dst, e.PartitionKey, e.RowKey)
	if len(e.Properties) > 0 {
		var small [32]string
		names := small[:0]
		for k := range e.Properties {
			names = append(names, k)
		}
		slices.Sort(names)
		var err error
		for _, k := range names {
			if dst, err = AppendProperty(dst, k, e.Properties[k]); err != nil {
				return dst, err
			}
		}
	}
	return AppendEntityEnd(dst), nil
}

// AppendEntityStart opens an entity object and writes its two keys:
// {"PartitionKey":"pk","RowKey":"rk". Follow it with property appenders
// (each writes its own leading comma) and AppendEntityEnd.
func AppendEntityStart(dst []byte, pk, rk string) []byte {
	dst = append(dst, `{"PartitionKey":`...)
	dst = AppendString(dst, pk)
	dst = append(dst, `,"RowKey":`...)
	dst = AppendString(dst, rk)
	return dst
}

// AppendEntityEnd closes an object opened by AppendEntityStart.
func AppendEntityEnd(dst []byte) []byte { return append(dst, '}') }

// AppendProperty appends ,"name":value for any value of store's closed set,
// with its annotation where the type needs one. A nil value appends
// nothing: the service does not store nulls. Any other type is an error
// naming the property and the type.
func AppendProperty(dst []byte, name string, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return dst, nil
	case string:
		return AppendStringProp(dst, name, x), nil
	case []byte:
		return AppendBinaryProp(dst, name, x), nil
	case bool:
		return AppendBoolProp(dst, name, x), nil
	case int32:
		return AppendInt32Prop(dst, name, x), nil
	case int64:
		return AppendInt64Prop(dst, name, x), nil
	case float64:
		return AppendDoubleProp(dst, name, x), nil
	case time.Time:
		return AppendTimeProp(dst, name, x), nil
	case store.GUID:
		return AppendGUIDProp(dst, name, x), nil
	}
	return dst, fmt.Errorf("wire: property %q: unsupported Go type %T (use string, []byte, bool, int32, int64, float64, time.Time or store.GUID)", name, v)
}

// appendName appends ,"name":
func appendName(dst []byte, name string) []byte {
	dst = append(dst, ',')
	dst = AppendString(dst, name)
	return append(dst, ':')
}

// appendAnnotation appends ,"name@odata.type":"typ"
func appendAnnotation(dst []byte, name string, typ store.EdmType) []byte {
	dst = append(dst, ',', '"')
	dst = appendStringBody(dst, name)
	dst = append(dst, `@odata.type":"`...)
	dst = append(dst, typ...)
	return append(dst, '"')
}

// AppendStringProp appends ,"name":"v" (Edm.String needs no annotation).
func AppendStringProp(dst []byte, name, v string) []byte {
	return AppendString(appendName(dst, name), v)
}

// AppendBoolProp appends ,"name":true or false.
func AppendBoolProp(dst []byte, name string, v bool) []byte {
	return strconv.AppendBool(appendName(dst, name), v)
}

// AppendInt32Prop appends ,"name":v (a JSON number is read as Edm.Int32).
func AppendInt32Prop(dst []byte, name string, v int32) []byte {
	return strconv.AppendInt(appendName(dst, name), int64(v), 10)
}

// AppendInt64Prop appends the Edm.Int64 annotation and ,"name":"v": Int64
// travels as a string so no JSON reader rounds it through a float.
func AppendInt64Prop(dst []byte, name string, v int64) []byte {
	dst = appendAnnotation(dst, name, store.EdmInt64)
	dst = append(appendName(dst, name), '"')
	dst = strconv.AppendInt(dst, v, 10)
	return append(dst, '"')
}

// AppendDoubleProp appends the Edm.Double annotation and the value: a JSON
// number that always has a fraction or exponent (1 is written 1.0), or the
// strings "NaN", "Infinity" and "-Infinity".
func AppendDoubleProp(dst []byte, name string, v float64) []byte {
	dst = appendAnnotation(dst, name, store.EdmDouble)
	return AppendDouble(appendName(dst, name), v)
}

// AppendDouble appends a Double value as the service writes it (see
// AppendDoubleProp), without name or annotation. A negative zero is written
// as 0.0 (see store.NormalizeDouble).
func AppendDouble(dst []byte, v float64) []byte {
	v = store.NormalizeDouble(v)
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Infinity"`...)
	}
	abs := math.Abs(v)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, v, fmtc, -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

// AppendTimeProp appends the Edm.DateTime annotation and the instant in UTC
// with 7 fractional digits; precision below 100 ns is truncated.
func AppendTimeProp(dst []byte, name string, v time.Time) []byte {
	dst = appendAnnotation(dst, name, store.EdmDateTime)
	dst = append(appendName(dst, name), '"')
	dst = AppendTime(dst, v)
	return append(dst, '"')
}

// AppendGUIDProp appends the Edm.Guid annotation and the canonical form.
func AppendGUIDProp(dst []byte, name string, v store.GUID) []byte {
	dst = appendAnnotation(dst, name, store.EdmGuid)
	dst = append(appendName(dst, name), '"')
	dst = AppendGUID(dst, v)
	return append(dst, '"')
}

// AppendGUID appends the 36-character lower-case form of g, unquoted.
func AppendGUID(dst []byte, g store.GUID) []byte {
	const hexd = "0123456789abcdef"
	for i, b := range g {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexd[b>>4], hexd[b&15])
	}
	return dst
}

// AppendBinaryProp appends the Edm.Binary annotation and v in standard
// base64 with padding.
func AppendBinaryProp(dst []byte, name string, v []byte) []byte {
	dst = appendAnnotation(dst, name, store.EdmBinary)
	dst = append(appendName(dst, name), '"')
	dst = base64.StdEncoding.AppendEncode(dst, v)
	return append(dst, '"')
}

// AppendString appends s as a quoted JSON string. It escapes '"', '\\',
// every control character and U+2028/U+2029 (which some JavaScript readers
// take for line ends), and replaces invalid UTF-8 with U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendStringBody(dst, s)
	return append(dst, '"')
}

// appendStringBody appends the escaped content of s without quotes.
func appendStringBody(dst []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexd[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
