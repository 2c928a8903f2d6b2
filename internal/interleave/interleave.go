// Package interleave measures cases against a baseline in one run, on a
// shared and noisy machine, so that their ratio means something.
//
// Running benchmarks one after another (go test -count) lets the load of
// the moment decide a ratio: the baseline may run while another build
// holds a core and the case while the machine is idle. Measure instead
// runs every case for a short slice of time in each of many rounds,
// rotating the order from round to round, and computes the ratio of each
// case to the baseline within each round. A burst of load then hits both
// sides of a ratio alike, and the spread of the per-round ratios shows how
// far the figure can be trusted.
//
// Beside wall time per operation it reports the process's CPU time per
// operation (user plus system, every goroutine of the process, from
// getrusage): against a server in another process, such as Azurite, that
// is the client's own cost, which wall time hides behind the server's.
//
// Use it from a benchmark run once (go test -bench X -benchtime 1x) and
// report the result with Report.Metrics and Report.Table.
package interleave

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Case is one thing to measure.
type Case struct {
	// Name labels the case in the report.
	Name string
	// Op performs operation number i (counting from 0 across rounds, so it
	// can make fresh keys). An error stops the measurement.
	Op func(i int) error
	// Ops, when above 1, is how many operations one call of Op performs
	// (a bulk write of 5,000 entities: 5000), so the report gives the cost
	// per operation. 0 means 1.
	Ops int
	// Prepare, when set, readies operation number i (a fresh table for
	// it) and runs before the slice that calls Op(i), outside its clocks,
	// for each operation of the slice.
	Prepare func(i int) error
}

// Config tunes Measure. The zero value gives the defaults.
type Config struct {
	// Rounds is how many rounds run; 0 means 15.
	Rounds int
	// Slice is the time each case runs in one round; 0 means 50 ms. The
	// number of calls per slice is calibrated once, before the rounds.
	Slice time.Duration
	// Warmup is how long each case runs before the rounds (JIT-warm
	// servers, connection pools, caches); 0 means one slice.
	Warmup time.Duration
	// CollectGarbage makes each slice start from a collected heap (a
	// runtime.GC before it, not measured) and end with a collection that
	// is measured, so each case pays for collecting its own garbage and
	// not for what the case before it left. Without it, a case that
	// allocates little is charged for the background collection of a
	// baseline that allocates much.
	CollectGarbage bool

	// now and cpu replace the wall clock and the process's CPU clock
	// (tests of the harness itself run on a fake clock).
	now func() time.Time
	cpu func() time.Duration
}

// Stats summarizes one figure over the rounds.
type Stats struct {
	Median, Min, Max float64
}

func (s Stats) String() string {
	return fmt.Sprintf("%s (%s-%s)", num(s.Median), num(s.Min), num(s.Max))
}

// Row is the result of one case.
type Row struct {
	// Name is the case's name.
	Name string
	// Wall and CPU are nanoseconds per operation.
	Wall, CPU Stats
	// WallRatio and CPURatio are the case's per-round figures divided by
	// the baseline's of the same round.
	WallRatio, CPURatio Stats
	// Allocs and Bytes are heap allocations and bytes per operation (median
	// over the rounds).
	Allocs, Bytes float64
	// Calls is the number of Op calls per round.
	Calls int
}

// Report is the result of Measure: the baseline first.
type Report struct {
	Rows   []Row
	Rounds int
}

// Measure runs base and cases interleaved and reports each against base.
func Measure(cfg Config, base Case, cases ...Case) (Report, error) {
	if cfg.Rounds <= 0 {
		cfg.Rounds = 15
	}
	if cfg.Slice <= 0 {
		cfg.Slice = 50 * time.Millisecond
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = cfg.Slice
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.cpu == nil {
		cfg.cpu = cpuTime
	}
	all := append([]Case{base}, cases...)
	for i := range all {
		if all[i].Op == nil {
			return Report{}, fmt.Errorf("interleave: case %q has no Op", all[i].Name)
		}
		if all[i].Ops <= 0 {
			all[i].Ops = 1
		}
	}
	next := make([]int, len(all)) // the next operation number of each case
	calls := make([]int, len(all))
	for i := range all {
		n, err := calibrate(&all[i], &next[i], cfg.Warmup, cfg.Slice, cfg.now)
		if err != nil {
			return Report{}, err
		}
		calls[i] = n
	}
	type sample struct{ wall, cpu, allocs, bytes float64 }
	samples := make([][]sample, len(all))
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	for round := range cfg.Rounds {
		// Rotate so that each case runs in every position as often.
		for k := range order {
			order[k] = (k + round) % len(all)
		}
		for _, i := range order {
			c := &all[i]
			if c.Prepare != nil {
				for k := range calls[i] {
					if err := c.Prepare(next[i] + k); err != nil {
						return Report{}, fmt.Errorf("interleave: %s: prepare: %w", c.Name, err)
					}
				}
			}
			var m0, m1 runtime.MemStats
			if cfg.CollectGarbage {
				runtime.GC()
			}
			runtime.ReadMemStats(&m0)
			cpu0 := cfg.cpu()
			t0 := cfg.now()
			for range calls[i] {
				if err := c.Op(next[i]); err != nil {
					return Report{}, fmt.Errorf("interleave: %s: %w", c.Name, err)
				}
				next[i]++
			}
			if cfg.CollectGarbage {
				runtime.GC()
			}
			wall := cfg.now().Sub(t0)
			cpu := cfg.cpu() - cpu0
			runtime.ReadMemStats(&m1)
			ops := float64(calls[i] * c.Ops)
			samples[i] = append(samples[i], sample{
				wall:   float64(wall.Nanoseconds()) / ops,
				cpu:    float64(cpu.Nanoseconds()) / ops,
				allocs: float64(m1.Mallocs-m0.Mallocs) / ops,
				bytes:  float64(m1.TotalAlloc-m0.TotalAlloc) / ops,
			})
		}
	}
	rep := Report{Rounds: cfg.Rounds}
	for i, c := range all {
		var wall, cpu, wr, cr, allocs, bytes []float64
		for r, s := range samples[i] {
			b := samples[0][r]
			wall = append(wall, s.wall)
			cpu = append(cpu, s.cpu)
			wr = append(wr, s.wall/b.wall)
			cr = append(cr, ratio(s.cpu, b.cpu))
			allocs = append(allocs, s.allocs)
			bytes = append(bytes, s.bytes)
		}
		rep.Rows = append(rep.Rows, Row{
			Name: c.Name, Wall: stats(wall), CPU: stats(cpu),
			WallRatio: stats(wr), CPURatio: stats(cr),
			Allocs: stats(allocs).Median, Bytes: stats(bytes).Median,
			Calls: calls[i],
		})
	}
	return rep, nil
}

// calibrate warms a case up and returns how many calls fill one slice.
func calibrate(c *Case, next *int, warmup, slice time.Duration, now func() time.Time) (int, error) {
	calls := 0
	t0 := now()
	var prepared time.Duration // not counted as the case's time
	for calls == 0 || now().Sub(t0)-prepared < warmup {
		if c.Prepare != nil {
			p0 := now()
			if err := c.Prepare(*next); err != nil {
				return 0, fmt.Errorf("interleave: %s: prepare: %w", c.Name, err)
			}
			prepared += now().Sub(p0)
		}
		if err := c.Op(*next); err != nil {
			return 0, fmt.Errorf("interleave: %s: %w", c.Name, err)
		}
		*next++
		calls++
	}
	per := (now().Sub(t0) - prepared) / time.Duration(calls)
	if per <= 0 {
		per = 1
	}
	return max(1, int(slice/per)), nil
}

func ratio(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return a / b
}

func stats(v []float64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stats{Median: med, Min: s[0], Max: s[len(s)-1]}
}

// Row returns the row of the named case.
func (r Report) Row(name string) (Row, error) {
	for _, row := range r.Rows {
		if row.Name == name {
			return row, nil
		}
	}
	return Row{}, errors.New("interleave: no case " + name)
}

// Table formats the report as a Markdown table: per-operation wall and CPU
// time (median and range over the rounds) and the ratios to the baseline.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d interleaved rounds; median (min-max) over rounds; ratios are per round against %s\n\n", r.Rounds, r.Rows[0].Name)
	b.WriteString("| case | wall ns/op | CPU ns/op | wall ratio | CPU ratio | allocs/op | B/op |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", row.Name, row.Wall, row.CPU,
			ratioText(row.WallRatio), ratioText(row.CPURatio), num(row.Allocs), num(row.Bytes))
	}
	return b.String()
}

func ratioText(s Stats) string {
	return fmt.Sprintf("%.2fx (%.2f-%.2f)", s.Median, s.Min, s.Max)
}

// num prints a figure with three significant digits and thousands
// separators.
func num(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return fmt.Sprint(v)
	case v >= 1000:
		s := fmt.Sprintf("%.0f", v)
		var out []byte
		for i := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				out = append(out, ',')
			}
			out = append(out, s[i])
		}
		return string(out)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Metrics reports each row's medians as benchmark metrics: name/wall-ns/op,
// name/cpu-ns/op, and name/wall-x and name/cpu-x against the baseline.
// report is testing.B.ReportMetric.
func (r Report) Metrics(report func(n float64, unit string)) {
	for i, row := range r.Rows {
		report(row.Wall.Median, row.Name+"-wall-ns/op")
		report(row.CPU.Median, row.Name+"-cpu-ns/op")
		if i > 0 {
			report(row.WallRatio.Median, row.Name+"-wall-x")
			report(row.CPURatio.Median, row.Name+"-cpu-x")
		}
	}
}
