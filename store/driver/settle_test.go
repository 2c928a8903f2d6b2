package driver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestSettle: a lost insert read back as there is done with the ETag read
// back; read back as absent it is not applied (ErrTransient, no longer
// unknown); a row that fits neither leaves it unknown with the reason.
func TestSettle(t *testing.T) {
	lost := &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "lost"}
	ins := []store.Action{{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1)}}}}
	ctx := context.Background()

	there := rows{m: map[string]store.Entity{"p/r": {PartitionKey: "p", RowKey: "r", ETag: `W/"x"`, Properties: map[string]any{"A": int32(1)}}}}
	res, err := Settle(ctx, there, ins, lost)
	if err != nil || len(res) != 1 || res[0].ETag != `W/"x"` {
		t.Errorf("applied: %v, %v", res, err)
	}

	_, err = Settle(ctx, rows{}, ins, lost)
	if !errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "not applied") {
		t.Errorf("not applied: %v", err)
	}

	other := rows{m: map[string]store.Entity{"p/r": {PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(2)}}}}
	_, err = Settle(ctx, other, ins, lost)
	if !errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "could not tell") {
		t.Errorf("unresolved: %v", err)
	}
	if lost.Message != "lost" || !lost.Unknown {
		t.Errorf("Settle changed its cause: %+v", lost)
	}
}

func TestAmbiguousStatus(t *testing.T) {
	for status, want := range map[int]bool{500: true, 502: true, 504: true, 503: false, 409: false, 200: false} {
		if AmbiguousStatus(status) != want {
			t.Errorf("AmbiguousStatus(%d) = %v", status, !want)
		}
	}
}
