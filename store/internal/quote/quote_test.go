package quote

import (
	"strings"
	"testing"
)

func TestTrunc(t *testing.T) {
	short := strings.Repeat("k", limit)
	if got := Trunc(short); got != `"`+short+`"` {
		t.Errorf("Trunc of %d bytes = %s, want it quoted whole", limit, got)
	}
	// A 3-byte character straddles byte 64: the cut falls before it.
	long := strings.Repeat("k", limit-1) + "€tail"
	want := `"` + strings.Repeat("k", limit-1) + `"... (70 bytes)`
	if got := Trunc(long); got != want {
		t.Errorf("Trunc = %s, want %s", got, want)
	}
}
