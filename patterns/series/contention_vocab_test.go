package series_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/patterns/series"
)

// TestContentionIsARace: a write that lost to other writers on every
// attempt is a race to retry in the patterns' vocabulary
// (partition.ErrConflict), never a changed row or a duplicate.
func TestContentionIsARace(t *testing.T) {
	err := fmt.Errorf("a write: %w", series.ErrContention)
	if !errors.Is(err, partition.ErrConflict) {
		t.Error("series.ErrContention does not match partition.ErrConflict")
	}
	for _, other := range []error{partition.ErrChanged, partition.ErrDuplicate} {
		if errors.Is(err, other) {
			t.Errorf("series.ErrContention matches %v", other)
		}
	}
}
