package indexentity

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// randomKey makes a legal key of 1 to max characters, some outside ASCII.
func randomKey(r *rand.Rand, max int) string {
	n := 1 + r.IntN(max)
	var b strings.Builder
	for units := 0; units < n; {
		switch c := r.IntN(10); {
		case c == 0 && units+1 <= n:
			b.WriteRune('é')
			units++
		case c == 1 && units+1 <= n:
			b.WriteRune('日')
			units++
		case c == 2 && units+2 <= n:
			b.WriteRune('😀') // two UTF-16 units
			units += 2
		default:
			b.WriteByte(byte('a' + r.IntN(26)))
			units++
		}
	}
	return b.String()
}

// TestPackKeepsEveryIDWithinTheLimits: random lists (short and long keys,
// non-ASCII, with and without PartitionKeys) packed with random layouts
// fit the service's rules in every index entity (252 properties, 64 KiB a
// string, 1 MiB an entity, by the store's own checks), stay within the
// layout, read back to exactly the ids packed, and split at hash bounds
// that partition the segment's range.
func TestPackKeepsEveryIDWithinTheLimits(t *testing.T) {
	runs := 60
	if testing.Short() || raceDetector {
		runs = 15
	}
	r := rand.New(rand.NewPCG(7, 11))
	pieces, multi, byProps := 0, 0, 0
	for run := range runs {
		withPK := run%2 == 0
		l := Layout{ChunkBytes: minChunkBytes + r.IntN(store.MaxEntitySize-minChunkBytes+1)}
		switch r.IntN(3) {
		case 0:
			l.PropertyUnits = 1 + r.IntN(64)
		case 1:
			l.PropertyUnits = 1 + r.IntN(store.MaxStringUnits)
		}
		l, err := l.resolve()
		if err != nil {
			t.Fatal(err)
		}
		maxKey := []int{12, 200, 1024}[r.IntN(3)]
		n := r.IntN(1500)
		if r.IntN(4) == 0 {
			n = r.IntN(600) // long keys: up to about 1 MiB
			maxKey = 1024
		}
		pk := "Sales"
		seen := map[Key]bool{}
		var entries []entry
		for len(entries) < n {
			k := Key{PartitionKey: pk, RowKey: randomKey(r, maxKey)}
			if withPK {
				k.PartitionKey = randomKey(r, maxKey)
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			entries = append(entries, entry{Key: k, version: int64(r.IntN(1 << 40))})
		}
		slices.SortFunc(entries, entry.less)
		if !withPK {
			for i := range entries {
				entries[i].version = 0
			}
		}
		if _, size, props := buildEntity(pk, "p !"+boundKey(maxBound), entries, withPK, l); props > maxLineProps && size <= l.ChunkBytes {
			byProps++ // only the property count forces a split
		}
		got, err := pack(pk, func(b uint64) string { return "p !" + boundKey(b) }, maxBound, entries, withPK, l)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		pieces += len(got)
		if len(got) > 1 {
			multi++
		}
		var back []entry
		lower := uint64(0)
		for i, p := range got {
			e := p.entity
			if err := store.ValidateEntity(&e); err != nil {
				t.Fatalf("run %d piece %d: %v", run, i, err)
			}
			if sz := store.EntitySize(&e); sz > l.ChunkBytes {
				t.Fatalf("run %d piece %d: %d bytes, over the layout's %d", run, i, sz, l.ChunkBytes)
			}
			dec, err := decodeEntity(e, withPK)
			if err != nil {
				t.Fatalf("run %d piece %d: %v", run, i, err)
			}
			if !slices.Equal(dec, p.entries) {
				t.Fatalf("run %d piece %d: decodes to %d entries, packed %d", run, i, len(dec), len(p.entries))
			}
			for _, en := range dec {
				if h := hashOf(en.Key); h > p.bound || (i > 0 && h <= lower) {
					t.Fatalf("run %d piece %d: id hash %016X outside (%016X, %016X]", run, i, h, lower, p.bound)
				}
			}
			if i == len(got)-1 && p.bound != maxBound {
				t.Fatalf("run %d: the last piece has bound %016X, not the segment's", run, p.bound)
			}
			lower = p.bound
			back = append(back, dec...)
		}
		slices.SortFunc(back, entry.less)
		if !slices.Equal(back, entries) {
			t.Fatalf("run %d: %d ids packed, %d read back", run, len(entries), len(back))
		}
	}
	t.Logf("runs %d: %d index entities, %d lists split, %d lists split by the property count alone", runs, pieces, multi, byProps)
	if multi == 0 || byProps == 0 {
		t.Fatal("no run split a list, or none filled the property count: the test proves nothing")
	}
}

// TestTextRoundTrip: a blob's list reads back as written, versions and
// keys with tabs' neighbours included.
func TestTextRoundTrip(t *testing.T) {
	in := []entry{
		{Key: Key{PartitionKey: "a b", RowKey: "c\"d"}, version: 1},
		{Key: Key{PartitionKey: "Sales", RowKey: "emp_1"}, version: 1 << 50},
		{Key: Key{PartitionKey: "日本", RowKey: ""}, version: 0},
	}
	slices.SortFunc(in, entry.less)
	out, err := decodeText(encodeText(in))
	if err != nil || !slices.Equal(in, out) {
		t.Fatalf("round trip: %v, %v", out, err)
	}
	if out, err := decodeText(nil); err != nil || out != nil {
		t.Fatalf("empty blob: %v, %v", out, err)
	}
	for _, bad := range []string{"x\tSales\temp\n", "1\tSales\n", "1\ta\tb\tc\n", "-1\ta\tb\n"} {
		if _, err := decodeText([]byte(bad)); err == nil {
			t.Errorf("decodeText(%q) accepted a line this package never writes", bad)
		}
	}
}
