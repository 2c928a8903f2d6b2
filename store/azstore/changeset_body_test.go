package azstore

import (
	"net/url"
	"strings"
	"testing"
)

// appendKeySegment writes a key exactly as url.PathEscape writes it after
// doubling its quotes (what aztables' own transactions sent), for every
// byte and for keys with quotes, spaces and non-ASCII characters.
func TestKeySegmentIsPathEscape(t *testing.T) {
	keys := []string{"", "plain", "é x/'", "a''b", "100%", "(x),y;z?w#v", "日本語"}
	for c := 0; c < 256; c++ {
		keys = append(keys, string([]byte{byte(c)}))
	}
	for _, k := range keys {
		want := url.PathEscape(strings.ReplaceAll(k, "'", "''"))
		if got := string(appendKeySegment(nil, k)); got != want {
			t.Errorf("key %q: %q, want %q", k, got, want)
		}
	}
}
