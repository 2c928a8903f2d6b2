package model_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// Patient has two encrypted properties; its indexes are on plain ones
// (an index value is a key, and keys are never encrypted).
type Patient struct {
	Ward      string     `table:",pk"`
	ID        string     `table:",rk"`
	ETag      store.ETag `table:",etag"`
	Name      string     `table:",encrypt"`
	Diagnosis string     `table:",encrypt"`
	Email     string
	Doctor    string
	Bed       string
}

const (
	secretName = "AdaSecretName7781"
	secretDiag = "DiagnosisSecret4412"
	newDiag    = "LaterDiagnosis90210"
)

func cardOfPatient(p *Patient) (string, string) { return "card", p.ID }

// TestEncryptedModel writes a model whose entity has encrypted properties
// through an encrypting store, with every feature that copies them: a
// unique and a non-unique index in the partition, a change log, global
// indexes (copies written by the engine's workers), a CopyTo into another
// table and a Move to another model's table. Nothing the backend is asked
// to keep (rows, outbox rows, queue messages, blobs) holds the plaintext,
// the stored rows hold none either, and every typed read returns it.
func TestEncryptedModel(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		table := e.B.NewTable(t, "encpat")
		archive := e.B.NewTable(t, "encarc")
		cards := e.B.NewTable(t, "enccard")
		props, err := mapper.EncryptedProperties[Patient]()
		if err != nil {
			t.Fatal(err)
		}
		codec := enctest.Codec(t, props...)
		spied, spy := enctest.Wrap(e.B.Store)
		st := codec.Store(spied)
		o := e.Opts("encmodel")
		eng := eventualtest.NewEngine(t, st, o)
		mo := &model.Options{Engine: eng, Now: e.Now}
		m, err := model.Define(st, table, mo,
			model.Unique("bed", func(p *Patient) string { return p.Bed }),
			model.Index("doctor", func(p *Patient) string { return p.Doctor }),
			model.GlobalUnique("email", func(p *Patient) string { return p.Email }),
			model.GlobalIndex("gdoctor", func(p *Patient) string { return p.Doctor }),
			model.Log[Patient](),
			model.CopyTo("card", cards, cardOfPatient, "Name", "Diagnosis"))
		if err != nil {
			t.Fatal(err)
		}
		arc, err := model.Define(st, archive, mo, model.Log[Patient]())
		if err != nil {
			t.Fatal(err)
		}
		// The card is a row of someone else's, which the copy lands on.
		if _, err := st.Table(cards).Insert(ctx, store.Entity{PartitionKey: "card", RowKey: "p1",
			Properties: map[string]any{"Printed": true}}); err != nil {
			t.Fatal(err)
		}
		p := &Patient{Ward: "w1", ID: "p1", Name: secretName, Diagnosis: secretDiag, Email: "ada@x.org", Doctor: "house", Bed: "b7"}
		if err := m.Insert(ctx, p); err != nil {
			t.Fatal(err)
		}
		if !spy.Seen("Body") {
			t.Fatal("the spy saw no outbox row: the test searches nothing")
		}
		leaks := spy.Leaks(secretName, secretDiag)
		eng2 := eng
		eventualtest.Drain(t, e, &eng2, o, st, table, archive)
		p.Diagnosis = newDiag
		if err := m.Update(ctx, p, store.Replace); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng2, o, st, table, archive)

		// Typed reads: the entity, the lookups in the partition and
		// through the global copies, the log, the card.
		got, err := m.Get(ctx, "w1", "p1")
		if err != nil || got.Name != secretName || got.Diagnosis != newDiag {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		if got, err := m.FindIn(ctx, "w1", "bed", "b7"); err != nil || got.Name != secretName {
			t.Fatalf("FindIn = %+v, %v", got, err)
		}
		if all, err := m.FindAllIn(ctx, "w1", "doctor", "house"); err != nil || len(all) != 1 || all[0].Diagnosis != newDiag {
			t.Fatalf("FindAllIn = %+v, %v", all, err)
		}
		if got, err := m.Find(ctx, "email", "ada@x.org"); err != nil || got.Name != secretName || got.Diagnosis != newDiag {
			t.Fatalf("Find = %+v, %v", got, err)
		}
		if all, err := m.FindAll(ctx, "gdoctor", "house"); err != nil || len(all) != 1 || all[0].Diagnosis != newDiag {
			t.Fatalf("FindAll = %+v, %v", all, err)
		}
		log, err := m.Log(ctx, "w1", "p1", 10)
		if err != nil || len(log) != 2 || log[0].Entity.Diagnosis != newDiag || log[1].Entity.Diagnosis != secretDiag {
			t.Fatalf("Log = %+v, %v", log, err)
		}
		card, err := st.Table(cards).Get(ctx, "card", "p1", nil)
		if err != nil || card.Properties["Name"] != secretName || card.Properties["Diagnosis"] != newDiag || card.Properties["Printed"] != true {
			t.Fatalf("card = %v, %v", card.Properties, err)
		}

		// The move carries the entity and its log to the archive.
		if err := m.Move(ctx, "w1", "p1", arc, "old", ""); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng2, o, st, table, archive)
		moved, err := arc.Get(ctx, "old", "p1")
		if err != nil || moved.Name != secretName || moved.Diagnosis != newDiag {
			t.Fatalf("moved = %+v, %v", moved, err)
		}
		if log, err := arc.Log(ctx, "old", "p1", 10); err != nil || len(log) < 2 || log[len(log)-1].Entity.Diagnosis != secretDiag {
			t.Fatalf("moved log = %+v, %v", log, err)
		}

		leaks = append(leaks, spy.Leaks(secretName, secretDiag, newDiag)...)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{table, archive, cards}, secretName, secretDiag, newDiag)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
