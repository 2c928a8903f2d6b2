package azblobs

import "testing"

// TestListedETagKeepsQuotedOnes: an ETag that already has its quotes (or
// is * or empty) is left as it is; a bare one gets the quotes.
func TestListedETagKeepsQuotedOnes(t *testing.T) {
	for _, v := range []string{`"0x8DA70795BA89795"`, `W/"1"`, "*", ""} {
		if got := listedETag(v); string(got) != v {
			t.Errorf("listedETag(%q) = %q, want it unchanged", v, got)
		}
	}
	if got := listedETag("0x8DA70795BA89795"); string(got) != `"0x8DA70795BA89795"` {
		t.Errorf("listedETag of a bare value = %q, want it quoted", got)
	}
}
