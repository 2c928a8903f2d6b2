package transfer

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// repeatedRecords returns an input that writes every entity several
// times: parts partitions of keys rows each, passes times over, in an
// order that mixes partitions; each line's property Line holds its line
// number, so the value stored for an entity names the write that won.
func repeatedRecords(parts, keys, passes int, seed uint64) []entityio.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	var recs []entityio.Record
	for range passes {
		var pass []store.Entity
		for p := range parts {
			for k := range keys {
				pass = append(pass, store.Entity{PartitionKey: fmt.Sprintf("p%02d", p), RowKey: fmt.Sprintf("r%04d", k)})
			}
		}
		rng.Shuffle(len(pass), func(i, j int) { pass[i], pass[j] = pass[j], pass[i] })
		for _, e := range pass {
			line := len(recs) + 1
			e.Properties = map[string]any{"Line": int64(line)}
			recs = append(recs, entityio.Record{Line: line, Entity: e})
		}
	}
	return recs
}

// lastLines returns, for each entity, the line of its last write.
func lastLines(recs []entityio.Record) map[[2]string]int64 {
	m := map[[2]string]int64{}
	for _, r := range recs {
		m[[2]string{r.Entity.PartitionKey, r.Entity.RowKey}] = int64(r.Line)
	}
	return m
}

// orderCheck is a table that watches the writes to each entity: a write
// that starts while another write of the same entity is in flight, or
// after a write of a later line of it, is recorded as a violation. It
// pauses a random moment before each transaction, so the transactions
// finish in an order of their own.
type orderCheck struct {
	store.Table
	mu         sync.Mutex
	rng        *rand.Rand
	inFlight   map[[2]string]bool
	lastLine   map[[2]string]int64
	violations []string
	calls      int
	// stopAt, when positive, is the transaction after which stop is
	// called: that one is applied, whatever stop does to the others.
	stopAt int
	stop   func()
}

func newOrderCheck(t store.Table, seed uint64) *orderCheck {
	return &orderCheck{Table: t, rng: rand.New(rand.NewPCG(seed, 2)), inFlight: map[[2]string]bool{}, lastLine: map[[2]string]int64{}}
}

func (c *orderCheck) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	c.mu.Lock()
	c.calls++
	n := c.calls
	pause := time.Duration(c.rng.IntN(300)) * time.Microsecond
	for _, a := range actions {
		k := [2]string{a.Entity.PartitionKey, a.Entity.RowKey}
		line := a.Entity.Properties["Line"].(int64)
		if c.inFlight[k] {
			c.violations = append(c.violations, fmt.Sprintf("line %d of %v starts while an earlier write of it is in flight", line, k))
		}
		if line <= c.lastLine[k] {
			c.violations = append(c.violations, fmt.Sprintf("line %d of %v starts after line %d of it", line, k, c.lastLine[k]))
		}
		c.inFlight[k] = true
		c.lastLine[k] = line
	}
	c.mu.Unlock()
	time.Sleep(pause)
	if n == c.stopAt {
		ctx = context.WithoutCancel(ctx)
	}
	res, err := c.Table.Transact(ctx, actions)
	c.mu.Lock()
	for _, a := range actions {
		delete(c.inFlight, [2]string{a.Entity.PartitionKey, a.Entity.RowKey})
	}
	c.mu.Unlock()
	if n == c.stopAt {
		c.stop()
	}
	return res, err
}

// wantLastLines fails unless every entity holds the line of its last write.
func wantLastLines(t *testing.T, tbl store.Table, recs []entityio.Record) {
	t.Helper()
	want := lastLines(recs)
	got := map[[2]string]int64{}
	for e, err := range store.All(context.Background(), tbl, store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		got[[2]string{e.PartitionKey, e.RowKey}] = e.Properties["Line"].(int64)
	}
	lost, changed := 0, 0
	for k, line := range want {
		g, ok := got[k]
		switch {
		case !ok:
			lost++
		case g != line:
			changed++
			if changed <= 3 {
				t.Errorf("%v holds line %d, want its last line %d", k, g, line)
			}
		}
	}
	if lost > 0 || changed > 0 || len(got) != len(want) {
		t.Fatalf("%d entities stored, want %d: %d lost, %d hold an earlier line", len(got), len(want), lost, changed)
	}
}

func newTable(t *testing.T) store.Table {
	t.Helper()
	st := memstore.New()
	if err := st.CreateTable(context.Background(), "Imp"); err != nil {
		t.Fatal(err)
	}
	return st.Table("Imp")
}

// TestImportWritesAnEntityInInputOrder: with many transactions in flight
// and chunks that end anywhere, the writes to one entity never overlap and
// start in input order, and each entity ends holding its last line; a
// partition with more than 100 lines in a chunk is cut into several
// transactions, which run at once when their entities differ.
func TestImportWritesAnEntityInInputOrder(t *testing.T) {
	for _, c := range []struct {
		name                string
		parts, keys, passes int
		chunk, parallel     int
	}{
		{"small units", 7, 40, 4, 97, 8},
		{"units of several transactions", 2, 300, 3, 1000, 8},
		{"one chunk", 3, 150, 3, 100000, 4},
		{"one at a time", 3, 50, 3, 61, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := repeatedRecords(c.parts, c.keys, c.passes, 1)
			tbl := newOrderCheck(newTable(t), 3)
			done := 0
			rep, err := Import(context.Background(), tbl, recs, ImportOptions{Chunk: c.chunk, Parallel: c.parallel, Progress: func(n int) { done = n }})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Written != len(recs) || rep.Failed+rep.Unknown+rep.NotSent+rep.Resumed > 0 || done != len(recs) {
				t.Fatalf("report %+v, progress %d, want %d written", rep, done, len(recs))
			}
			for i, v := range tbl.violations {
				if i == 5 {
					break
				}
				t.Error(v)
			}
			if len(tbl.violations) > 0 {
				t.Fatalf("%d writes out of input order", len(tbl.violations))
			}
			wantLastLines(t, tbl.Table, recs)
		})
	}
}

// checkpointUnits returns the units a checkpoint file records, in the
// order they were appended.
func checkpointUnits(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")[1:]
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(strings.TrimPrefix(l, `{"u":"`), `"}`)
	}
	return lines
}

// TestImportResumesAfterAStopAnywhere stops an import of an input that
// writes every entity several times right after its n-th transaction,
// for many n (with the transactions finishing in a shuffled order), and
// resumes it from the checkpoint: the checkpoint holds, for each
// partition, its first units and no later one without every earlier one;
// after the resumed run every entity holds its last line (none lost, none
// left with an earlier value), and the two runs account for every line.
func TestImportResumesAfterAStopAnywhere(t *testing.T) {
	for _, l := range []struct {
		name                       string
		parts, keys, passes, chunk int
	}{
		{"units of one transaction", 6, 60, 3, 150},
		{"units of several transactions", 2, 250, 3, 400},
	} {
		t.Run(l.name, func(t *testing.T) { resumeAfterStops(t, repeatedRecords(l.parts, l.keys, l.passes, 5), l.chunk) })
	}
}

func resumeAfterStops(t *testing.T, recs []entityio.Record, chunk int) {
	header := map[string]string{"kind": "test"}
	// the units of each partition, in input order
	order := map[string][]string{}
	for from, c := 0, 0; from < len(recs); from, c = from+chunk, c+1 {
		seen := map[string]bool{}
		for _, r := range recs[from:min(from+chunk, len(recs))] {
			if pk := r.Entity.PartitionKey; !seen[pk] {
				seen[pk] = true
				order[pk] = append(order[pk], unit(c, pk))
			}
		}
	}
	stops := 0
	for n := 1; n < 40; n += 2 {
		path := filepath.Join(t.TempDir(), "ck")
		cp, err := OpenCheckpoint(path, header)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		tbl := newOrderCheck(newTable(t), uint64(n))
		tbl.stopAt, tbl.stop = n, cancel
		first, err := Import(ctx, tbl, recs, ImportOptions{Chunk: chunk, Checkpoint: cp})
		cancel()
		cp.Close()
		if err != nil {
			t.Fatal(err)
		}
		if first.Stopped != nil {
			stops++
		}
		done := map[string]bool{}
		for _, u := range checkpointUnits(t, path) {
			done[u] = true
		}
		for _, units := range order {
			for i := 1; i < len(units); i++ {
				if done[units[i]] && !done[units[i-1]] {
					t.Fatalf("stop after transaction %d: the checkpoint records %s but not %s, written before it", n, units[i], units[i-1])
				}
			}
		}
		cp, err = OpenCheckpoint(path, header)
		if err != nil {
			t.Fatal(err)
		}
		// a new run: the order of writes is watched afresh
		tbl = newOrderCheck(tbl.Table, uint64(n)+100)
		second, err := Import(context.Background(), tbl, recs, ImportOptions{Chunk: chunk, Checkpoint: cp})
		cp.Close()
		if err != nil {
			t.Fatal(err)
		}
		if second.Resumed+second.Written != len(recs) || second.Failed+second.Unknown+second.NotSent > 0 {
			t.Fatalf("stop after transaction %d: resumed run %+v", n, second)
		}
		if first.Written+first.NotSent != len(recs) || second.Resumed > first.Written {
			t.Fatalf("stop after transaction %d: first run %+v, resumed run %+v", n, first, second)
		}
		if len(tbl.violations) > 0 {
			t.Fatalf("stop after transaction %d: %s", n, tbl.violations[0])
		}
		wantLastLines(t, tbl.Table, recs)
	}
	if stops == 0 {
		t.Fatal("no run was stopped before its end")
	}
}

// gate is a table that holds the transaction writing holdRK until the
// one writing afterRK at afterLine has returned, then stops the import
// (as a kill would at that moment) and lets the held one go, too late to
// be sent.
type gate struct {
	store.Table
	holdRK, afterRK string
	afterLine       int64
	passed          chan struct{}
	stop            func()
}

func (g *gate) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	for _, a := range actions {
		switch {
		case a.Entity.RowKey == g.holdRK:
			<-g.passed
			g.stop()
		case a.Entity.RowKey == g.afterRK && a.Entity.Properties["Line"] == g.afterLine:
			defer close(g.passed)
		}
	}
	return g.Table.Transact(ctx, actions)
}

// TestImportRecordsAPartitionsUnitsInOrder: a unit of the checkpoint that
// is written while an earlier unit of its partition is not finished is
// not recorded before it. Here the first chunk writes k000-k199 of one
// partition in two transactions and the second chunk k000-k099 again: the
// second chunk's transaction waits only for the first one and completes
// while the other (k100-k199) is held, then the import stops. Had the
// second unit been recorded, the resumed run would skip it and write the
// first unit again, leaving k000-k099 with their older lines.
func TestImportRecordsAPartitionsUnitsInOrder(t *testing.T) {
	var recs []entityio.Record
	for _, n := range []int{200, 100} {
		for k := range n {
			line := len(recs) + 1
			recs = append(recs, entityio.Record{Line: line, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("k%03d", k), Properties: map[string]any{"Line": int64(line)}}})
		}
	}
	path := filepath.Join(t.TempDir(), "ck")
	cp, err := OpenCheckpoint(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tbl := newTable(t)
	g := &gate{Table: tbl, holdRK: "k100", afterRK: "k000", afterLine: 201, passed: make(chan struct{}), stop: cancel}
	first, err := Import(ctx, g, recs, ImportOptions{Chunk: 200, Parallel: 2, Checkpoint: cp})
	cp.Close()
	if err != nil {
		t.Fatal(err)
	}
	if first.Written != 200 || first.NotSent != 100 || first.FirstLine != 101 {
		t.Fatalf("first run %+v: want k000-k099 written twice and k100-k199 (lines 101-200) not sent", first)
	}
	if got := checkpointUnits(t, path); len(got) != 0 {
		t.Fatalf("the checkpoint records %q while unit 0:p is not done", got)
	}
	cp, err = OpenCheckpoint(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	second, err := Import(context.Background(), tbl, recs, ImportOptions{Chunk: 200, Parallel: 2, Checkpoint: cp})
	cp.Close()
	if err != nil {
		t.Fatal(err)
	}
	if second.Written != len(recs) {
		t.Fatalf("resumed run %+v", second)
	}
	wantLastLines(t, tbl, recs)
}

// lossy is a table that loses the answer of every transaction writing
// one entity (not applied, or applied when apply is set) and counts the
// transactions that carry it.
type lossy struct {
	store.Table
	pk, rk string
	apply  bool
	mu     sync.Mutex
	sent   int
}

func (l *lossy) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	for _, a := range actions {
		if a.Entity.PartitionKey == l.pk && a.Entity.RowKey == l.rk {
			l.mu.Lock()
			l.sent++
			l.mu.Unlock()
			if l.apply {
				l.Table.Transact(ctx, actions)
			}
			e := store.Errorf(store.CodeResponseLost, 0, "test: the answer was lost")
			e.Unknown = true
			return nil, e
		}
	}
	return l.Table.Transact(ctx, actions)
}

// TestImportNeverResendsAnUnknownWrite: an insert whose answer is lost
// (applied or not) is sent once, listed in the unknown-outcome file with
// its line, counted unknown with the other writes of its transaction, and
// recorded done in the checkpoint, so a resumed run does not send it
// again either.
func TestImportNeverResendsAnUnknownWrite(t *testing.T) {
	for _, apply := range []bool{false, true} {
		t.Run(fmt.Sprintf("applied=%v", apply), func(t *testing.T) {
			recs := repeatedRecords(4, 250, 1, 9)
			var hit entityio.Record
			for _, r := range recs {
				if r.Line == 700 {
					hit = r
				}
			}
			tbl := &lossy{Table: newTable(t), pk: hit.Entity.PartitionKey, rk: hit.Entity.RowKey, apply: apply}
			path := filepath.Join(t.TempDir(), "ck")
			cp, err := OpenCheckpoint(path, "test")
			if err != nil {
				t.Fatal(err)
			}
			var unknown bytes.Buffer
			rep, err := Import(context.Background(), tbl, recs, ImportOptions{Mode: ModeInsert, Chunk: 300, Checkpoint: cp, Unknown: &unknown})
			cp.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Unknown == 0 || rep.Written+rep.Unknown != len(recs) || rep.Failed+rep.NotSent+rep.Present > 0 {
				t.Fatalf("report %+v", rep)
			}
			if n := strings.Count(unknown.String(), "\n"); n != rep.Unknown || !strings.Contains(unknown.String(), fmt.Sprintf(`{"line":%d,"table":"Imp","action":"insert"`, hit.Line)) {
				t.Fatalf("unknown-outcome file (%d lines, %d unknown):\n%s", n, rep.Unknown, unknown.String())
			}
			if tbl.sent != 1 {
				t.Fatalf("the write with the lost answer was sent %d times", tbl.sent)
			}
			cp, err = OpenCheckpoint(path, "test")
			if err != nil {
				t.Fatal(err)
			}
			again, err := Import(context.Background(), tbl, recs, ImportOptions{Mode: ModeInsert, Chunk: 300, Checkpoint: cp})
			cp.Close()
			if err != nil {
				t.Fatal(err)
			}
			if again.Resumed != len(recs) || tbl.sent != 1 {
				t.Fatalf("resumed run %+v; the write with the lost answer was sent %d times", again, tbl.sent)
			}
		})
	}
}
