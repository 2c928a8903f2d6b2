package keys

import (
	"bytes"
	"testing"
	"time"
)

var (
	sinkString string
	sinkParts  []string
	sinkInt    int64
	sinkTime   time.Time
)

func BenchmarkInvertedTicks(b *testing.B) {
	t := time.Date(2026, 11, 22, 11, 0, 0, 123456700, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		sinkString, _ = InvertedTicks(t)
	}
}

func BenchmarkParseInvertedTicks(b *testing.B) {
	s, _ := InvertedTicks(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	b.ReportAllocs()
	for b.Loop() {
		sinkTime, _ = ParseInvertedTicks(s)
	}
}

func BenchmarkJoin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkString, _ = Join("Sales", "000123", "2012")
	}
}

func BenchmarkSplit(b *testing.B) {
	k, _ := Join("Sales", "000123", "2012")
	b.ReportAllocs()
	for b.Loop() {
		sinkParts, _ = Split(k)
	}
}

func BenchmarkEscape(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkString, _ = Escape("docs/readme #2.md")
	}
}

func BenchmarkEncodeInt64(b *testing.B) {
	b.ReportAllocs()
	n := int64(-1234567890123)
	for b.Loop() {
		sinkString = EncodeInt64(n)
	}
}

func BenchmarkDecodeInt64(b *testing.B) {
	s := EncodeInt64(-1234567890123)
	b.ReportAllocs()
	for b.Loop() {
		sinkInt, _ = DecodeInt64(s)
	}
}

func BenchmarkCompare(b *testing.B) {
	x, y := "empid_000123 !2012", "empid_000123 !2013"
	b.ReportAllocs()
	for b.Loop() {
		sinkInt = int64(Compare(x, y))
	}
}

func BenchmarkSpread(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkString, _ = Spread("device-000123", 16)
	}
}

func BenchmarkIDGeneratorNew(b *testing.B) {
	t := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	g := NewIDGenerator(func() time.Time { return t }, bytes.NewReader(make([]byte, 10)))
	b.ReportAllocs()
	for b.Loop() {
		sinkString, _ = g.New() // same millisecond: increments, no reads after the first
	}
}
