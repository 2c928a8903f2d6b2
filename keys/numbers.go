package keys

import (
	"fmt"
	"math"
	"strconv"
)

// MaxPadWidth is the widest [PadUint] padding: 20 digits hold every uint64.
const MaxPadWidth = 20

// PadUint formats n in decimal, zero-padded to width digits, so that keys
// of the same width sort in numeric order: the guide's employee id
// "000223". It fails with [ErrOutOfRange] when n needs more than width
// digits (a silently wider key would sort out of place) or width is not
// 1 to [MaxPadWidth].
func PadUint(n uint64, width int) (string, error) {
	if width < 1 || width > MaxPadWidth {
		return "", fmt.Errorf("%w: padding width %d, it must be 1 to %d", ErrOutOfRange, width, MaxPadWidth)
	}
	var buf [MaxPadWidth]byte
	digits := strconv.AppendUint(buf[:0], n, 10)
	if len(digits) > width {
		return "", fmt.Errorf("%w: %d needs %d digits, the padding width is %d", ErrOutOfRange, n, len(digits), width)
	}
	out := make([]byte, width)
	pad := width - len(digits)
	for i := 0; i < pad; i++ {
		out[i] = '0'
	}
	copy(out[pad:], digits)
	return string(out), nil
}

// ParseUint reverses [PadUint]: s must be exactly width decimal digits.
// It fails with [ErrMalformed] otherwise, and with [ErrOutOfRange] for a
// width outside 1 to [MaxPadWidth] or a value above the uint64 range.
func ParseUint(s string, width int) (uint64, error) {
	if width < 1 || width > MaxPadWidth {
		return 0, fmt.Errorf("%w: padding width %d, it must be 1 to %d", ErrOutOfRange, width, MaxPadWidth)
	}
	if len(s) != width {
		return 0, fmt.Errorf("%w: %s is %d characters long, want %d digits", ErrMalformed, quote(s), len(s), width)
	}
	if i := nonDigit(s); i >= 0 {
		return 0, fmt.Errorf("%w: %s has %q at offset %d, want only digits", ErrMalformed, quote(s), s[i], i)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is above the largest uint64 %d", ErrOutOfRange, s, uint64(math.MaxUint64))
	}
	return n, nil
}

// nonDigit returns the offset of the first byte of s that is not an ASCII
// digit, or -1.
func nonDigit(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return i
		}
	}
	return -1
}

// int64Bias maps int64 onto uint64 in order: adding 2^63 turns
// math.MinInt64 into 0 and math.MaxInt64 into 2^64-1.
const int64Bias = 1 << 63

// EncodeInt64 formats n as a 20-character key whose string order is
// numeric order, negatives first. A non-negative n is '0' and its value
// in 19 digits ("00000000000000000042", the same string as PadUint(42, 20));
// a negative n is '-' and n+2^63 in 19 digits, so -1 is
// "-9223372036854775807" and math.MinInt64 is "-0000000000000000000".
// '-' sorts before '0', and within each sign the digits rise with n.
func EncodeInt64(n int64) string {
	var b [20]byte
	v := uint64(n)
	b[0] = '0'
	if n < 0 {
		b[0] = '-'
		v = uint64(n) + int64Bias // n + 2^63, in 0 .. 2^63-1
	}
	for i := 19; i >= 1; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[:])
}

// DecodeInt64 reverses [EncodeInt64]. It fails with [ErrMalformed] for a
// string EncodeInt64 cannot have produced.
func DecodeInt64(s string) (int64, error) {
	if len(s) != 20 {
		return 0, fmt.Errorf("%w: encoded int64 %s is %d characters long, want 20", ErrMalformed, quote(s), len(s))
	}
	if s[0] != '0' && s[0] != '-' {
		return 0, fmt.Errorf("%w: encoded int64 %s starts with %q, want '0' or '-'", ErrMalformed, quote(s), s[0])
	}
	if i := nonDigit(s[1:]); i >= 0 {
		return 0, fmt.Errorf("%w: encoded int64 %s has %q at offset %d, want a digit", ErrMalformed, quote(s), s[i+1], i+1)
	}
	v, err := strconv.ParseUint(s[1:], 10, 64)
	if err != nil || v > math.MaxInt64 {
		return 0, fmt.Errorf("%w: encoded int64 %s: the 19 digits must be at most %d", ErrMalformed, quote(s), int64(math.MaxInt64))
	}
	if s[0] == '0' {
		return int64(v), nil
	}
	return int64(v - int64Bias), nil
}

// EncodeFloat64 formats f as 16 upper-case hex digits whose string order
// is the IEEE 754 total order: -NaN < -Inf < negative numbers < -0 < +0 <
// positive numbers < +Inf < +NaN. The sign bit of a positive value is
// set and every bit of a negative value is flipped, which turns the
// float's bits into an unsigned number that rises with the value. -0 and
// +0 are distinct keys (-0 first); a NaN keeps its sign and payload, so
// decoding gives back the same bits.
func EncodeFloat64(f float64) string {
	bits := math.Float64bits(f)
	if bits>>63 == 1 {
		bits = ^bits
	} else {
		bits |= 1 << 63
	}
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hexDigits[bits&0xF]
		bits >>= 4
	}
	return string(b[:])
}

// DecodeFloat64 reverses [EncodeFloat64], bit for bit. It fails with
// [ErrMalformed] for anything but 16 upper-case hex digits.
func DecodeFloat64(s string) (float64, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("%w: encoded float64 %s is %d characters long, want 16", ErrMalformed, quote(s), len(s))
	}
	var bits uint64
	for i := 0; i < 16; i++ {
		d := unhex(s[i])
		if d < 0 {
			return 0, fmt.Errorf("%w: encoded float64 %s has %q at offset %d, want an upper-case hex digit", ErrMalformed, quote(s), s[i], i)
		}
		bits = bits<<4 | uint64(d)
	}
	if bits>>63 == 1 {
		bits &^= 1 << 63
	} else {
		bits = ^bits
	}
	return math.Float64frombits(bits), nil
}
