package interleave

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock is a wall clock and a CPU clock that only the cases move.
type fakeClock struct {
	wall time.Time
	cpu  time.Duration
}

func (c *fakeClock) work(wall, cpu time.Duration) {
	c.wall = c.wall.Add(wall)
	c.cpu += cpu
}

// TestMeasureOrdersCasesByCost: a case that does three times the work of
// the baseline reads as 3x in wall and CPU time, and one that waits
// instead of working costs wall time but little CPU. The cases move a
// fake clock, so the figures are exact: the test checks the harness's
// arithmetic, not the machine's speed.
func TestMeasureOrdersCasesByCost(t *testing.T) {
	clk := &fakeClock{wall: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	base := Case{Name: "base", Op: func(int) error { clk.work(20*time.Microsecond, 20*time.Microsecond); return nil }}
	heavy := Case{Name: "heavy", Op: func(int) error { clk.work(60*time.Microsecond, 60*time.Microsecond); return nil }}
	sleepy := Case{Name: "sleepy", Op: func(int) error { clk.work(200*time.Microsecond, 2*time.Microsecond); return nil }}
	cfg := Config{Rounds: 5, Slice: 10 * time.Millisecond,
		now: func() time.Time { return clk.wall }, cpu: func() time.Duration { return clk.cpu }}
	rep, err := Measure(cfg, base, heavy, sleepy)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := rep.Row("heavy")
	if h.WallRatio.Median != 3 || h.CPURatio.Median != 3 || h.Wall.Median != 60_000 {
		t.Errorf("heavy: wall ratio %.4f, CPU ratio %.4f, wall %.0f ns/op; want 3, 3, 60000", h.WallRatio.Median, h.CPURatio.Median, h.Wall.Median)
	}
	s, _ := rep.Row("sleepy")
	if s.WallRatio.Median != 10 || s.CPURatio.Median != 0.1 {
		t.Errorf("sleepy: wall ratio %.4f, CPU ratio %.4f; want 10 and 0.1", s.WallRatio.Median, s.CPURatio.Median)
	}
	if want := int(10 * time.Millisecond / (60 * time.Microsecond)); h.Calls != want {
		t.Errorf("heavy runs %d calls per slice, want a slice's worth, %d", h.Calls, want)
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
	clk := &fakeClock{wall: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	one := Case{Name: "one", Op: func(int) error { clk.work(10*time.Microsecond, 10*time.Microsecond); return nil }}
	batch := Case{Name: "batch", Ops: 10, Op: func(int) error { clk.work(100*time.Microsecond, 100*time.Microsecond); return nil }}
	rep, err := Measure(Config{Rounds: 3, Slice: 5 * time.Millisecond,
		now: func() time.Time { return clk.wall }, cpu: func() time.Duration { return clk.cpu }}, one, batch)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rep.Row("batch")
	if b.WallRatio.Median != 1 || b.Wall.Median != 10_000 {
		t.Errorf("batch: per-op ratio %.4f, %.0f ns/op; want 1 and 10000", b.WallRatio.Median, b.Wall.Median)
	}
}

// TestMeasureInterleavesAndNumbersOps: every round runs every case, in
// rotating order, and operation numbers never repeat within a case.
func TestMeasureInterleavesAndNumbersOps(t *testing.T) {
	var trace []string
	clk := &fakeClock{wall: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
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
			clk.work(50*time.Microsecond, 50*time.Microsecond)
			return nil
		}}
	}
	if _, err := Measure(Config{Rounds: 4, Slice: time.Millisecond, now: func() time.Time { return clk.wall }}, mk("a"), mk("b")); err != nil {
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

// TestMeasurePreparesOutsideTheClock: Prepare readies every operation
// before the slice that runs it, and its time is neither measured nor
// counted when the calls of a slice are calibrated.
func TestMeasurePreparesOutsideTheClock(t *testing.T) {
	clk := &fakeClock{wall: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	prepared := map[int]bool{}
	var unprepared []int
	base := Case{Name: "base", Op: func(int) error { clk.work(time.Millisecond, time.Millisecond); return nil }}
	fresh := Case{Name: "fresh",
		Prepare: func(i int) error {
			prepared[i] = true
			clk.work(50*time.Millisecond, 50*time.Millisecond)
			return nil
		},
		Op: func(i int) error {
			if !prepared[i] {
				unprepared = append(unprepared, i)
			}
			clk.work(2*time.Millisecond, 2*time.Millisecond)
			return nil
		}}
	cfg := Config{Rounds: 3, Slice: 10 * time.Millisecond,
		now: func() time.Time { return clk.wall }, cpu: func() time.Duration { return clk.cpu }}
	rep, err := Measure(cfg, base, fresh)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := rep.Row("fresh")
	if f.WallRatio.Median != 2 || f.CPURatio.Median != 2 || f.Calls != 5 {
		t.Errorf("fresh: wall ratio %.4f, CPU ratio %.4f, %d calls per slice; want 2, 2 and 5 (Prepare's time left out)", f.WallRatio.Median, f.CPURatio.Median, f.Calls)
	}
	if len(unprepared) > 0 {
		t.Errorf("operations %v ran without Prepare", unprepared)
	}
	failing := Case{Name: "failing", Prepare: func(int) error { return errors.New("no table") }, Op: func(int) error { return nil }}
	if _, err := Measure(cfg, base, failing); err == nil || !strings.Contains(err.Error(), "prepare: no table") {
		t.Errorf("a failing Prepare gave %v, want its error", err)
	}
}
