package logtail

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// entityOnly is a table without the typed lane (store.TypedTable): reads
// through it take the store.Entity route.
type entityOnly struct{ store.Table }

// benchRows is the size of the benchmark's big partition.
const benchRows = 100_000

// fillPartition stores n events of partition pk, one second apart, through
// the bulk writer (the keys are the stream's own), and returns their keys.
func fillPartition(b *testing.B, tbl store.Table, pk string, n int) []string {
	b.Helper()
	s, err := New[claim](tbl, pk, nil)
	if err != nil {
		b.Fatal(err)
	}
	ks := make([]string, n)
	actions := make([]store.Action, n)
	for i := range n {
		if ks[i], err = s.newKey(t0.Add(time.Duration(i) * time.Second)); err != nil {
			b.Fatal(err)
		}
		actions[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: ks[i],
			Properties: map[string]any{"Amount": float64(i), "Note": "taxi"}}}
	}
	if _, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(context.Background(), actions); err != nil {
		b.Fatal(err)
	}
	return ks
}

// latestCases are the cases of the log tail benchmark on st: the baseline,
// a typed point get of a random event of the big partition; Latest(10) of
// that partition; the same over the table without its typed lane (the
// page decoded from store.Entity values); Latest(10) of a partition of
// 1,000 events (the cost must not grow with the partition); and the store
// query Latest sends, without the stream's decoding.
func latestCases(b *testing.B, st store.Store, table string) (interleave.Case, []interleave.Case) {
	ctx := context.Background()
	tbl := st.Table(table)
	big := fillPartition(b, tbl, "big", benchRows)
	fillPartition(b, tbl, "small", 1000)
	sBig, err := New[claim](tbl, "big", nil)
	if err != nil {
		b.Fatal(err)
	}
	sSmall, _ := New[claim](tbl, "small", nil)
	// The same stream over the table without its typed lane: each page
	// comes back as store.Entity values, decoded into claims after.
	sEntity, _ := New[claim](entityOnly{tbl}, "big", nil)
	repo := mapper.NewRepository[claim](st, table)
	check := func(evs []Event[claim], err error, top float64) error {
		if err == nil && (len(evs) != 10 || evs[0].Value.Amount != top) {
			err = fmt.Errorf("Latest(10) returned %d events", len(evs))
		}
		return err
	}
	base := interleave.Case{Name: "pointget", Op: func(i int) error {
		_, err := repo.Get(ctx, "big", big[(i*7919)%benchRows])
		return err
	}}
	q := store.Query{Filter: sBig.all, Top: 10}
	return base, []interleave.Case{
		{Name: "latest10", Op: func(int) error { evs, err := sBig.Latest(ctx, 10); return check(evs, err, benchRows-1) }},
		{Name: "latest10entity", Op: func(int) error { evs, err := sEntity.Latest(ctx, 10); return check(evs, err, benchRows-1) }},
		{Name: "latest10small", Op: func(int) error { evs, err := sSmall.Latest(ctx, 10); return check(evs, err, 999) }},
		{Name: "query10", Op: func(int) error { _, err := tbl.Query(ctx, q); return err }},
	}
}

// BenchmarkLatest10 measures Latest(10) on a partition of 100,000 events
// on memstore, interleaved with its baseline in short rounds. Run it once:
//
//	go test -run '^$' -bench 'Latest10$' -benchtime 1x ./patterns/logtail/
func BenchmarkLatest10(b *testing.B) {
	st := memstore.New()
	if err := st.CreateTable(context.Background(), "Expenses"); err != nil {
		b.Fatal(err)
	}
	runLatest(b, st, "Expenses", interleave.Config{Rounds: 21})
}

// BenchmarkLatest10Azurite is the same on Azurite, over HTTP:
//
//	scripts/with-azurite.sh go test -run '^$' -bench Latest10Azurite -benchtime 1x ./patterns/logtail/
func BenchmarkLatest10Azurite(b *testing.B) {
	st, err := azstore.NewFromConnectionString(azuritetest.Conn(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	table := fmt.Sprintf("Expenses%d", time.Now().UnixNano()%1_000_000_000)
	if err := st.CreateTable(context.Background(), table); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(context.Background(), table)
	runLatest(b, st, table, interleave.Config{Rounds: 15, Slice: 200 * time.Millisecond})
}

// BenchmarkLatest10AzuriteRTT is BenchmarkLatest10Azurite with every
// request delayed by 5 ms through a loopback proxy, as a network round
// trip to the service delays it:
//
//	scripts/with-azurite.sh go test -run '^$' -bench Latest10AzuriteRTT -benchtime 1x -timeout 30m ./patterns/logtail/
func BenchmarkLatest10AzuriteRTT(b *testing.B) {
	st := backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store
	table := fmt.Sprintf("Expenses%d", time.Now().UnixNano()%1_000_000_000)
	if err := st.CreateTable(context.Background(), table); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(context.Background(), table)
	runLatest(b, st, table, interleave.Config{Rounds: 15, Slice: 200 * time.Millisecond})
}

func runLatest(b *testing.B, st store.Store, table string, cfg interleave.Config) {
	base, cases := latestCases(b, st, table)
	b.ResetTimer()
	for range b.N {
		rep, err := interleave.Measure(cfg, base, cases...)
		if err != nil {
			b.Fatal(err)
		}
		rep.Metrics(b.ReportMetric)
		b.Log("\n" + rep.Table())
	}
}
