package memstore_test

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestConformance runs the whole conformance suite against memstore.
func TestConformance(t *testing.T) {
	storetest.RunWith(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return memstore.New() },
		NewDeleting: func(t *testing.T) store.Store {
			return memstore.New(memstore.WithTableDeleteDelay(time.Hour))
		},
	})
}

// TestConformanceShared runs the suite with one store shared by every
// subtest, as a server is shared, and with short and empty pages, as
// Azure returns at partition-server boundaries.
func TestConformanceShared(t *testing.T) {
	shared := memstore.New(memstore.WithShortPages(1))
	storetest.Run(t, func(t *testing.T) store.Store { return shared })
}
