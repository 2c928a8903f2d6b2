package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestTransactionSizeCountsEscapes proves the 4 MiB check measures text
// outside ASCII as the \uXXXX escapes azstore sends it as: the same
// number of characters passes in ASCII and fails as 'é' or as a
// supplementary character.
func TestTransactionSizeCountsEscapes(t *testing.T) {
	batch := func(s string) []Action {
		acts := make([]Action, MaxBatchActions)
		for i := range acts {
			acts[i] = Action{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprint(i),
				Properties: map[string]any{"S": s}}}
		}
		return acts
	}
	for _, c := range []struct {
		text string
		code string
	}{
		{strings.Repeat("e", 17500), ""},
		{strings.Repeat("é", 17500), CodeRequestBodyTooLarge},
		{strings.Repeat("é", 6400), ""},
		{strings.Repeat("中", 8000), CodeRequestBodyTooLarge},
		{strings.Repeat("\U0001F600", 3200), ""},
		{strings.Repeat("\U0001F600", 4000), CodeRequestBodyTooLarge},
	} {
		err := ValidateTransaction(batch(c.text))
		if got := Code(err); got != c.code {
			t.Errorf("100 entities of %d bytes of %q...: got %v, want code %q", len(c.text), c.text[:4], err, c.code)
		}
	}
}
