package keys

import (
	"testing"
	"time"
)

func FuzzIDTime(f *testing.F) {
	f.Add("01M81EKCW00000000000000001")
	f.Add("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
	f.Add("")
	f.Fuzz(func(t *testing.T, id string) {
		tm, err := IDTime(id)
		if err != nil {
			return
		}
		// Any accepted id re-encodes its time in its first ten characters.
		g := &IDGenerator{lastMS: uint64(tm.UnixMilli())}
		if got := g.encode()[:10]; got != id[:10] {
			t.Fatalf("IDTime(%q) = %s, which encodes as %q", id, tm.Format(time.RFC3339Nano), got)
		}
	})
}
