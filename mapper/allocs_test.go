package mapper

import (
	"testing"
)

// The allocation budgets of the issue, checked as counts (not timings):
// Encode at most 2 allocations beyond building the same entity by hand,
// Decode at most 2, AppendJSON none into a buffer with room, DecodeJSON
// only the strings and the []byte it must create.
func TestAllocationBudgets(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	v := benchValue()
	e := benchEntity(&v)
	data := benchWire(t)
	buf := make([]byte, 0, 1024)
	var out benchEmployee
	byHand := testing.AllocsPerRun(100, func() { entitySink = benchEntity(&v) })
	checks := []struct {
		name string
		max  float64
		fn   func() error
	}{
		{"Encode", byHand + 2, func() (err error) { entitySink, err = Encode(&v); return }},
		{"Decode", 2, func() error { return Decode(e, &out) }},
		{"AppendJSON", 0, func() (err error) { _, err = AppendJSON(buf[:0], &v); return }},
		// Dept, ID, Name and Email strings, and the Photo bytes.
		{"DecodeJSON", 5, func() error { return DecodeJSON(data, &out) }},
	}
	for _, c := range checks {
		var err error
		got := testing.AllocsPerRun(100, func() {
			if e := c.fn(); e != nil {
				err = e
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got > c.max {
			t.Errorf("%s: %.0f allocations, budget %.0f (building the entity by hand: %.0f)", c.name, got, c.max, byHand)
		}
	}
}
