package storetest_test

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// A backend proves itself with one test function that hands the suite a
// way to get a store. This is memstore's.
func ExampleRun() {
	conformance := func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
	}
	_ = conformance // in a _test.go file: func TestConformance(t *testing.T) { ... }
}

// RunWith takes a Harness. NewDeleting gives a store on which a deleted
// table's name stays unusable for a while, so the TableBeingDeleted rule
// is checked strictly.
func ExampleRunWith() {
	conformance := func(t *testing.T) {
		storetest.RunWith(t, storetest.Harness{
			New: func(t *testing.T) store.Store { return memstore.New() },
			NewDeleting: func(t *testing.T) store.Store {
				return memstore.New(memstore.WithTableDeleteDelay(time.Minute))
			},
		})
	}
	_ = conformance
}
