package large_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/patterns/large"
)

// TestContentionIsARace: a write that lost to other writers on every
// attempt is a race to retry in the patterns' vocabulary
// (partition.ErrConflict), never a changed row or a duplicate.
func TestContentionIsARace(t *testing.T) {
	err := fmt.Errorf("a write: %w", large.ErrContention)
	if !errors.Is(err, partition.ErrConflict) {
		t.Error("large.ErrContention does not match partition.ErrConflict")
	}
	for _, other := range []error{partition.ErrChanged, partition.ErrDuplicate} {
		if errors.Is(err, other) {
			t.Errorf("large.ErrContention matches %v", other)
		}
	}
}
