package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// vclock is a virtual clock: it stands still until a test moves it.
type vclock struct {
	mu sync.Mutex
	t  time.Time
}

func newVClock() *vclock { return &vclock{t: time.Date(2026, 11, 22, 15, 4, 0, 0, time.UTC)} }

func (c *vclock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *vclock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// modelStore is a memstore with the throughput model on a virtual clock
// and one table, "Log".
func modelStore(t testing.TB, l memstore.ThroughputLimits) (*memstore.Store, store.Table, *vclock) {
	t.Helper()
	c := newVClock()
	st := memstore.New(memstore.WithClock(c.Now), memstore.WithThroughput(l))
	if err := st.CreateTable(context.Background(), "Log"); err != nil {
		t.Fatal(err)
	}
	return st, st.Table("Log"), c
}

// upserts returns a transaction of n upserts to partition pk, RowKeys
// from first on.
func upserts(pk string, first, n int) []store.Action {
	acts := make([]store.Action, n)
	for i := range acts {
		acts[i] = store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: pk,
			RowKey: fmt.Sprintf("%06d", first+i), Properties: map[string]any{"N": int64(first + i)}}}
	}
	return acts
}

// wantBusy fails unless err is the model's refusal: the error a client
// treats as "not applied, retry later", with ServerBusy's code, status and
// source.
func wantBusy(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: served, want 503 ServerBusy", what)
	}
	var se, fault *store.Error
	errors.As(memstore.ServerBusy(), &fault)
	if !errors.As(err, &se) || se.Code != fault.Code || se.Status != fault.Status || se.Source != fault.Source || se.Unknown {
		t.Fatalf("%s: %v (%#v), want the error ServerBusy gives", what, err, se)
	}
	if !errors.Is(err, store.ErrThrottled) || !errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("%s: %v does not read as throttled and not applied", what, err)
	}
}

func TestThroughputLimitsDefaultsAndValidation(t *testing.T) {
	st, _, _ := modelStore(t, memstore.ThroughputLimits{})
	want := memstore.ThroughputLimits{PartitionRate: 2000, PartitionBurst: 2000, AccountRate: 20000, AccountBurst: 20000}
	if got := st.Throughput().Limits; got != want {
		t.Fatalf("default limits %+v, want %+v", got, want)
	}
	st, _, _ = modelStore(t, memstore.ThroughputLimits{PartitionRate: 500, AccountRate: 3000, AccountBurst: 100})
	want = memstore.ThroughputLimits{PartitionRate: 500, PartitionBurst: 500, AccountRate: 3000, AccountBurst: 100}
	if got := st.Throughput().Limits; got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
	if got := memstore.New().Throughput(); !reflect.DeepEqual(got, memstore.ThroughputReport{}) {
		t.Fatalf("model off: report %+v, want the zero report", got)
	}

	for _, c := range []struct {
		l    memstore.ThroughputLimits
		want []string
	}{
		{memstore.ThroughputLimits{PartitionRate: -1}, []string{"PartitionRate is -1", "0 (the default) to 1000000000"}},
		{memstore.ThroughputLimits{AccountBurst: 1_000_000_001}, []string{"AccountBurst is 1000000001", "to 1000000000"}},
		{memstore.ThroughputLimits{PartitionRate: 99}, []string{"PartitionBurst is 99", "one second of PartitionRate", "at least 100"}},
		{memstore.ThroughputLimits{PartitionBurst: 50}, []string{"PartitionBurst is 50", "at least 100"}},
		{memstore.ThroughputLimits{AccountRate: 10}, []string{"AccountBurst is 10", "at least 100"}},
	} {
		err := c.l.Validate()
		var se *store.Error
		if !errors.As(err, &se) || se.Code != store.CodeInvalidInput || se.Source != store.SourceClient || !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("Validate(%+v) = %v, want an InvalidInput *store.Error from the client", c.l, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("Validate(%+v) = %q, want it to say %q", c.l, err, w)
			}
		}
		func() {
			defer func() {
				if r := recover(); r == nil || !reflect.DeepEqual(r, err) {
					t.Fatalf("New(WithThroughput(%+v)) panicked with %v, want %v", c.l, r, err)
				}
			}()
			memstore.New(memstore.WithThroughput(c.l))
		}()
	}
}

// TestThroughputPartitionBucket checks the partition bucket's arithmetic on
// a virtual clock: the burst, an exact refill, one bucket per partition and
// per table, and that every entity of a transaction counts.
func TestThroughputPartitionBucket(t *testing.T) {
	ctx := context.Background()
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{})
	// A new partition's bucket is full: 2,000 entities pass at once, as
	// 20 transactions of 100.
	for i := range 20 {
		if _, err := tbl.Transact(ctx, upserts("hot", i*100, 100)); err != nil {
			t.Fatalf("transaction %d of the burst: %v", i, err)
		}
	}
	_, err := tbl.Upsert(ctx, upserts("hot", 5000, 1)[0].Entity, store.Replace)
	wantBusy(t, err, "entity 2,001 at the same instant")

	// 50 ms earn 100 entities: one more transaction of 100, not 101.
	c.Advance(50 * time.Millisecond)
	if _, err := tbl.Transact(ctx, upserts("hot", 2000, 100)); err != nil {
		t.Fatalf("100 entities after 50 ms: %v", err)
	}
	_, err = tbl.Insert(ctx, upserts("hot", 5001, 1)[0].Entity)
	wantBusy(t, err, "entity 101 after 50 ms")
	// A transaction larger than the tokens is refused whole, though part
	// of it would fit: 0.5 ms earn exactly one entity.
	c.Advance(500 * time.Microsecond)
	_, err = tbl.Transact(ctx, upserts("hot", 2100, 2))
	wantBusy(t, err, "2 entities after 0.5 ms")
	if _, err := tbl.Transact(ctx, upserts("hot", 2100, 1)); err != nil {
		t.Fatalf("1 entity after 0.5 ms: %v", err)
	}
	c.Advance(499 * time.Microsecond)
	wantBusy(t, tbl.Delete(ctx, "hot", "000000", store.ETagAny), "a delete 0.499 ms later")

	// Other partitions, and the same PartitionKey in another table, have
	// buckets of their own.
	if _, err := tbl.Transact(ctx, upserts("cold", 0, 100)); err != nil {
		t.Fatalf("another partition: %v", err)
	}
	if err := st.CreateTable(ctx, "Other"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Table("Other").Transact(ctx, upserts("hot", 0, 100)); err != nil {
		t.Fatalf("the same PartitionKey in another table: %v", err)
	}

	// An idle second refills the bucket to its burst, no further.
	c.Advance(10 * time.Second)
	for i := range 20 {
		if _, err := tbl.Transact(ctx, upserts("hot", 3000+i*100, 100)); err != nil {
			t.Fatalf("after 10 idle seconds, transaction %d: %v", i, err)
		}
	}
	_, err = tbl.Transact(ctx, upserts("hot", 9000, 1))
	wantBusy(t, err, "entity 2,001 after 10 idle seconds")

	r := st.Throughput()
	hot := find(t, r, "Log", "hot")
	// 20 + 1 + 1 + 20 transactions served (4,101 entities), 5 refused;
	// the first second served 2,000 + 100 + 1.
	if hot.Requests != 47 || hot.Entities != 4101 || hot.Throttled != 5 || hot.AccountThrottled != 0 || hot.PeakRate != 2101 || !hot.Hot() {
		t.Fatalf("hot partition %+v, want 47 requests, 4,101 entities, 5 throttled, peak 2,101", hot)
	}
	if r.Requests != 49 || r.Entities != 4301 || r.Throttled != 5 || len(r.Hot()) != 1 || r.Partitions[0] != hot {
		t.Fatalf("totals %+v, want 49 requests, 4,301 entities, 5 throttled, one hot partition listed first", r)
	}
}

func find(t *testing.T, r memstore.ThroughputReport, table, pk string) memstore.PartitionStats {
	t.Helper()
	for _, p := range r.Partitions {
		if p.Table == table && p.PartitionKey == pk {
			return p
		}
	}
	t.Fatalf("no partition %s/%s in the report %+v", table, pk, r.Partitions)
	return memstore.PartitionStats{}
}

// TestThroughputAccountBucket checks the store-wide bucket: partitions
// under their own rate are refused once the account is over its rate.
func TestThroughputAccountBucket(t *testing.T) {
	ctx := context.Background()
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{AccountRate: 5000})
	for p := range 2 {
		for i := range 20 {
			if _, err := tbl.Transact(ctx, upserts(fmt.Sprint("p", p), i*100, 100)); err != nil {
				t.Fatalf("p%d transaction %d: %v", p, i, err)
			}
		}
	}
	for i := range 10 {
		if _, err := tbl.Transact(ctx, upserts("p2", i*100, 100)); err != nil {
			t.Fatalf("p2 transaction %d: %v", i, err)
		}
	}
	// 5,000 entities served: p2 has 1,000 tokens left, the account none.
	_, err := tbl.Transact(ctx, upserts("p2", 1000, 1))
	wantBusy(t, err, "the account's entity 5,001")
	if !strings.Contains(err.Error(), "account") {
		t.Fatalf("refusal %q does not say the account is over its rate", err)
	}
	_, err = tbl.Get(ctx, "p3", "x", nil)
	wantBusy(t, err, "a read in a fresh partition with the account empty")
	// The account refills at 5,000 per second: 20 ms earn 100.
	c.Advance(20 * time.Millisecond)
	if _, err := tbl.Transact(ctx, upserts("p2", 1000, 100)); err != nil {
		t.Fatalf("after 20 ms: %v", err)
	}
	_, err = tbl.Transact(ctx, upserts("p2", 1100, 1))
	wantBusy(t, err, "entity 101 of the account after 20 ms")

	r := st.Throughput()
	if r.AccountThrottled != 3 || r.Throttled != 3 || r.Entities != 5100 || r.PeakRate != 5100 {
		t.Fatalf("report %+v, want 3 refusals, all the account's, 5,100 entities, peak 5,100", r)
	}
	if p2 := find(t, r, "Log", "p2"); p2.AccountThrottled != 2 || p2.Throttled != 0 || p2.Hot() {
		t.Fatalf("p2 %+v: refused by the account, not hot itself", p2)
	}
	if len(r.Hot()) != 0 {
		t.Fatalf("hot partitions %+v, want none: the account was the limit", r.Hot())
	}
}

// TestThroughputReads checks what reads cost: a point read one entity
// (found or not), a query page the entities it returns (at least one),
// paid after it ran, which can leave the bucket in debt.
func TestThroughputReads(t *testing.T) {
	ctx := context.Background()
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{})
	// 1,200 rows in "a", 300 in "b", written over enough time to leave
	// both buckets full.
	for i := range 12 {
		if _, err := tbl.Transact(ctx, upserts("a", i*100, 100)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, err := tbl.Transact(ctx, upserts("b", i*100, 100)); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(time.Second)
	base := st.Throughput()

	if _, err := tbl.Get(ctx, "a", "000001", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, "a", "missing", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing row: %v", err)
	}
	a := find(t, st.Throughput(), "Log", "a")
	if a.Entities-find(t, base, "Log", "a").Entities != 2 {
		t.Fatalf("two point reads cost %d entities, want 2", a.Entities-find(t, base, "Log", "a").Entities)
	}

	// A partition query of 1,000 rows costs 1,000; one that matches
	// nothing costs 1.
	pa := filter.PK.Eq("a").String()
	page, err := tbl.Query(ctx, store.Query{Filter: pa})
	if err != nil || len(page.Entities) != 1000 {
		t.Fatalf("query: %d entities, %v", len(page.Entities), err)
	}
	if _, err := tbl.Query(ctx, store.Query{Filter: filter.And(filter.PK.Eq("a"), filter.RK.Eq("none")).String()}); err != nil {
		t.Fatal(err)
	}
	if got := find(t, st.Throughput(), "Log", "a").Entities - a.Entities; got != 1001 {
		t.Fatalf("a page of 1,000 and an empty page cost %d, want 1,001", got)
	}
	// 2,000 - 2 - 1,001 = 997 tokens left: the next page (the 200 rows
	// left) is admitted and paid in full, 997 - 200 = 797; the page after
	// a 1,000-row query leaves 797 - 1,000 = -203, a debt.
	page, err = tbl.Query(ctx, store.Query{Filter: pa, Continuation: page.Continuation})
	if err != nil || len(page.Entities) != 200 {
		t.Fatalf("second page: %d entities, %v", len(page.Entities), err)
	}
	if _, err := tbl.Query(ctx, store.Query{Filter: pa}); err != nil {
		t.Fatalf("query with 797 tokens: %v", err)
	}
	_, err = tbl.Get(ctx, "a", "000001", nil)
	wantBusy(t, err, "a point read in debt")
	_, err = tbl.Query(ctx, store.Query{Filter: pa})
	wantBusy(t, err, "a query in debt")
	// The debt of 203 and one token take 102 ms to earn (2 per ms).
	c.Advance(101 * time.Millisecond)
	_, err = tbl.Get(ctx, "a", "000001", nil)
	wantBusy(t, err, "a point read 101 ms later")
	c.Advance(time.Millisecond)
	if _, err := tbl.Get(ctx, "a", "000001", nil); err != nil {
		t.Fatalf("a point read 102 ms later: %v", err)
	}

	// A query over several partitions is admitted by the account alone
	// and each partition pays for its own rows, even "a", in debt.
	before := st.Throughput()
	page, err = tbl.Query(ctx, store.Query{Filter: filter.And(filter.PK.Ge("a"), filter.PK.Le("b"), filter.RK.Lt("000010")).String()})
	if err != nil || len(page.Entities) != 20 {
		t.Fatalf("cross-partition query: %d entities, %v", len(page.Entities), err)
	}
	after := st.Throughput()
	da := find(t, after, "Log", "a").Entities - find(t, before, "Log", "a").Entities
	db := find(t, after, "Log", "b").Entities - find(t, before, "Log", "b").Entities
	dr := find(t, after, "Log", "b").Requests - find(t, before, "Log", "b").Requests
	if da != 10 || db != 10 || dr != 1 || after.Entities-before.Entities != 20 || after.Requests-before.Requests != 1 {
		t.Fatalf("cross-partition query paid a %d, b %d (b requests +%d), account %d over %d requests; want 10, 10, +1, 20 over 1",
			da, db, dr, after.Entities-before.Entities, after.Requests-before.Requests)
	}
	_, err = tbl.Get(ctx, "a", "000002", nil)
	wantBusy(t, err, "a point read after the cross-partition query deepened the debt")
}

// TestThroughputRefusalLeavesNoTrace checks that a refused write did
// nothing: a seeded random mix of inserts, upserts, merges, deletes and
// transactions against a tight model, each compared with a model of the
// table that applies exactly the writes that were answered done.
func TestThroughputRefusalLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	const seed = 20261122
	rng := rand.New(rand.NewPCG(seed, 1))
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{PartitionRate: 300, PartitionBurst: 150, AccountRate: 800, AccountBurst: 400})
	want := map[string]int64{} // pk/rk -> N
	done, refused, failed := 0, 0, 0
	for op := range 3000 {
		c.Advance(time.Duration(rng.IntN(3)) * time.Millisecond)
		pk := fmt.Sprint("p", rng.IntN(4))
		var acts []store.Action
		for _, i := range rng.Perm(40)[:1+rng.IntN(max(1, rng.IntN(40)))] {
			rk := fmt.Sprintf("%02d", i)
			a := store.Action{Entity: store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int64(op)}}}
			switch rng.IntN(4) {
			case 0:
				a.Kind = store.ActionInsert
			case 1:
				a.Kind = store.ActionUpsertReplace
			case 2:
				a.Kind, a.IfMatch = store.ActionUpdateMerge, store.ETagAny
			default:
				a.Kind, a.IfMatch, a.Entity.Properties = store.ActionDelete, store.ETagAny, nil
			}
			acts = append(acts, a)
		}
		_, err := tbl.Transact(ctx, acts)
		switch {
		case err == nil:
			done++
			for _, a := range acts {
				k := pk + "/" + a.Entity.RowKey
				if a.Kind == store.ActionDelete {
					delete(want, k)
				} else {
					want[k] = int64(op)
				}
			}
		case errors.Is(err, store.ErrThrottled):
			wantBusy(t, err, fmt.Sprint("operation ", op))
			refused++
		case errors.Is(err, store.ErrAlreadyExists) || errors.Is(err, store.ErrNotFound):
			failed++ // the service's own refusal: nothing applied either
		default:
			t.Fatalf("operation %d: %v", op, err)
		}
		if op%250 == 249 || op == 2999 {
			got := readAll(t, tbl, c)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after operation %d the table holds %v, want %v", op, got, want)
			}
		}
	}
	r := st.Throughput()
	t.Logf("seed %d: 3000 transactions: %d done, %d refused with 503, %d refused by a rule; model: %d throttled (%d by the account); lost 0, half-applied 0",
		seed, done, refused, failed, r.Throttled, r.AccountThrottled)
	if refused == 0 || done == 0 || r.AccountThrottled == 0 || r.Throttled == r.AccountThrottled {
		t.Fatalf("the schedule did not exercise both buckets: %d done, %d refused, report %+v", done, refused, r)
	}
}

// TestThroughputBulkWriterOutcomes writes through the bulk writer, without
// retries, into a partition that cannot take it all: every write is
// reported written or failed with ServerBusy, and the table holds exactly
// the written ones.
func TestThroughputBulkWriterOutcomes(t *testing.T) {
	ctx := context.Background()
	_, tbl, c := modelStore(t, memstore.ThroughputLimits{})
	var writes []store.Action
	for p := range 3 {
		writes = append(writes, upserts(fmt.Sprint("p", p), 0, 2500)...)
	}
	res, err := store.NewBulkWriter(tbl, store.BulkOptions{MaxAttempts: 1}).Write(ctx, writes)
	if err == nil || res.Unknown != 0 || res.Written != 6000 || res.Failed != 1500 {
		t.Fatalf("bulk write: %d written, %d failed, %d unknown (%v); want 6,000, 1,500, 0", res.Written, res.Failed, res.Unknown, err)
	}
	written := map[string]bool{}
	for i, o := range res.Outcomes {
		if o.Err == nil {
			written[writes[i].Entity.PartitionKey+"/"+writes[i].Entity.RowKey] = true
		} else if !errors.Is(o.Err, store.ErrThrottled) {
			t.Fatalf("write %d: %v, want ServerBusy", i, o.Err)
		}
	}
	got := readAll(t, tbl, c)
	if len(got) != len(written) {
		t.Fatalf("the table holds %d rows, %d were reported written", len(got), len(written))
	}
	for k := range got {
		if !written[k] {
			t.Fatalf("%s is stored but was reported failed", k)
		}
	}
}

// readAll reads the whole table a page of 100 at a time, letting a second
// pass before each page so that the model serves it.
func readAll(t *testing.T, tbl store.Table, c *vclock) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	q := store.Query{Top: 100}
	for {
		c.Advance(time.Second)
		page, err := tbl.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		for _, e := range page.Entities {
			got[e.PartitionKey+"/"+e.RowKey] = e.Properties["N"].(int64)
		}
		if page.Continuation == "" {
			return got
		}
		q.Continuation = page.Continuation
	}
}

// TestThroughputReport checks the report's order, peak window and times.
func TestThroughputReport(t *testing.T) {
	ctx := context.Background()
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{})
	t0 := c.Now()
	write := func(pk string, n int) error {
		var err error
		for i := 0; i < n && err == nil; i += 100 {
			_, err = tbl.Transact(ctx, upserts(pk, i, min(100, n-i)))
		}
		return err
	}
	// "slide": 1,000 at 0 s, 1,000 at 0.95 s, 1,000 at 1.0 s. Any one
	// second holds at most 2,000 of them: the window must drop the first
	// 1,000 by 1.0 s.
	must(t, write("slide", 1000))
	c.Advance(950 * time.Millisecond)
	must(t, write("slide", 1000))
	c.Advance(50 * time.Millisecond)
	must(t, write("slide", 1000))
	// "busy" is refused twice, "warm" once; "cold" and "Cold" are read
	// once each (found or not, a read costs one).
	must(t, write("busy", 2000))
	wantBusy(t, write("busy", 1), "busy")
	wantBusy(t, write("busy", 1), "busy")
	must(t, write("warm", 2000))
	wantBusy(t, write("warm", 1), "warm")
	c.Advance(time.Minute)
	_, _ = tbl.Get(ctx, "cold", "x", nil)
	_, _ = tbl.Get(ctx, "Cold", "x", nil)

	r := st.Throughput()
	var order []string
	for _, p := range r.Partitions {
		order = append(order, fmt.Sprintf("%s:%d/%d/%d/%d", p.PartitionKey, p.Requests, p.Entities, p.Throttled, p.PeakRate))
	}
	want := []string{"busy:22/2000/2/2000", "warm:21/2000/1/2000", "slide:30/3000/0/2000", "Cold:1/1/0/1", "cold:1/1/0/1"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("partitions (pk:requests/entities/throttled/peak) %v, want %v", order, want)
	}
	if hot := r.Hot(); len(hot) != 2 || hot[0].PartitionKey != "busy" || hot[1].PartitionKey != "warm" {
		t.Fatalf("hot partitions %+v, want busy and warm", hot)
	}
	slide := find(t, r, "Log", "slide")
	if !slide.First.Equal(t0) || !slide.Last.Equal(t0.Add(time.Second)) {
		t.Fatalf("slide first %v last %v, want %v and a second later", slide.First, slide.Last, t0)
	}
	if r.Requests != 75 || r.Entities != 7002 || r.Throttled != 3 || r.PeakRate != 6000 {
		t.Fatalf("totals %+v, want 75 requests, 7,002 entities, 3 throttled, peak 6,000", r)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestThroughputDeterministic runs a seeded random schedule of writes,
// reads and clock steps twice: the answers and the reports are the same.
func TestThroughputDeterministic(t *testing.T) {
	run := func() ([]string, memstore.ThroughputReport) {
		ctx := context.Background()
		st, tbl, c := modelStore(t, memstore.ThroughputLimits{PartitionRate: 400, AccountRate: 1800, AccountBurst: 900})
		rng := rand.New(rand.NewPCG(7, 7))
		var answers []string
		for i := range 2000 {
			c.Advance(time.Duration(rng.IntN(10000)) * time.Microsecond)
			pk := fmt.Sprint("p", max(0, rng.IntN(8)-3)) // p0 gets half the requests
			var err error
			switch rng.IntN(3) {
			case 0:
				_, err = tbl.Transact(ctx, upserts(pk, rng.IntN(500), 1+rng.IntN(30)))
			case 1:
				_, err = tbl.Get(ctx, pk, fmt.Sprintf("%06d", rng.IntN(600)), nil)
			default:
				_, err = tbl.Query(ctx, store.Query{Filter: filter.PK.Eq(pk).String(), Top: 1 + rng.IntN(60)})
			}
			answers = append(answers, fmt.Sprint(i, store.Code(err)))
		}
		return answers, st.Throughput()
	}
	a1, r1 := run()
	a2, r2 := run()
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(r1, r2) {
		t.Fatalf("two runs of one schedule differ:\n%+v\n%+v", r1, r2)
	}
	if r1.Throttled == 0 || r1.AccountThrottled == 0 || r1.Throttled == r1.AccountThrottled {
		t.Fatalf("the schedule did not exercise both buckets: %+v", r1)
	}
	t.Logf("2000 requests, twice: %d throttled (%d by the account), %d entities served, identical answers and reports",
		r1.Throttled, r1.AccountThrottled, r1.Entities)
}

// TestThroughputConcurrent hits one partition from many goroutines at a
// frozen instant: exactly the burst is served, never more.
func TestThroughputConcurrent(t *testing.T) {
	ctx := context.Background()
	st, tbl, _ := modelStore(t, memstore.ThroughputLimits{})
	const workers, each = 8, 500
	var served sync.WaitGroup
	var mu sync.Mutex
	ok, busy := 0, 0
	for w := range workers {
		served.Go(func() {
			for i := range each {
				_, err := tbl.Upsert(ctx, store.Entity{PartitionKey: "hot", RowKey: fmt.Sprintf("%d-%d", w, i)}, store.Replace)
				if _, gerr := tbl.Get(ctx, "other", "x", nil); gerr != nil && !errors.Is(gerr, store.ErrNotFound) && !errors.Is(gerr, store.ErrThrottled) {
					t.Errorf("get: %v", gerr)
				}
				mu.Lock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, store.ErrThrottled):
					busy++
				default:
					t.Errorf("upsert: %v", err)
				}
				mu.Unlock()
			}
		})
	}
	served.Wait()
	r := st.Throughput()
	hot := find(t, r, "Log", "hot")
	if ok != 2000 || busy != workers*each-2000 || hot.Entities != 2000 || hot.Throttled != int64(busy) || hot.Requests != workers*each {
		t.Fatalf("%d served, %d refused; partition %+v; want exactly the burst of 2,000 served", ok, busy, hot)
	}
	if other := find(t, r, "Log", "other"); other.Entities != 2000 || other.Requests != workers*each {
		t.Fatalf("reads of another partition %+v, want 2,000 served of %d", other, workers*each)
	}
	t.Logf("%d goroutines x %d upserts and %d reads at one instant: %d served, %d refused; the account served %d",
		workers, each, each, ok, busy, r.Entities)
}

// TestThroughputClockBack checks that a clock going back earns nothing
// and breaks nothing.
func TestThroughputClockBack(t *testing.T) {
	ctx := context.Background()
	st, tbl, c := modelStore(t, memstore.ThroughputLimits{})
	must(t, func() error { _, err := tbl.Transact(ctx, upserts("p", 0, 100)); return err }())
	c.Advance(-time.Hour)
	for i := 1; i < 20; i++ {
		must(t, func() error { _, err := tbl.Transact(ctx, upserts("p", i*100, 100)); return err }())
	}
	_, err := tbl.Transact(ctx, upserts("p", 5000, 1))
	wantBusy(t, err, "an hour back")
	c.Advance(time.Hour + 50*time.Millisecond) // 50 ms after the last refill
	must(t, func() error { _, err := tbl.Transact(ctx, upserts("p", 2000, 100)); return err }())
	if p := find(t, st.Throughput(), "Log", "p"); p.Entities != 2100 || p.PeakRate != 2100 {
		t.Fatalf("partition %+v, want 2,100 entities in one window", p)
	}
}

// TestThroughputWithFaults checks that a write whose answer was lost pays
// for its read-back: memstore resolves it with a point read, as azstore
// does, and the model counts that read.
func TestThroughputWithFaults(t *testing.T) {
	ctx := context.Background()
	var n int
	c := newVClock()
	st := memstore.New(memstore.WithClock(c.Now), memstore.WithThroughput(memstore.ThroughputLimits{}),
		memstore.WithFaults(func(op memstore.Operation, table string) error {
			if op == memstore.OpInsert {
				n++
				if n == 1 {
					return memstore.AfterApply(memstore.ResponseLost())
				}
			}
			return nil
		}))
	must(t, st.CreateTable(ctx, "Log"))
	if _, err := st.Table("Log").Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatalf("an insert whose answer was lost resolves as done: %v", err)
	}
	if p := find(t, st.Throughput(), "Log", "p"); p.Requests != 2 || p.Entities != 2 {
		t.Fatalf("partition %+v, want the insert and its read-back", p)
	}
}
