package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `8 writers added 200 messages at once: 200 counted, 200 writes applied, none lost
the day in one read of 1 entity: [0 0 0 0 0 0 0 0 0 34 34 33 33 33 33 0 0 0 0 0 0 0 0 0]
a year of daily values: 365 slots in 2 entities, read back in order: first week [0 10 20 30 40 50 60]
24 frames of 60,000 bytes: 2 entities of at most 1 MiB
a 70,000-byte value is refused (PropertyValueTooLarge), the series unchanged at version 1
`

func TestSeriesOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(5)), "MessageCounts", wantOutput, run)
}

func TestSeriesOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "MessageCounts")
	exampletest.Run(t, st, table, wantOutput, run)
}
