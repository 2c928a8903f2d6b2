package keys

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestPadUint(t *testing.T) {
	cases := []struct {
		n     uint64
		width int
		want  string
	}{
		{223, 6, "000223"},
		{0, 1, "0"},
		{9, 1, "9"},
		{999999, 6, "999999"},
		{math.MaxUint64, 20, "18446744073709551615"},
	}
	for _, c := range cases {
		got, err := PadUint(c.n, c.width)
		if err != nil || got != c.want {
			t.Errorf("PadUint(%d, %d) = %q, %v; want %q", c.n, c.width, got, err, c.want)
		}
		back, err := ParseUint(got, c.width)
		if err != nil || back != c.n {
			t.Errorf("ParseUint(%q, %d) = %d, %v", got, c.width, back, err)
		}
	}
}

func TestPadUintErrors(t *testing.T) {
	cases := []struct {
		n       uint64
		width   int
		mention []string
	}{
		{1000000, 6, []string{"1000000", "7 digits", "width is 6"}},
		{10, 1, []string{"2 digits"}},
		{1, 0, []string{"width 0", "1 to 20"}},
		{1, 21, []string{"width 21"}},
		{1, -3, []string{"width -3"}},
	}
	for _, c := range cases {
		_, err := PadUint(c.n, c.width)
		if !errors.Is(err, ErrOutOfRange) {
			t.Errorf("PadUint(%d, %d) = %v, want ErrOutOfRange", c.n, c.width, err)
			continue
		}
		for _, m := range c.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("PadUint(%d, %d) error %q should mention %q", c.n, c.width, err, m)
			}
		}
	}
}

func TestParseUintErrors(t *testing.T) {
	cases := []struct {
		s     string
		width int
		want  error
	}{
		{"12", 3, ErrMalformed},
		{"1234", 3, ErrMalformed},
		{"12a", 3, ErrMalformed},
		{"-12", 3, ErrMalformed},
		{"+12", 3, ErrMalformed},
		{" 12", 3, ErrMalformed},
		{"99999999999999999999", 20, ErrOutOfRange},
		{"1", 0, ErrOutOfRange},
	}
	for _, c := range cases {
		if _, err := ParseUint(c.s, c.width); !errors.Is(err, c.want) {
			t.Errorf("ParseUint(%q, %d) = %v, want %v", c.s, c.width, err, c.want)
		}
	}
}

func TestPadUintProperties(t *testing.T) {
	rng := newRand(6)
	for i := 0; i < 20000; i++ {
		width := 1 + rng.IntN(MaxPadWidth)
		a, b := randUint(rng), randUint(rng)
		ea, errA := PadUint(a, width)
		eb, errB := PadUint(b, width)
		if fits := digitsOf(a) <= width; fits != (errA == nil) {
			t.Fatalf("PadUint(%d, %d): err %v, fits %v", a, width, errA, fits)
		}
		if errA != nil || errB != nil {
			continue
		}
		if back, err := ParseUint(ea, width); err != nil || back != a {
			t.Fatalf("ParseUint(PadUint(%d)) = %d, %v", a, back, err)
		}
		if Compare(ea, eb) != cmpOrdered(a, b) {
			t.Fatalf("PadUint order: %d vs %d gives %q vs %q", a, b, ea, eb)
		}
		if ValidKey(ea) != nil || len(ea) != width {
			t.Fatalf("PadUint(%d, %d) = %q", a, width, ea)
		}
	}
}

// digitsOf counts decimal digits by repeated division (independent of strconv).
func digitsOf(n uint64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// randUint favours small numbers and edges so all widths get exercised.
func randUint(rng *rand.Rand) uint64 {
	switch rng.IntN(4) {
	case 0:
		return []uint64{0, 1, 9, 10, 99, 100, math.MaxUint64, math.MaxUint64 - 1}[rng.IntN(8)]
	case 1:
		return rng.Uint64()
	default:
		return rng.Uint64() >> rng.IntN(64)
	}
}

func cmpOrdered[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestEncodeInt64ByHand(t *testing.T) {
	cases := map[int64]string{
		0:             "00000000000000000000",
		42:            "00000000000000000042",
		-1:            "-9223372036854775807",
		math.MaxInt64: "09223372036854775807",
		math.MinInt64: "-0000000000000000000",
		-42:           "-9223372036854775766",
	}
	for n, want := range cases {
		if got := EncodeInt64(n); got != want {
			t.Errorf("EncodeInt64(%d) = %q, want %q", n, got, want)
		}
	}
}

func randInt64(rng *rand.Rand) int64 {
	switch rng.IntN(4) {
	case 0:
		return []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, math.MaxInt64 - 1}[rng.IntN(7)]
	case 1:
		return int64(rng.Uint64())
	default:
		return int64(rng.Uint64()) >> rng.IntN(64)
	}
}

func TestEncodeInt64Properties(t *testing.T) {
	rng := newRand(7)
	for i := 0; i < 50000; i++ {
		a, b := randInt64(rng), randInt64(rng)
		ea, eb := EncodeInt64(a), EncodeInt64(b)
		if back, err := DecodeInt64(ea); err != nil || back != a {
			t.Fatalf("DecodeInt64(EncodeInt64(%d)) = %d, %v", a, back, err)
		}
		if Compare(ea, eb) != cmpOrdered(a, b) {
			t.Fatalf("order: %d vs %d encoded %q vs %q", a, b, ea, eb)
		}
		if err := ValidKey(ea); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDecodeInt64Rejects(t *testing.T) {
	for _, s := range []string{
		"",
		"0000000000000000042",   // 19 characters
		"000000000000000000042", // 21
		"+0000000000000000042",
		"-922337203685477580a",
		"09223372036854775808", // above MaxInt64
		"-9223372036854775808", // would be 0 again
		"-99999999999999999999"[:20],
		"0000000000000000004 ",
	} {
		if n, err := DecodeInt64(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeInt64(%q) = %d, %v; want ErrMalformed", s, n, err)
		}
	}
}

// floatTotalOrder is IEEE 754 totalOrder written from its definition with
// float comparisons, independent of the bit trick in EncodeFloat64.
func floatTotalOrder(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an || bn:
		rank := func(f float64, nan bool) int {
			switch {
			case nan && math.Signbit(f):
				return -1
			case nan:
				return 1
			}
			return 0
		}
		ra, rb := rank(a, an), rank(b, bn)
		if ra != rb {
			return sign(ra - rb)
		}
		// Both NaN of the same sign: larger payload is further from zero.
		pa, pb := math.Float64bits(a)&^(1<<63), math.Float64bits(b)&^(1<<63)
		c := cmpOrdered(pa, pb)
		if ra < 0 {
			c = -c
		}
		return c
	case a < b:
		return -1
	case a > b:
		return 1
	case a == 0 && math.Signbit(a) != math.Signbit(b):
		if math.Signbit(a) {
			return -1
		}
		return 1
	}
	return 0
}

func randFloat(rng *rand.Rand) float64 {
	switch rng.IntN(5) {
	case 0:
		return []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(),
			math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64}[rng.IntN(12)]
	case 1:
		return math.Float64frombits(rng.Uint64()) // any bits, NaN payloads included
	case 2:
		return float64(rng.IntN(2000) - 1000)
	default:
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
	}
}

func TestEncodeFloat64Properties(t *testing.T) {
	rng := newRand(8)
	for i := 0; i < 50000; i++ {
		a, b := randFloat(rng), randFloat(rng)
		ea, eb := EncodeFloat64(a), EncodeFloat64(b)
		back, err := DecodeFloat64(ea)
		if err != nil || math.Float64bits(back) != math.Float64bits(a) {
			t.Fatalf("DecodeFloat64(EncodeFloat64(%v)) = %v, %v", a, back, err)
		}
		if Compare(ea, eb) != floatTotalOrder(a, b) {
			t.Fatalf("order: %v vs %v encoded %q vs %q", a, b, ea, eb)
		}
		if err := ValidKey(ea); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEncodeFloat64Edges(t *testing.T) {
	ordered := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64,
		math.Copysign(0, -1), 0, math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for i := 1; i < len(ordered); i++ {
		if !(EncodeFloat64(ordered[i-1]) < EncodeFloat64(ordered[i])) {
			t.Errorf("EncodeFloat64(%v) should sort before EncodeFloat64(%v)", ordered[i-1], ordered[i])
		}
	}
	if EncodeFloat64(math.NaN()) <= EncodeFloat64(math.Inf(1)) {
		t.Errorf("+NaN should sort after +Inf")
	}
	if EncodeFloat64(-math.NaN()) >= EncodeFloat64(math.Inf(-1)) {
		t.Errorf("-NaN should sort before -Inf")
	}
}

func TestDecodeFloat64Rejects(t *testing.T) {
	for _, s := range []string{"", "8000000000000000 ", "800000000000000", "8000000000000g00", "800000000000000a", "x"} {
		if f, err := DecodeFloat64(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeFloat64(%q) = %v, %v; want ErrMalformed", s, f, err)
		}
	}
}
