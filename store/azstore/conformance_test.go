package azstore

import (
	"os"
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
		// Azurite replaces a blob of the other type where Azure answers
		// InvalidBlobType (docs/queues-blobs.md).
		ServerReplacesBlobType: true,
		// 50,000 appends take about 95 s on Azurite: set
		// TABLEKIT_APPEND_LIMIT=1 to prove the block count limit there.
		SkipBlockCountLimit: os.Getenv("TABLEKIT_APPEND_LIMIT") == "",
		// The fault tests go through a fault-injecting proxy on loopback.
		Faults:    proxiedStore,
		FaultRuns: 40,
	})
}
