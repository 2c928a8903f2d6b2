package eventual_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/intercept"
)

const (
	secretA = "DonHallSecret31337"
	secretB = "SubmittedSecret8086"
	secretC = "LargeOpSecret65535"
)

// TestEncryptedOperations runs operations whose steps copy an encrypted
// property through an encrypting store: in an outbox row (Then), in a
// queue message (Submit), and in a blob (an operation too large for
// either). Nothing the backend is asked to keep holds the plaintext, and
// the copies read back through the encrypting store hold it.
func TestEncryptedOperations(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		current := e.B.NewTable(t, "enccur")
		archive := e.B.NewTable(t, "encarc")
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, "Name", "Notes").Store(spied, current, archive)
		o := opts(e, "encops")
		if err := st.Container(o.Container).Create(ctx); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.B.Store.Container(o.Container).Delete(context.Background()) })
		eng := eventualtest.NewEngine(t, st, o)

		// Then: the operation is in the outbox row of the source.
		res, err := eng.Write(ctx, current, "Sales", func(tx *eventual.Tx) error {
			if err := tx.Insert("employee", store.Entity{RowKey: "000123", Properties: map[string]any{"Name": secretA, "Dept": "Sales"}}); err != nil {
				return err
			}
			return tx.Then(ctx, "000123", eventual.Upsert(archive, store.Entity{PartitionKey: "Sales", RowKey: "000123",
				Properties: map[string]any{"Name": secretA, "Dept": "Sales"}}))
		})
		if err != nil || len(res.Outbox) != 1 {
			t.Fatalf("write: %v, %+v", err, res)
		}
		// Submit: the operation is in the message.
		if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{eventual.Upsert(archive,
			store.Entity{PartitionKey: "Ops", RowKey: "s1", Properties: map[string]any{"Name": secretB}})}}); err != nil {
			t.Fatal(err)
		}
		// Too large for a message, and for an outbox row: in a blob.
		pad := strings.Repeat("x", 30000)
		if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{eventual.Upsert(archive,
			store.Entity{PartitionKey: "Ops", RowKey: "s2", Properties: map[string]any{"Name": secretC + pad, "Notes": pad + secretC, "Plain": pad}})}}); err != nil {
			t.Fatal(err)
		}
		var big []eventual.Step
		for i := range 20 {
			big = append(big, eventual.Upsert(archive, store.Entity{PartitionKey: "Big", RowKey: fmt.Sprint(i),
				Properties: map[string]any{"Name": secretC + pad, "Notes": pad + secretC}}))
		}
		if _, err := eng.Write(ctx, current, "Big", func(tx *eventual.Tx) error {
			if err := tx.Insert("source", store.Entity{RowKey: "big", Properties: map[string]any{"Name": secretC}}); err != nil {
				return err
			}
			return tx.Then(ctx, "big", big...)
		}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Body", "Queue.Put", "Container.Put"} {
			if !spy.Seen(want) {
				t.Fatalf("the spy saw no %s: the test searches nothing there", want)
			}
		}
		leaks := spy.Leaks(secretA, secretB, secretC)

		eventualtest.Drain(t, e, &eng, o, st, current)
		for _, c := range []struct{ pk, rk, name string }{{"Sales", "000123", secretA}, {"Ops", "s1", secretB}, {"Ops", "s2", secretC + pad}, {"Big", "19", secretC + pad}} {
			got, err := st.Table(archive).Get(ctx, c.pk, c.rk, nil)
			if err != nil || got.Properties["Name"] != c.name {
				t.Fatalf("copy (%s, %s): %.40v, %v", c.pk, c.rk, got.Properties["Name"], err)
			}
		}
		leaks = append(leaks, spy.Leaks(secretA, secretB, secretC)...)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{current, archive}, secretA, secretB, secretC)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}

// TestCopyToUnencryptedTableRefused: a step that would store a property
// the source table encrypts in a table that does not encrypt it is
// refused before anything is written, naming the property and the tables.
func TestCopyToUnencryptedTableRefused(t *testing.T) {
	ctx := t.Context()
	e := eventualtest.MemEnv()
	current := e.B.NewTable(t, "enccur")
	plain := e.B.NewTable(t, "plain")
	st := enctest.Codec(t, "Name").Store(e.B.Store, current)
	o := opts(e, "encref")
	eng := eventualtest.NewEngine(t, st, o)
	_, err := eng.Write(ctx, current, "Sales", func(tx *eventual.Tx) error {
		if err := tx.Insert("employee", store.Entity{RowKey: "1", Properties: map[string]any{"Name": secretA}}); err != nil {
			return err
		}
		return tx.Then(ctx, "1", eventual.Upsert(plain, store.Entity{PartitionKey: "Sales", RowKey: "1", Properties: map[string]any{"Name": secretA}}))
	})
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"Name"`) || !strings.Contains(err.Error(), plain) {
		t.Fatalf("a copy of an encrypted property into a plain table: %v", err)
	}
	if rows, _ := enctest.Rows(ctx, e.B.Store, current); len(rows) != 0 {
		t.Fatalf("the refused write left rows: %v", rows)
	}
	// A property the source does not encrypt copies anywhere.
	if _, err := eng.Write(ctx, current, "Sales", func(tx *eventual.Tx) error {
		if err := tx.Insert("employee", store.Entity{RowKey: "1", Properties: map[string]any{"Name": secretA, "Dept": "Sales"}}); err != nil {
			return err
		}
		return tx.Then(ctx, "1", eventual.Upsert(plain, store.Entity{PartitionKey: "Sales", RowKey: "1", Properties: map[string]any{"Dept": "Sales"}}))
	}); err != nil {
		t.Fatal(err)
	}
}

// TestWorkerWithoutDecryption: a worker whose store does not decrypt the
// step's table leaves the operation (it stays queued, nothing written)
// for a worker that does.
func TestWorkerWithoutDecryption(t *testing.T) {
	ctx := t.Context()
	e := eventualtest.MemEnv()
	current := e.B.NewTable(t, "enccur")
	archive := e.B.NewTable(t, "encarc")
	st := enctest.Codec(t, "Name").Store(e.B.Store, current, archive)
	o := opts(e, "encwrk")
	eng := eventualtest.NewEngine(t, st, o)
	if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{eventual.Upsert(archive,
		store.Entity{PartitionKey: "Ops", RowKey: "s1", Properties: map[string]any{"Name": secretB}})}}); err != nil {
		t.Fatal(err)
	}
	blind, err := o.New(e.B.Store)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := blind.ProcessOnce(ctx); n != 1 || err != nil {
		t.Fatalf("ProcessOnce = %d, %v", n, err)
	}
	if rows, _ := enctest.Rows(ctx, e.B.Store, archive); len(rows) != 0 {
		t.Fatalf("a worker that cannot decrypt wrote %v", rows)
	}
	if p, err := blind.Poisoned(ctx, 1); err != nil || len(p) != 0 {
		t.Fatalf("poisoned at once: %+v, %v", p, err)
	}
	e.Pass(time.Minute) // the failed receive's backoff
	if n, err := eng.ProcessOnce(ctx); n != 1 || err != nil {
		t.Fatalf("ProcessOnce = %d, %v", n, err)
	}
	got, err := st.Table(archive).Get(ctx, "Ops", "s1", nil)
	if err != nil || got.Properties["Name"] != secretB {
		t.Fatalf("copy: %v, %v", got.Properties, err)
	}
}

// TestEncryptionBeneathInstrumentation: instrumentation put around the
// encrypting store (store/intercept, as store/meter and store/tkotel
// build it) does not hide the encryption from the engine.
func TestEncryptionBeneathInstrumentation(t *testing.T) {
	ctx := t.Context()
	e := eventualtest.MemEnv()
	current := e.B.NewTable(t, "enccur")
	archive := e.B.NewTable(t, "encarc")
	spied, spy := enctest.Wrap(e.B.Store)
	st := intercept.WrapStore(enctest.Codec(t, "Name").Store(spied, current, archive), intercept.Pass)
	o := opts(e, "encins")
	eng := eventualtest.NewEngine(t, st, o)
	if _, err := eng.Write(ctx, current, "Sales", func(tx *eventual.Tx) error {
		if err := tx.Insert("employee", store.Entity{RowKey: "1", Properties: map[string]any{"Name": secretA}}); err != nil {
			return err
		}
		return tx.Then(ctx, "1", eventual.Upsert(archive, store.Entity{PartitionKey: "Sales", RowKey: "1", Properties: map[string]any{"Name": secretA}}))
	}); err != nil {
		t.Fatal(err)
	}
	eventualtest.Drain(t, e, &eng, o, st, current)
	if got, err := st.Table(archive).Get(ctx, "Sales", "1", nil); err != nil || got.Properties["Name"] != secretA {
		t.Fatalf("copy: %v, %v", got.Properties, err)
	}
	if !spy.Seen("Body") {
		t.Fatal("the spy saw no outbox row: the test searches nothing")
	}
	for _, l := range spy.Leaks(secretA) {
		t.Error("plaintext reached the backend: ", l)
	}
}
