package memstore_test

import (
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// faultHarness makes a memstore whose operations meet the suite's faults.
func faultHarness(t *testing.T, sched storetest.Schedule) store.Store {
	return memstore.New(memstore.WithFaults(func(op memstore.Operation, _ string) error {
		write := op != memstore.OpGet && op != memstore.OpQuery && op != memstore.OpListTables && op != memstore.OpGetBlob
		switch sched(storetest.Request{Write: write}) {
		case storetest.FaultBusy:
			return memstore.ServerBusy()
		case storetest.FaultInternalBefore:
			return memstore.InternalError()
		case storetest.FaultLostBefore:
			return memstore.ResponseLost()
		case storetest.FaultInternalAfter:
			return memstore.AfterApply(memstore.InternalError())
		case storetest.FaultLostAfter:
			return memstore.AfterApply(memstore.ResponseLost())
		}
		return nil
	}))
}
