package transfer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// benchRows is the size of the large benchmarks: 100,000 rows in 50
// partitions, or TABLEKIT_BENCH_ROWS rows (still in 50 partitions).
func benchRows(b *testing.B) int {
	if s := os.Getenv("TABLEKIT_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 50 {
			b.Fatalf("TABLEKIT_BENCH_ROWS=%q: want a number of rows, at least 50", s)
		}
		return n
	}
	return 100_000
}

func benchActions(rows int) []store.Action {
	acts := make([]store.Action, 0, rows)
	for i := range rows {
		acts = append(acts, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("p%02d", i%50), RowKey: fmt.Sprintf("r%07d", i),
			Properties: map[string]any{"Name": fmt.Sprintf("name-%d", i), "N": int64(i), "V": float64(i) / 3,
				"At": time.Date(2026, 1, 1, 0, 0, i%86400, 0, time.UTC), "Ok": i%2 == 0},
		}})
	}
	return acts
}

// azuriteCPU returns a clock of the CPU time of Azurite's Node.js process,
// found among the children of scripts/with-azurite.sh (the parent of
// go test, the parent of this test binary), or nil when it is not there.
func azuriteCPU() func() time.Duration {
	gp := ppidOf(os.Getppid())
	if gp <= 0 {
		return nil
	}
	kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", gp))
	for _, k := range kids {
		b, _ := os.ReadFile(k)
		for _, f := range strings.Fields(string(b)) {
			comm, _ := os.ReadFile("/proc/" + f + "/comm")
			if strings.TrimSpace(string(comm)) == "node" {
				stat := "/proc/" + f + "/stat"
				return func() time.Duration {
					b, err := os.ReadFile(stat)
					if err != nil {
						return 0
					}
					s := string(b)
					fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
					u, _ := strconv.ParseInt(fs[11], 10, 64)
					k, _ := strconv.ParseInt(fs[12], 10, 64)
					return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ 100
				}
			}
		}
	}
	return nil
}

func ppidOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n, _ := strconv.Atoi(fs[1])
	return n
}

// serverLoad sums, per case, the wall time of its operations and
// Azurite's CPU time during them.
type serverLoad struct {
	clock func() time.Duration
	wall  map[string]time.Duration
	cpu   map[string]time.Duration
	rows  map[string]int
}

func (s *serverLoad) wrap(c interleave.Case) interleave.Case {
	op := c.Op
	c.Op = func(i int) error {
		t0, c0 := time.Now(), s.clock()
		err := op(i)
		s.wall[c.Name] += time.Since(t0)
		s.cpu[c.Name] += s.clock() - c0
		s.rows[c.Name] += c.Ops
		return err
	}
	return c
}

func (s *serverLoad) report(b *testing.B, names ...string) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-28s %12s %14s %16s\n", "case", "rows/s", "Azurite busy", "Azurite µs/row")
	for _, n := range names {
		w, c, r := s.wall[n], s.cpu[n], s.rows[n]
		fmt.Fprintf(&sb, "%-28s %12.0f %13.0f%% %16.1f\n", n, float64(r)/w.Seconds(), 100*c.Seconds()/w.Seconds(), float64(c.Microseconds())/float64(r))
	}
	b.Log("\n" + sb.String())
	fmt.Fprint(os.Stderr, sb.String())
}

// BenchmarkExportLarge measures tablekit's export of a 100,000-row table
// in 50 partitions (TABLEKIT_BENCH_ROWS rows to change the size) from
// Azurite, in one query and 4 and 8 partitions at once, against a
// hand-written aztables pager, interleaved round by round; and Azurite's
// CPU time during each case:
//
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkExportLarge$' -benchtime 1x ./cmd/tablekit/internal/transfer/
func BenchmarkExportLarge(b *testing.B) {
	conn := azuritetest.Conn(b)
	ctx := context.Background()
	st, err := azstore.NewFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	rows := benchRows(b)
	table := fmt.Sprintf("ExportL%d", time.Now().UnixNano()%1_000_000_000)
	if err := st.CreateTable(ctx, table); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(ctx, table)
	t0 := time.Now()
	if _, err := store.NewBulkWriter(st.Table(table), store.BulkOptions{}).Write(ctx, benchActions(rows)); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d rows in %v", rows, time.Since(t0).Round(time.Millisecond))
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	client := svc.NewClient(table)
	count := func(n int) error {
		if n != rows {
			return fmt.Errorf("%d rows exported, want %d", n, rows)
		}
		return nil
	}
	load := &serverLoad{clock: azuriteCPU(), wall: map[string]time.Duration{}, cpu: map[string]time.Duration{}, rows: map[string]int{}}
	if load.clock == nil {
		load.clock = func() time.Duration { return 0 }
		b.Log("Azurite's process not found: its CPU figures are 0")
	}
	pager := load.wrap(interleave.Case{Name: "aztables-pager", Ops: rows, Op: func(int) error {
		p := client.NewListEntitiesPager(nil)
		n := 0
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return err
			}
			for _, e := range page.Entities {
				io.Discard.Write(append(e, '\n'))
				n++
			}
		}
		return count(n)
	}})
	names := []string{pager.Name}
	var cases []interleave.Case
	for _, par := range []int{1, 4, 8} {
		c := load.wrap(interleave.Case{Name: fmt.Sprintf("tablekit-export-parallel-%d", par), Ops: rows, Op: func(int) error {
			res, err := ExportParallel(ctx, st.Table(table), store.Query{}, ExportOptions{Format: "jsonl", Parallel: par}, io.Discard)
			if err != nil {
				return err
			}
			return count(res.Rows)
		}})
		cases = append(cases, c)
		names = append(names, c.Name)
	}
	b.ResetTimer()
	for range b.N {
		rep, err := interleave.Measure(interleave.Config{Rounds: 5, Slice: time.Millisecond, Warmup: time.Millisecond, CollectGarbage: true}, pager, cases...)
		if err != nil {
			b.Fatal(err)
		}
		rep.Metrics(b.ReportMetric)
		b.Log("\n" + rep.Table())
		fmt.Fprintln(os.Stderr, rep.Table())
		load.report(b, names...)
	}
}

// BenchmarkImportLarge measures tablekit's import (the JSON lines file
// read and checked, then written through transfer.Import) of 100,000 rows
// in 50 partitions (TABLEKIT_BENCH_ROWS to change the size) against the
// bulk writer alone (store.NewBulkWriter(...).Write of the same rows),
// interleaved; each operation writes into a fresh table, created and the
// previous one dropped outside the clocks:
//
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkImportLarge$' -benchtime 1x ./cmd/tablekit/internal/transfer/
func BenchmarkImportLarge(b *testing.B) {
	conn := azuritetest.Conn(b)
	ctx := context.Background()
	st, err := azstore.NewFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	rows := benchRows(b)
	acts := benchActions(rows)
	var file bytes.Buffer
	for i := range acts {
		line, err := entityio.AppendJSON(nil, &acts[i].Entity, false)
		if err != nil {
			b.Fatal(err)
		}
		file.Write(append(line, '\n'))
	}
	data := file.Bytes()
	stamp := time.Now().UnixNano() % 1_000_000_000
	var live []string
	drop := func() {
		for _, t := range live {
			st.DeleteTable(ctx, t)
		}
		live = live[:0]
	}
	defer drop()
	name := func(c string, i int) string { return fmt.Sprintf("Imp%s%d%04d", c, stamp, i) }
	prepare := func(c string) func(int) error {
		return func(i int) error {
			drop()
			live = append(live, name(c, i))
			return st.CreateTable(ctx, name(c, i))
		}
	}
	load := &serverLoad{clock: azuriteCPU(), wall: map[string]time.Duration{}, cpu: map[string]time.Duration{}, rows: map[string]int{}}
	if load.clock == nil {
		load.clock = func() time.Duration { return 0 }
	}
	bulk := load.wrap(interleave.Case{Name: "bulk-writer", Ops: rows, Prepare: prepare("B"), Op: func(i int) error {
		res, err := store.NewBulkWriter(st.Table(name("B", i)), store.BulkOptions{}).Write(ctx, acts)
		if err != nil {
			return err
		}
		if res.Written != rows {
			return fmt.Errorf("%d written (%d failed, %d unknown), want %d", res.Written, res.Failed, res.Unknown, rows)
		}
		return nil
	}})
	imp := load.wrap(interleave.Case{Name: "tablekit-import", Ops: rows, Prepare: prepare("I"), Op: func(i int) error {
		recs, err := entityio.Parse(data, "jsonl")
		if err != nil {
			return err
		}
		rep, err := Import(ctx, st.Table(name("I", i)), recs, ImportOptions{Mode: ModeUpsert})
		if err != nil {
			return err
		}
		if rep.Written != rows || rep.Failed+rep.Unknown > 0 {
			return fmt.Errorf("import: %d written, %d failed, %d unknown, want %d written", rep.Written, rep.Failed, rep.Unknown, rows)
		}
		return nil
	}})
	b.ResetTimer()
	for range b.N {
		rep, err := interleave.Measure(interleave.Config{Rounds: 3, Slice: time.Millisecond, Warmup: time.Millisecond, CollectGarbage: true}, bulk, imp)
		if err != nil {
			b.Fatal(err)
		}
		rep.Metrics(b.ReportMetric)
		b.Log("\n" + rep.Table())
		fmt.Fprintln(os.Stderr, rep.Table())
		load.report(b, bulk.Name, imp.Name)
	}
}
