package model_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// BenchmarkModel measures what the model's declarations cost against
// the plain repository, interleaved in short rounds:
//
//   - an insert of an entity with a unique index in its partition, an
//     index in another partition and a denormalized copy elsewhere,
//     against Repository.Insert (one round trip), beside the model's
//     requests sent without the model: a Table.Transact of the rows its
//     transaction writes in the partition (partitionRows), alone and with
//     the claim's insert sent beside it;
//   - a lookup through the index in the entity's partition (FindIn) and
//     through a unique index in another partition (Find, read-your-writes
//     included), against Repository.Get.
//
// Run it with
//
//	go test -run '^$' -bench '^BenchmarkModel$/memstore' -benchtime 1x -v ./model/
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkModel$/azurite-rtt5ms' -benchtime 1x -v ./model/
//
// azurite-rtt5ms goes through a loopback proxy that holds every answer
// for 5 ms, as a round trip to the service does.
func BenchmarkModel(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { benchModel(b, memstore.New(), 40*time.Millisecond, 15) })
	b.Run("azurite", func(b *testing.B) { benchModel(b, backendtest.Azurite(b).Store, 300*time.Millisecond, 15) })
	b.Run("azurite-rtt5ms", func(b *testing.B) {
		benchModel(b, backendtest.AzuriteBehindDelay(b, 5*time.Millisecond).Store, 400*time.Millisecond, 15)
	})
}

func benchModel(b *testing.B, st store.Store, slice time.Duration, rounds int) {
	ctx := context.Background()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	plainName, modelName, cardName := "BenchPlain"+suffix, "BenchModel"+suffix, "BenchCards"+suffix
	bareName := "BenchBare" + suffix
	for _, t := range []string{plainName, modelName, cardName, bareName} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		defer st.DeleteTable(context.WithoutCancel(ctx), t)
	}
	eng, err := eventual.New(st, "bench"+suffix, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	plain := mapper.NewRepository[Employee](st, plainName)
	card := func(e *Employee) (string, string) { return "cards", mustJoin(e.Dept, e.ID) }
	m, err := model.Define(st, modelName, &model.Options{Engine: eng},
		model.Unique("badge", func(e *Employee) string { return e.Badge }),
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }),
		model.CopyTo("card", cardName, card, "Email", "LastName"))
	if err != nil {
		b.Fatal(err)
	}
	// A second model over the same table for the lookup through a unique
	// index in another partition.
	mu, err := model.Define(st, modelName+"u", &model.Options{Engine: eng},
		model.GlobalUnique("email", func(e *Employee) string { return e.Email }))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.CreateTable(ctx, modelName+"u"); err != nil {
		b.Fatal(err)
	}
	defer st.DeleteTable(context.WithoutCancel(ctx), modelName+"u")
	mk := func(prefix string, i int) *Employee {
		id := fmt.Sprintf("%s%08d", prefix, i)
		return &Employee{Dept: "d" + id[len(id)-1:], ID: id, Badge: "b" + id,
			LastName: "L" + id, Email: id + "@example.com", N: i}
	}
	bare := st.Table(bareName)
	if err := seedFences(ctx, bare); err != nil {
		b.Fatal(err)
	}
	cfg := interleave.Config{Rounds: rounds, Slice: slice}
	ins, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Insert", Op: func(i int) error { return plain.Insert(ctx, mk("p", i)) }},
		interleave.Case{Name: "Table.Transact of the model's partition rows", Op: func(i int) error {
			_, err := bare.Transact(ctx, partitionRows(bareName, cardName, mk("t", i), int64(i+2)))
			return err
		}},
		interleave.Case{Name: "the same, and a claim insert sent beside it", Op: func(i int) error {
			e := mk("c", i)
			done := make(chan error, 1)
			go func() {
				_, err := bare.Insert(ctx, claimRow(bareName, e))
				done <- err
			}()
			_, err := bare.Transact(ctx, partitionRows(bareName, cardName, e, int64(i+2)))
			if cerr := <-done; err == nil {
				err = cerr
			}
			return err
		}},
		interleave.Case{Name: "model Insert (unique here, index elsewhere, a copy)", Op: func(i int) error { return m.Insert(ctx, mk("m", i)) }},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", ins.Table())
	const n = 300
	for i := range n {
		if err := plain.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
		if err := m.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
		if err := mu.Insert(ctx, mk("g", i)); err != nil {
			b.Fatal(err)
		}
	}
	look, err := interleave.Measure(cfg,
		interleave.Case{Name: "Repository.Get", Op: func(i int) error {
			e := mk("g", i%n)
			_, err := plain.Get(ctx, e.Dept, e.ID)
			return err
		}},
		interleave.Case{Name: "FindIn (unique index in the partition)", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := m.FindIn(ctx, e.Dept, "badge", e.Badge)
			if err == nil && got.ID != e.ID {
				return fmt.Errorf("found %s, want %s", got.ID, e.ID)
			}
			return err
		}},
		interleave.Case{Name: "Find (unique index in another partition)", Op: func(i int) error {
			e := mk("g", i%n)
			got, err := mu.Find(ctx, "email", e.Email)
			if err == nil && got.ID != e.ID {
				return fmt.Errorf("found %s, want %s", got.ID, e.ID)
			}
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", look.Table())
	mi, _ := ins.Row("model Insert (unique here, index elsewhere, a copy)")
	tx, _ := ins.Row("the same, and a claim insert sent beside it")
	fi, _ := look.Row("FindIn (unique index in the partition)")
	fg, _ := look.Row("Find (unique index in another partition)")
	b.ReportMetric(mi.WallRatio.Median, "insert-x")
	b.ReportMetric(mi.CPURatio.Median, "insert-cpu-x")
	b.ReportMetric(tx.WallRatio.Median, "requests-x")
	b.ReportMetric(fi.WallRatio.Median, "findin-x")
	b.ReportMetric(fg.WallRatio.Median, "find-x")
}

// partitionRows are the rows the model's transaction writes in e's
// partition when it inserts e (BenchmarkModel's declaration), with
// the same keys and properties, as a program without the model would
// write them: the partition's fence and tail, the entity, its unique
// copy, and an outbox row holding the intent as JSON. The fence is
// merged over whatever is there (the model replaces it over the ETag
// it remembers).
func partitionRows(table, cards string, e *Employee, v int64) []store.Action {
	props := map[string]any{"Badge": e.Badge, "Email": e.Email, "LastName": e.LastName, "N": int32(e.N), "Team": e.Team,
		"TkSum": "Dr9Gi3OgNyiOk8Ibv9ztJwb2", "TkVersion": v}
	cp := maps.Clone(props)
	cp["TkID"] = e.ID
	src := map[string]string{"Table": table, "PartitionKey": e.Dept, "RowKey": mustJoin("e", e.ID)}
	intent, _ := json.Marshal(map[string]any{"op": map[string]any{"source": src, "version": v, "steps": []map[string]any{
		{"kind": "model:" + table, "table": table, "entity": map[string]any{"PartitionKey": mustJoin("x", "lastname", e.LastName),
			"RowKey": mustJoin(table, e.Dept, e.ID), "Badge": e.Badge, "Email": e.Email, "LastName": e.LastName,
			"N@odata.type": "Edm.Int64", "N": fmt.Sprint(e.N), "Team": e.Team, "TkSrcPK": e.Dept, "TkSrcRK": src["RowKey"], "TkSrcTable": table},
			"data": "eyJpIjoibGFzdG5hbWUiLCJhIjoicHV0IiwidCI6IkRTR0FENERLSFlTTFFUSEtDUDdWQ05YVDNFIn0="},
		{"kind": "model:" + table, "table": cards, "entity": map[string]any{"PartitionKey": "cards", "RowKey": mustJoin(e.Dept, e.ID),
			"Email": e.Email, "LastName": e.LastName}, "data": "eyJpIjoiY2FyZCIsImEiOiJjcHV0In0="}}}})
	row := func(kind store.ActionKind, rk string, p map[string]any) store.Action {
		return store.Action{Kind: kind, Entity: store.Entity{PartitionKey: e.Dept, RowKey: rk, Properties: p}}
	}
	return []store.Action{
		row(store.ActionUpsertMerge, partition.FenceKey, map[string]any{"Version": v, "Writers": []byte(e.ID + "," + e.ID + "," + e.ID)}),
		row(store.ActionUpsertReplace, partition.TailKey, map[string]any{"Version": v}),
		row(store.ActionInsert, mustJoin("e", e.ID), props),
		row(store.ActionInsert, mustJoin("u", "badge", e.Badge), cp),
		row(store.ActionInsert, partition.OutboxPrefix+e.ID, map[string]any{"Attempts": int32(0), "Body": intent,
			"ClaimedUntil": time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), "Created": time.Now().UTC(), "Request": e.ID,
			"Topic": "bench", "Version": v}),
	}
}

// claimRow is the bare claim of e's last name, as the model inserts it
// in the index table.
func claimRow(table string, e *Employee) store.Entity {
	return store.Entity{PartitionKey: mustJoin("x", "lastname", e.LastName), RowKey: mustJoin(table, e.Dept, e.ID),
		Properties: map[string]any{model.ClaimProperty: e.ID + e.ID, model.ClaimedProperty: time.Now().UTC(), "TkVersion": int64(0),
			model.SourceTableProperty: table, model.SourcePartitionProperty: e.Dept, model.SourceRowProperty: mustJoin("e", e.ID)}}
}

// seedFences writes the fence rows of the ten partitions of the
// benchmarks' entities, which partitionRows merge over.
func seedFences(ctx context.Context, t store.Table) error {
	for d := range 10 {
		_, err := t.Insert(ctx, store.Entity{PartitionKey: fmt.Sprintf("d%d", d), RowKey: partition.FenceKey,
			Properties: map[string]any{"Version": int64(1)}})
		if err != nil {
			return err
		}
	}
	return nil
}

// edm is action a as an aztables transaction action, its body from
// json.Marshal of an aztables.EDMEntity, as an aztables user writes it.
func edm(a store.Action) (aztables.TransactionAction, error) {
	p := make(map[string]any, len(a.Entity.Properties))
	for k, v := range a.Entity.Properties {
		switch x := v.(type) {
		case int64:
			p[k] = aztables.EDMInt64(x)
		case []byte:
			p[k] = aztables.EDMBinary(x)
		case time.Time:
			p[k] = aztables.EDMDateTime(x)
		default:
			p[k] = v
		}
	}
	body, err := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: a.Entity.PartitionKey, RowKey: a.Entity.RowKey}, Properties: p})
	kind := map[store.ActionKind]aztables.TransactionType{store.ActionUpsertMerge: aztables.TransactionTypeInsertMerge,
		store.ActionUpsertReplace: aztables.TransactionTypeInsertReplace, store.ActionInsert: aztables.TransactionTypeAdd}[a.Kind]
	return aztables.TransactionAction{ActionType: kind, Entity: body}, err
}

// BenchmarkModelCPU measures the client's CPU time of the insert of
// BenchmarkModel (a unique index in the partition, an index in another
// partition, a copy in another table) against Azurite on loopback, with
// no proxy, interleaved in rounds against what a careful aztables user
// writes by hand:
//
//   - the baseline: one aztables transaction of the rows the model's
//     transaction writes in the entity's partition (partitionRows: the
//     fence, the tail, the entity, its unique copy, an outbox row holding
//     the intent as JSON), each body from json.Marshal of an
//     aztables.EDMEntity;
//   - the same transaction with the model's two other requests, written
//     by hand too: the claim of the index value (an aztables AddEntity,
//     sent beside the transaction) and the message (an azqueue
//     EnqueueMessage, after both);
//   - the model's Insert, then Engine.Flush, so that the message it
//     queues after the call returned is counted in its own slice;
//   - the same on a store whose HTTP transport is azstore.FastTransport
//     (the option for services bound by client CPU).
//
// CPU time is the process's (user and system, every goroutine, from
// getrusage: internal/interleave); Azurite runs in another process. Run
// it with
//
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkModelCPU$' -benchtime 1x -v ./model/
func BenchmarkModelCPU(b *testing.B) {
	ctx := context.Background()
	conn := azuritetest.Conn(b)
	st := backendtest.Azurite(b).Store
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	handName, modelName, cardName := "BenchHand"+suffix, "BenchModelCPU"+suffix, "BenchCardsCPU"+suffix
	fastName := "BenchModelFast" + suffix
	for _, t := range []string{handName, modelName, cardName, fastName} {
		if err := st.CreateTable(ctx, t); err != nil {
			b.Fatal(err)
		}
		defer st.DeleteTable(context.WithoutCancel(ctx), t)
	}
	if err := seedFences(ctx, st.Table(handName)); err != nil {
		b.Fatal(err)
	}
	eng, err := eventual.New(st, "benchcpu"+suffix, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	card := func(e *Employee) (string, string) { return "cards", mustJoin(e.Dept, e.ID) }
	define := func(st store.Store, table string, eng *eventual.Engine) *model.Model[Employee] {
		m, err := model.Define(st, table, &model.Options{Engine: eng},
			model.Unique("badge", func(e *Employee) string { return e.Badge }),
			model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }),
			model.CopyTo("card", cardName, card, "Email", "LastName"))
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	m := define(st, modelName, eng)
	fast, err := azstore.NewFromConnectionString(conn, &azstore.Options{Transport: azstore.FastTransport(),
		Services: []azstore.Service{azqueues.Service(), azblobs.Service()}})
	if err != nil {
		b.Fatal(err)
	}
	fastEng, err := eventual.New(fast, "benchfast"+suffix, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := fastEng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	mf := define(fast, fastName, fastEng)
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	hand := svc.NewClient(handName)
	qsvc, err := azqueue.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	q := qsvc.NewQueueClient("benchhand" + suffix)
	if _, err := q.Create(ctx, nil); err != nil {
		b.Fatal(err)
	}
	defer q.Delete(context.WithoutCancel(ctx), nil)
	mk := func(prefix string, i int) *Employee {
		id := fmt.Sprintf("%s%08d", prefix, i)
		return &Employee{Dept: "d" + id[len(id)-1:], ID: id, Badge: "b" + id,
			LastName: "L" + id, Email: id + "@example.com", N: i}
	}
	handTx := func(e *Employee, v int64) ([]aztables.TransactionAction, error) {
		rows := partitionRows(handName, cardName, e, v)
		acts := make([]aztables.TransactionAction, len(rows))
		for j, r := range rows {
			a, err := edm(r)
			if err != nil {
				return nil, err
			}
			acts[j] = a
		}
		return acts, nil
	}
	cfg := interleave.Config{Rounds: 15, Slice: 300 * time.Millisecond}
	rep, err := interleave.Measure(cfg,
		interleave.Case{Name: "aztables transaction of the partition's rows", Op: func(i int) error {
			acts, err := handTx(mk("h", i), int64(i+2))
			if err != nil {
				return err
			}
			_, err = hand.SubmitTransaction(ctx, acts, nil)
			return err
		}},
		interleave.Case{Name: "aztables: the transaction, the claim beside it, the message", Op: func(i int) error {
			e := mk("s", i)
			acts, err := handTx(e, int64(i+2))
			if err != nil {
				return err
			}
			claim, err := edm(store.Action{Kind: store.ActionInsert, Entity: claimRow(handName, e)})
			if err != nil {
				return err
			}
			done := make(chan error, 1)
			go func() {
				_, err := hand.AddEntity(ctx, claim.Entity, nil)
				done <- err
			}()
			_, err = hand.SubmitTransaction(ctx, acts, nil)
			if cerr := <-done; err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			msg, err := json.Marshal(map[string]any{"table": handName, "pk": e.Dept, "rk": partition.OutboxPrefix + e.ID, "topic": "bench"})
			if err != nil {
				return err
			}
			_, err = q.EnqueueMessage(ctx, base64.StdEncoding.EncodeToString(msg), nil)
			return err
		}},
		interleave.Case{Name: "model Insert (unique here, index elsewhere, a copy), then Flush", Op: func(i int) error {
			if err := m.Insert(ctx, mk("m", i)); err != nil {
				return err
			}
			return eng.Flush(ctx)
		}},
		interleave.Case{Name: "the same on FastTransport", Op: func(i int) error {
			if err := mf.Insert(ctx, mk("f", i)); err != nil {
				return err
			}
			return fastEng.Flush(ctx)
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", rep.Table())
	same, _ := rep.Row("aztables: the transaction, the claim beside it, the message")
	mi, _ := rep.Row("model Insert (unique here, index elsewhere, a copy), then Flush")
	b.ReportMetric(mi.CPURatio.Median, "insert-cpu-x")
	mft, _ := rep.Row("the same on FastTransport")
	b.ReportMetric(same.CPURatio.Median, "same-requests-cpu-x")
	b.ReportMetric(mft.CPURatio.Median, "fast-insert-cpu-x")
}
