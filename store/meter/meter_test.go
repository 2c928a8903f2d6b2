package meter_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/meter"
)

// transport counts memstore's requests where its engine plays the
// service: its fault schedule is asked once per request.
type transport struct {
	requests atomic.Int64
	mu       sync.Mutex
	plan     map[memstore.Operation][]error // faults to hand out, in order
}

func (tr *transport) faults(op memstore.Operation, table string) error {
	tr.requests.Add(1)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if q := tr.plan[op]; len(q) > 0 {
		tr.plan[op] = q[1:]
		return q[0]
	}
	return nil
}

func (tr *transport) inject(op memstore.Operation, errs ...error) {
	tr.mu.Lock()
	tr.plan[op] = append(tr.plan[op], errs...)
	tr.mu.Unlock()
}

// workload is the scripted workload: 5 inserts, one batch of 10, a
// 3-page query of the 15 rows, a throttled insert (503, refused, not
// retried), an upsert answered with a 500 (its outcome unknown, so
// memstore sends it again), and a get refused before sending (bad key).
func workload(t *testing.T, st store.Store, inject func(op memstore.Operation, errs ...error)) {
	t.Helper()
	ctx := context.Background()
	if err := st.CreateTable(ctx, "Orders"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("Orders")
	for i := range 5 {
		if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("a%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var batch []store.Action
	for i := range 10 {
		batch = append(batch, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("b%02d", i)}})
	}
	if _, err := tbl.Transact(ctx, batch); err != nil {
		t.Fatal(err)
	}
	pages, rows := 0, 0
	for q := (store.Query{Top: 6}); ; {
		p, err := tbl.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		rows += len(p.Entities)
		if q.Continuation = p.Continuation; q.Continuation == "" {
			break
		}
	}
	if pages != 3 || rows != 15 {
		t.Fatalf("query: %d pages, %d rows; want 3, 15", pages, rows)
	}
	inject(memstore.OpInsert, memstore.ServerBusy())
	if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "busy"}); !errors.Is(err, store.ErrThrottled) {
		t.Fatalf("throttled insert: %v", err)
	}
	inject(memstore.OpUpsert, memstore.InternalError())
	if _, err := tbl.Upsert(ctx, store.Entity{PartitionKey: "p", RowKey: "u"}, store.Merge); err != nil {
		t.Fatalf("retried upsert: %v", err)
	}
	if _, err := tbl.Get(ctx, "p", "bad/key", nil); err == nil {
		t.Fatal("a bad key was accepted")
	}
}

func TestMeterMatchesTransportMemstore(t *testing.T) {
	tr := &transport{plan: map[memstore.Operation][]error{}}
	st, m := meter.Wrap(memstore.New(memstore.WithFaults(tr.faults)))
	workload(t, st, tr.inject)

	total := m.Total()
	t.Logf("\n%s", m)
	if total.Requests != tr.requests.Load() {
		t.Errorf("meter counted %d requests, the transport %d", total.Requests, tr.requests.Load())
	}
	// create 1 + inserts 5 + batch 1 + pages 3 + throttled 1 + upsert 2.
	want := meter.Count{Calls: 12, Requests: 13, Billed: 12, OK: 11, ServerErrors: 1, Throttled: 1}
	if total != want {
		t.Errorf("total %+v\nwant  %+v", total, want)
	}
	if c := m.Op("Table.Transact"); c.Billed != 1 {
		t.Errorf("a batch of 10 billed %d, want 1", c.Billed)
	}
	if c := m.Op("Table.Query"); c.Billed != 3 {
		t.Errorf("a 3-page query billed %d, want 3", c.Billed)
	}
	if c := m.Op("Table.Upsert"); c.Requests != 2 || c.Retries() != 1 || c.Billed != 2 {
		t.Errorf("retried upsert: %+v", c)
	}
	if c := m.Op("Table.Insert"); c.Throttled != 1 || c.Billed != 5 {
		t.Errorf("inserts: %+v", c)
	}
	if c := m.Of("Orders"); c != want {
		t.Errorf("per table %+v", c)
	}
}

// The typed lane is kept and counted as its entity-lane twin.
func TestMeterKeepsTypedLane(t *testing.T) {
	st, m := meter.Wrap(memstore.New())
	ctx := context.Background()
	if _, err := st.CreateTableIfNotExists(ctx, "Things"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("Things")
	tt, ok := driver.Typed(tbl)
	if !ok {
		t.Fatal("the wrapped table lost the typed lane")
	}
	if _, err := tt.Write(ctx, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(1)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, "p", "missing", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if c := m.Op("Table.Upsert"); c.Billed != 1 {
		t.Errorf("typed upsert: %+v", c)
	}
	if c := m.Op("Table.Get"); c.Billed != 1 || c.ClientErrors != 1 {
		t.Errorf("a 404 get is billed: %+v", c)
	}
	if _, ok := driver.Typed(memstore.New().Table("x")); !ok {
		t.Fatal("memstore lost the typed lane")
	}
}

// A queue's requests are counted at the wrapper when the backend reports
// none.
func TestMeterQueue(t *testing.T) {
	st, m := meter.Wrap(memstore.New())
	ctx := context.Background()
	q := st.Queue("jobs")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Put(ctx, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if c := m.Sum(func(k meter.Key) bool { return k.Service == "queue" }); c.Billed != 2 {
		t.Errorf("queue: %+v", c)
	}
}
