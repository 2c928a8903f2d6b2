package encryption

import (
	"context"
	"testing"
)

// BenchmarkSealEntity measures the fixed cost of encrypting one entity
// with a LocalKey, without a store: a fresh content key, its wrap, the
// AES-GCM setup, the TkEnc metadata and three seals of short strings.
func BenchmarkSealEntity(b *testing.B) {
	c, err := NewCodec(Config{Key: testKey(b, "k", 1), Properties: []string{"Email", "Name", "Phone"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.newSealer(ctx, "p", "000000001")
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range c.props {
			if _, err := s.seal("Sealed", "p", "000000001", n, "ada@example.com"); err != nil {
				b.Fatal(err)
			}
		}
	}
}
