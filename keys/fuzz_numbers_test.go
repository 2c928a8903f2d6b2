package keys

import (
	"math"
	"testing"
)

func FuzzInt64(f *testing.F) {
	f.Add(int64(0), int64(-1), "00000000000000000000")
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), "-9223372036854775808")
	f.Fuzz(func(t *testing.T, a, b int64, s string) {
		ea, eb := EncodeInt64(a), EncodeInt64(b)
		if back, err := DecodeInt64(ea); err != nil || back != a {
			t.Fatalf("DecodeInt64(EncodeInt64(%d)) = %d, %v", a, back, err)
		}
		if Compare(ea, eb) != cmpOrdered(a, b) {
			t.Fatalf("order of %d and %d not kept", a, b)
		}
		if n, err := DecodeInt64(s); err == nil && EncodeInt64(n) != s {
			t.Fatalf("DecodeInt64 accepted non-canonical %q", s)
		}
	})
}

func FuzzFloat64(f *testing.F) {
	f.Add(0.0, math.Copysign(0, -1), "8000000000000000")
	f.Add(math.Inf(1), math.NaN(), "FFF0000000000001")
	f.Fuzz(func(t *testing.T, a, b float64, s string) {
		ea, eb := EncodeFloat64(a), EncodeFloat64(b)
		if back, err := DecodeFloat64(ea); err != nil || math.Float64bits(back) != math.Float64bits(a) {
			t.Fatalf("DecodeFloat64(EncodeFloat64(%v)) = %v, %v", a, back, err)
		}
		if Compare(ea, eb) != floatTotalOrder(a, b) {
			t.Fatalf("order of %v and %v not kept", a, b)
		}
		if v, err := DecodeFloat64(s); err == nil && EncodeFloat64(v) != s {
			t.Fatalf("DecodeFloat64 accepted non-canonical %q", s)
		}
	})
}

func FuzzPadUint(f *testing.F) {
	f.Add(uint64(223), 6, "000223")
	f.Fuzz(func(t *testing.T, n uint64, width int, s string) {
		p, err := PadUint(n, width)
		if err != nil {
			return
		}
		if back, err := ParseUint(p, width); err != nil || back != n {
			t.Fatalf("ParseUint(PadUint(%d, %d)) = %d, %v", n, width, back, err)
		}
		if v, err := ParseUint(s, len(s)); err == nil {
			if q, _ := PadUint(v, len(s)); q != s {
				t.Fatalf("ParseUint accepted non-canonical %q", s)
			}
		}
	})
}
