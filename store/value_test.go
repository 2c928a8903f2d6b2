package store

import (
	"math"
	"testing"
)

func TestNormalizeDouble(t *testing.T) {
	oddNaN := math.Float64frombits(0x7ff8dead0000beef)
	cases := []struct {
		in, want float64
	}{
		{math.Copysign(0, -1), 0},
		{0, 0},
		{oddNaN, math.NaN()},
		{-math.NaN(), math.NaN()},
		{math.Inf(-1), math.Inf(-1)},
		{-1.5, -1.5},
		{math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64},
		{-math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64},
	}
	for _, c := range cases {
		got := NormalizeDouble(c.in)
		if math.Float64bits(got) != math.Float64bits(c.want) {
			t.Errorf("NormalizeDouble(%v, bits %x) = bits %x, want %x",
				c.in, math.Float64bits(c.in), math.Float64bits(got), math.Float64bits(c.want))
		}
	}
}
