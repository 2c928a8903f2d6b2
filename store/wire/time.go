package wire

import (
	"errors"
	"time"
)

// AppendTime appends t as the service writes an Edm.DateTime, unquoted:
// UTC with exactly 7 fractional digits, "2006-01-02T15:04:05.0000000Z".
// Precision below 100 ns is truncated. Years outside 0 to 9999 are clamped
// to four digits by the caller's validation (store.ValidateValue), not here.
func AppendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	frac := t.Nanosecond() / 100
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, min, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sec, 2)
	dst = append(dst, '.')
	dst = appendDigits(dst, frac, 7)
	return append(dst, 'Z')
}

// appendDigits appends v zero-padded to width digits.
func appendDigits(dst []byte, v, width int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var buf [20]byte
	i := len(buf)
	for v >= 10 || width > 1 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	i--
	buf[i] = byte('0' + v)
	return append(dst, buf[i:]...)
}

var errBadTime = errors.New("not an ISO 8601 UTC date and time")

// ParseTime parses an Edm.DateTime as the service and Azurite write it:
// "2006-01-02T15:04:05" followed by 0 to 9 fractional digits and "Z" (or
// no zone, which the service means as UTC), or an RFC 3339 offset. The
// result is in UTC; digits below 100 ns are kept as given.
func ParseTime(b []byte) (time.Time, error) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, errBadTime
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	min, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || min > 59 || sec > 59 {
		return time.Time{}, errBadTime
	}
	rest := b[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		scale := 100000000
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if scale == 0 {
				return time.Time{}, errBadTime
			}
			nsec += int(rest[n]-'0') * scale
			scale /= 10
			n++
		}
		if n == 1 {
			return time.Time{}, errBadTime
		}
		rest = rest[n:]
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC)
	switch {
	case len(rest) == 0 || (len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z')):
		return t, nil
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, errBadTime
		}
		off := time.Duration(oh)*time.Hour + time.Duration(om)*time.Minute
		if rest[0] == '+' {
			off = -off
		}
		return t.Add(off), nil
	}
	return time.Time{}, errBadTime
}

func digits(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(m time.Month, year int) int {
	switch m {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}
