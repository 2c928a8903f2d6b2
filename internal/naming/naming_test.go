package naming

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, s := range []string{"a", "email", "Last_Name2", "_", strings.Repeat("x", MaxLen)} {
		if !Valid(s) {
			t.Errorf("Valid(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"", strings.Repeat("x", MaxLen+1), "last-name", "a b", "a/b", "é", "name\x00"} {
		if Valid(s) {
			t.Errorf("Valid(%q) = true, want false", s)
		}
	}
}

func TestCut(t *testing.T) {
	short := strings.Repeat("v", 64)
	if got := Cut(short); got != short {
		t.Errorf("Cut of 64 bytes = %q, want it unchanged", got)
	}
	long := strings.Repeat("v", 64) + "tail"
	if got := Cut(long); got != short+"..." {
		t.Errorf("Cut of 68 bytes = %q, want the first 64 and ...", got)
	}
}
