package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

func TestValidateGet(t *testing.T) {
	sel, err := ValidateGet("p", "r", &store.GetOptions{Select: []string{"A", "B"}})
	if err != nil || len(sel) != 2 {
		t.Fatalf("ValidateGet with a valid projection: %v %v", sel, err)
	}
	if sel, err := ValidateGet("p", "r", nil); err != nil || sel != nil {
		t.Fatalf("ValidateGet without options: %v %v", sel, err)
	}
	if _, err = ValidateGet("p/", "r", nil); store.Code(err) != store.CodeOutOfRangeInput || store.Status(err) != 400 {
		t.Errorf("bad key: %v", err)
	}
	if _, err = ValidateGet("p", "r", &store.GetOptions{Select: []string{"1A"}}); store.Code(err) != store.CodePropertyNameInvalid {
		t.Errorf("bad select: %v", err)
	}
}

func TestValidateFilterLength(t *testing.T) {
	// A space is one byte, any byte outside the unreserved set three.
	if n := FilterBytes("a b'é"); n != 1+1+1+3+6 {
		t.Errorf("FilterBytes = %d, want 12", n)
	}
	at := strings.Repeat("a", store.MaxFilterBytes)
	if err := ValidateFilterLength(at); err != nil {
		t.Errorf("a filter of the limit: %v", err)
	}
	err := ValidateFilterLength(at[1:] + "'")
	if store.Code(err) != store.CodeInvalidInput || store.SourceOf(err) != store.SourceClient || !strings.Contains(err.Error(), "12290 bytes") {
		t.Errorf("a filter 2 bytes over: %v", err)
	}
}

func TestWithoutIgnored(t *testing.T) {
	e := store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1), "Timestamp": time.Now()}}
	plain := store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1)}}
	if got := WithoutIgnored(e.Properties); len(got) != 1 || got["A"] != int32(1) || len(e.Properties) != 2 {
		t.Errorf("WithoutIgnored = %v (input now %v)", got, e.Properties)
	}
	acts := []store.Action{{Kind: store.ActionInsert, Entity: plain}, {Kind: store.ActionInsert, Entity: e}}
	out := WithoutIgnoredActions(acts)
	if &out[0] == &acts[0] || len(out[1].Entity.Properties) != 1 || len(acts[1].Entity.Properties) != 2 {
		t.Errorf("WithoutIgnoredActions: %v (input %v)", out, acts)
	}
	if got := WithoutIgnoredActions(acts[:1]); &got[0] != &acts[0] {
		t.Error("WithoutIgnoredActions copied actions without a Timestamp")
	}
}

func TestAccessPolicies(t *testing.T) {
	if p, err := NormalizeTablePermission("dar"); p != "rad" || err != nil {
		t.Errorf("NormalizeTablePermission(dar) = %q, %v; want rad and a nil error", p, err)
	}
	if _, err := NormalizeTablePermission("rx"); store.Code(err) != store.CodeInvalidInput || !strings.Contains(err.Error(), "'x' at offset 1") {
		t.Errorf("an unknown letter: %v", err)
	}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	out, err := ValidateAccessPolicies([]store.SignedIdentifier{{ID: "a", Policy: store.AccessPolicy{Start: start, Expiry: start.Add(time.Hour), Permission: "ur"}}})
	if err != nil || out[0].Policy.Permission != "ru" {
		t.Errorf("a valid policy: %+v, %v", out, err)
	}
	for _, bad := range [][]store.SignedIdentifier{
		{{ID: "a"}, {ID: "a"}},
		{{ID: ""}},
		{{ID: strings.Repeat("i", store.MaxAccessPolicyIDLength+1)}},
		{{ID: "a", Policy: store.AccessPolicy{Permission: "q"}}},
		{{ID: "a", Policy: store.AccessPolicy{Start: start, Expiry: start}}},
		make([]store.SignedIdentifier, store.MaxAccessPolicies+1),
	} {
		if _, err := ValidateAccessPolicies(bad); store.Code(err) != store.CodeInvalidInput {
			t.Errorf("%+v: %v, want InvalidInput", bad, err)
		}
	}
}
