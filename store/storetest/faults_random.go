package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// randomRows is how many rows a randomized schedule writes.
const randomRows = 5

// faultCounts are the totals of the randomized schedules.
type faultCounts struct {
	runs, faults, submitted, written, failed, unknown int
	// lost: reported written, not stored. duplicated: reported written,
	// stored, but not with the reported ETag (applied again after). clobbered:
	// reported failed, yet the data changed.
	lost, duplicated, clobbered int
}

func (c faultCounts) String() string {
	return fmt.Sprintf("runs %d, faults %d, writes %d: written %d, failed %d, unknown %d; lost %d, duplicated %d, clobbered %d",
		c.runs, c.faults, c.submitted, c.written, c.failed, c.unknown, c.lost, c.duplicated, c.clobbered)
}

// randomSchedules runs seeded random sequences of writes (single,
// transactions and bulk writes) under random faults on every request,
// reads included, and checks after each write that the stored rows are
// what the outcomes report: a write reported written is stored with its
// ETag, a write reported failed changed nothing, and every write has one
// of the three outcomes. It prints the counts.
func (s *suite) randomSchedules(t *testing.T) {
	runs := s.h.FaultRuns
	if runs <= 0 {
		runs = 200
	}
	var total faultCounts
	for run := range runs {
		c := s.randomRun(t, uint64(run)+1)
		total.runs++
		total.faults += c.faults
		total.submitted += c.submitted
		total.written += c.written
		total.failed += c.failed
		total.unknown += c.unknown
		total.lost += c.lost
		total.duplicated += c.duplicated
		total.clobbered += c.clobbered
		if t.Failed() {
			t.Fatalf("seed %d failed: %v", run+1, c)
		}
	}
	t.Logf("randomized fault schedules: %v", total)
	if total.lost+total.duplicated+total.clobbered != 0 {
		t.Fatalf("outcomes disagree with the stored data: %v", total)
	}
	if total.written+total.failed+total.unknown != total.submitted {
		t.Fatalf("outcomes do not add up: %v", total)
	}
	if total.faults == 0 || total.written == 0 {
		t.Fatalf("the schedules injected no faults or wrote nothing: %v", total)
	}
}

// randomRun is one seeded schedule.
func (s *suite) randomRun(t *testing.T, seed uint64) faultCounts {
	var c faultCounts
	var on atomic.Bool
	st := s.h.Faults(t, randomFaults(seed, 0xfa17, &on, &c.faults))
	tbl := s.newTableOn(t, st)
	rng := rand.New(rand.NewPCG(seed, 0x0b5))
	model := make([]*store.Entity, randomRows) // what is stored, by row
	ctx := context.Background()
	for op := range 16 {
		acts := randomActions(rng, model, fmt.Sprintf("s%d-o%d", seed, op))
		on.Store(true)
		outcomes := s.runRandom(ctx, rng, tbl, acts)
		on.Store(false)
		for i, a := range acts {
			row := rowIndex(a.Entity.RowKey)
			got := readRow(t, tbl, a.Entity.RowKey)
			o := outcomes[i]
			c.submitted++
			switch {
			case o.unknown:
				c.unknown++
			case o.err != nil:
				c.failed++
				if !sameRow(got, model[row]) {
					c.clobbered++
					t.Errorf("seed %d op %d: %v of %s reported failed (%v), but the row changed: %v -> %v", seed, op, a.Kind, a.Entity.RowKey, o.err, model[row], got)
				}
			default:
				c.written++
				want := applyAction(a, model[row])
				switch {
				case !sameProps(got, want):
					c.lost++
					t.Errorf("seed %d op %d: %v of %s reported written, but the row is %v, want %v", seed, op, a.Kind, a.Entity.RowKey, got, want)
				case got != nil && got.ETag != o.etag:
					c.duplicated++
					t.Errorf("seed %d op %d: %v of %s reported ETag %s, stored %s", seed, op, a.Kind, a.Entity.RowKey, o.etag, got.ETag)
				}
			}
		}
		for i := range model {
			model[i] = readRow(t, tbl, rowKey(i))
		}
	}
	return c
}

// randomFaults is the schedule of a randomized run: while on is true, it
// fails three requests in ten with a fault drawn at random from a source
// seeded with (seed, stream), and counts them in *faults.
func randomFaults(seed, stream uint64, on *atomic.Bool, faults *int) Schedule {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, stream))
	return func(Request) Fault {
		if !on.Load() {
			return FaultNone
		}
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() < 0.3 {
			*faults++
			return Fault(1 + rng.IntN(int(numFaults)-1))
		}
		return FaultNone
	}
}

// randomOutcome is one write's outcome in a randomized schedule.
type randomOutcome struct {
	etag    store.ETag
	err     error
	unknown bool
}

// runRandom sends acts one way, chosen at random: one at a time, as one
// transaction, or through the bulk writer.
func (s *suite) runRandom(ctx context.Context, rng *rand.Rand, tbl store.Table, acts []store.Action) []randomOutcome {
	out := make([]randomOutcome, len(acts))
	set := func(i int, etag store.ETag, err error) {
		out[i] = randomOutcome{etag: etag, err: err, unknown: errors.Is(err, store.ErrUnknownOutcome)}
	}
	switch rng.IntN(3) {
	case 0:
		for i, a := range acts {
			etag, err := doSingle(ctx, tbl, a)
			set(i, etag, err)
		}
	case 1:
		res, err := tbl.Transact(ctx, acts)
		for i := range acts {
			var etag store.ETag
			if err == nil {
				etag = res[i].ETag
			}
			set(i, etag, err)
		}
	default:
		res, _ := store.NewBulkWriter(tbl, store.BulkOptions{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}).Write(ctx, acts)
		for i, o := range res.Outcomes {
			out[i] = randomOutcome{etag: o.ETag, err: o.Err, unknown: o.Unknown}
		}
	}
	return out
}

// randomActions makes 1 to 3 writes to distinct rows, of random kinds,
// conditional on the ETags in model (sometimes stale ones), with values
// unique to tag.
func randomActions(rng *rand.Rand, model []*store.Entity, tag string) []store.Action {
	n := 1 + rng.IntN(3)
	rows := rng.Perm(randomRows)[:n]
	acts := make([]store.Action, n)
	for i, r := range rows {
		e := store.Entity{PartitionKey: "p", RowKey: rowKey(r), Properties: map[string]any{"V": tag}}
		if rng.IntN(2) == 0 {
			e.Properties[fmt.Sprintf("X%d", rng.IntN(3))] = int64(rng.IntN(100))
		}
		etag := store.ETagAny
		if model[r] != nil && rng.IntN(4) != 0 {
			etag = model[r].ETag
		} else if rng.IntN(2) == 0 {
			etag = `W/"datetime'2001-01-01T00%3A00%3A00Z'"` // stale
		}
		kind := store.ActionKind(rng.IntN(6))
		acts[i] = store.Action{Kind: kind, Entity: e}
		if kind.NeedsIfMatch() {
			acts[i].IfMatch = etag
		}
		if kind == store.ActionDelete {
			acts[i].Entity.Properties = nil
		}
	}
	return acts
}

func rowKey(i int) string { return fmt.Sprintf("r%d", i) }

func rowIndex(rk string) int {
	var i int
	fmt.Sscanf(rk, "r%d", &i)
	return i
}

// applyAction is the row a successful action leaves, from the row before.
func applyAction(a store.Action, before *store.Entity) *store.Entity {
	switch a.Kind {
	case store.ActionDelete:
		return nil
	case store.ActionUpdateMerge, store.ActionUpsertMerge:
		if before != nil {
			merged := store.Entity{PartitionKey: a.Entity.PartitionKey, RowKey: a.Entity.RowKey, Properties: map[string]any{}}
			for k, v := range before.Properties {
				merged.Properties[k] = v
			}
			for k, v := range a.Entity.Properties {
				merged.Properties[k] = v
			}
			return &merged
		}
	}
	e := a.Entity
	return &e
}

// sameRow reports whether two reads of a row are the same version.
func sameRow(a, b *store.Entity) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ETag == b.ETag && sameProps(a, b)
}

// sameProps reports whether two rows hold the same properties.
func sameProps(a, b *store.Entity) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if len(a.Properties) != len(b.Properties) {
		return false
	}
	for k, v := range a.Properties {
		if w, ok := b.Properties[k]; !ok || !store.SameValue(v, w) {
			return false
		}
	}
	return true
}
