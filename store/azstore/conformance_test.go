package azstore

import (
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// azuriteKeyUnits is the longest key Azurite stores (its
// DEFAULT_KEY_MAX_LENGTH); Azure stores 1,024 UTF-16 units.
const azuriteKeyUnits = 512

// TestConformance runs the whole conformance suite against Azurite.
func TestConformance(t *testing.T) {
	storetest.RunWith(t, storetest.Harness{
		New:            func(t *testing.T) store.Store { return newAzuriteStore(t) },
		ServerKeyUnits: azuriteKeyUnits,
		// The fault tests go through a fault-injecting proxy on loopback.
		Faults:    proxiedStore,
		FaultRuns: 40,
	})
}
