package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `3 current employees in Sales
000123 left: deleted from Current%[1]s at version 4, archiving queued
000125 left: deleted from Current%[1]s at version 5, archiving queued
worker ran 2 operations
  000123: archived as Don Hall (version 4)
  000124: current
  000125: archived as Bo Lin (version 5)
poison queue: 0 messages
`

// TestEventual runs the walkthrough on memstore and on Azurite, and the
// poison tools on the empty queue.
func TestEventual(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		suffix := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
		var out bytes.Buffer
		if err := run(t.Context(), &out, b.Store, names(suffix)); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != fmt.Sprintf(want, suffix) {
			t.Fatalf("output:\n%s\nwant:\n%s", got, fmt.Sprintf(want, suffix))
		}
	})
}
