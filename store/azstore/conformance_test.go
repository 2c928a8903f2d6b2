package azstore

import (
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestConformance runs the whole conformance suite against Azurite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return newAzuriteStore(t) })
}
