package store

import (
	"testing"
	"time"
)

// tsSource writes the given names in order, each an Int32 (Timestamp a
// DateTime).
type tsSource []string

func (s tsSource) WriteProperties(w PropertyWriter) error {
	for _, name := range s {
		n, err := NewPropertyName(name)
		if err != nil {
			return err
		}
		if name == TimestampProperty {
			err = w.Time(n, time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC))
		} else {
			err = w.Int32(n, 1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// A property named Timestamp is accepted and dropped on both lanes: it
// reaches no writer, counts toward no limit, and a read-back of a write
// that carried it judges the write by its other properties.
func TestTimestampPropertyIsAcceptedAndDropped(t *testing.T) {
	e := Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1), "Timestamp": time.Now()}}
	if err := ValidateEntity(&e); err != nil {
		t.Fatalf("ValidateEntity: %v", err)
	}
	plain := Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1)}}
	if EntitySize(&e) != EntitySize(&plain) || EstimateWireSize(&e) != EstimateWireSize(&plain) {
		t.Errorf("Timestamp counted in the size: %d/%d, want %d/%d", EntitySize(&e), EstimateWireSize(&e), EntitySize(&plain), EstimateWireSize(&plain))
	}
	full := Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Timestamp": time.Now()}}
	for i := range MaxCustomProperties {
		full.Properties[string(rune('a'+i%26))+string(rune('a'+i/26))] = true
	}
	if err := ValidateEntity(&full); err != nil {
		t.Errorf("252 properties and a Timestamp: %v", err)
	}

	// The typed lane: dropped, still held to the name order.
	props, err := SourceProperties("p", "r", tsSource{"A", "Timestamp", "Z"}, false)
	if err != nil || len(props) != 2 || props["A"] != int32(1) || props["Z"] != int32(1) {
		t.Errorf("SourceProperties = %v, %v: want A and Z only", props, err)
	}
	if _, err := WriteSource("p", "r", tsSource{"Timestamp", "A"}, false, nil); Code(err) != CodeInvalidInput {
		t.Errorf("Timestamp before A: %v, want the order refused", err)
	}
	if _, err := WriteSource("p", "r", tsSource{"A", "Timestamp", "B"}, false, nil); Code(err) != CodeInvalidInput {
		t.Errorf("B after Timestamp: %v, want the order refused", err)
	}
	if err := ValidatePropertyName("Timestamp"); Code(err) != CodePropertyNameInvalid {
		t.Errorf("ValidatePropertyName(Timestamp) = %v: nothing can be stored under it", err)
	}

	// Resolve: the stored row lacks Timestamp, and that is "applied".
	stored := map[string]any{"A": int32(1)}
	if !sameProperties(stored, e.Properties, true) {
		t.Error("a row holding what an insert with a Timestamp wrote does not count as applied")
	}
}
