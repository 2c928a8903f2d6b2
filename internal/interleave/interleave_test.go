package interleave

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// spin burns CPU for about d.
func spin(d time.Duration) {
	t0 := time.Now()
	for time.Since(t0) < d {
	}
}

// TestMeasureOrdersCasesByCost: a case that does three times the work of
// the baseline reads as about 3x in wall and CPU time, and one that sleeps
// instead of working costs wall time but little CPU. Bounds are loose: the
// test checks the harness's arithmetic, not the machine's speed.
func TestMeasureOrdersCasesByCost(t *testing.T) {
	base := Case{Name: "base", Op: func(int) error { spin(20 * time.Microsecond); return nil }}
	heavy := Case{Name: "heavy", Op: func(int) error { spin(60 * time.Microsecond); return nil }}
	sleepy := Case{Name: "sleepy", Op: func(int) error { time.Sleep(200 * time.Microsecond); return nil }}
	rep, err := Measure(Config{Rounds: 5, Slice: 10 * time.Millisecond}, base, heavy, sleepy)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := rep.Row("heavy")
	if h.WallRatio.Median < 1.8 || h.WallRatio.Median > 5 {
		t.Errorf("heavy wall ratio %.2f, want about 3", h.WallRatio.Median)
	}
	if h.CPURatio.Median < 1.5 {
		t.Errorf("heavy CPU ratio %.2f, want about 3", h.CPURatio.Median)
	}
	s, _ := rep.Row("sleepy")
	if s.WallRatio.Median < 3 {
		t.Errorf("sleepy wall ratio %.2f, want well above 1", s.WallRatio.Median)
	}
	if s.CPU.Median > s.Wall.Median/2 {
		t.Errorf("sleepy CPU %.0f ns/op of %.0f wall: sleeping should cost little CPU", s.CPU.Median, s.Wall.Median)
	}
	if len(rep.Rows) != 3 || rep.Rows[0].Name != "base" || rep.Rows[0].WallRatio.Median != 1 {
		t.Errorf("rows %+v: want the baseline first with ratio 1", rep.Rows)
	}
	table := rep.Table()
	for _, want := range []string{"| base |", "| heavy |", "| sleepy |", "5 interleaved rounds"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	var units []string
	rep.Metrics(func(_ float64, unit string) { units = append(units, unit) })
	if len(units) != 3*2+2*2 {
		t.Errorf("metrics %v", units)
	}
}

// TestMeasureCountsOpsPerCall: Ops divides the cost of a call.
func TestMeasureCountsOpsPerCall(t *testing.T) {
	one := Case{Name: "one", Op: func(int) error { spin(10 * time.Microsecond); return nil }}
	batch := Case{Name: "batch", Ops: 10, Op: func(int) error { spin(100 * time.Microsecond); return nil }}
	rep, err := Measure(Config{Rounds: 3, Slice: 5 * time.Millisecond}, one, batch)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rep.Row("batch")
	if b.WallRatio.Median < 0.5 || b.WallRatio.Median > 2 {
		t.Errorf("batch per-op ratio %.2f, want about 1", b.WallRatio.Median)
	}
}

// TestMeasureInterleavesAndNumbersOps: every round runs every case, in
// rotating order, and operation numbers never repeat within a case.
func TestMeasureInterleavesAndNumbersOps(t *testing.T) {
	var trace []string
	seen := map[string]map[int]bool{"a": {}, "b": {}}
	mk := func(name string) Case {
		return Case{Name: name, Op: func(i int) error {
			if seen[name][i] {
				t.Errorf("%s: operation %d twice", name, i)
			}
			seen[name][i] = true
			if len(trace) == 0 || trace[len(trace)-1] != name {
				trace = append(trace, name)
			}
			spin(50 * time.Microsecond)
			return nil
		}}
	}
	if _, err := Measure(Config{Rounds: 4, Slice: time.Millisecond}, mk("a"), mk("b")); err != nil {
		t.Fatal(err)
	}
	// Calibration runs a then b; then rounds go a,b / b,a / a,b / b,a, so
	// (runs of one case merged) the trace is ab|ab|a|b|a: without rotation
	// it would be ab|ab|ab|ab|ab.
	got := strings.Join(trace, "")
	if got != "abababa" {
		t.Errorf("run order %q", got)
	}
}

// TestMeasureStopsOnError: an operation's error ends the run and names the case.
func TestMeasureStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Measure(Config{Rounds: 2, Slice: time.Millisecond},
		Case{Name: "ok", Op: func(int) error { return nil }},
		Case{Name: "bad", Op: func(i int) error {
			if i > 3 {
				return boom
			}
			return nil
		}})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("got %v, want the case's error naming it", err)
	}
	if _, err := Measure(Config{}, Case{Name: "nil"}); err == nil {
		t.Fatal("a case without Op was accepted")
	}
}
