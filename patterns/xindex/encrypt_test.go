package xindex_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// Patient has an encrypted property; its indexes are on plain ones (an
// index value is a key, and keys are never encrypted).
type Patient struct {
	Ward      string     `table:",pk"`
	ID        string     `table:",rk"`
	ETag      store.ETag `table:",etag"`
	Diagnosis string     `table:",encrypt"`
	Email     string
	Doctor    string
}

const secretDiag = "DiagnosisSecret4412"

// TestEncrypted: over a model writing through an encrypting store, the
// view's hits and fresh reads hold the plaintext, and neither the
// requests to the backend nor the stored rows (the copies in the index
// tables included) do.
func TestEncrypted(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		table, idx := e.B.NewTable(t, "encx"), e.B.NewTable(t, "encxidx")
		props, err := mapper.EncryptedProperties[Patient]()
		if err != nil {
			t.Fatal(err)
		}
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, props...).Store(spied)
		o := e.Opts("encxindex")
		eng := eventualtest.NewEngine(t, st, o)
		m, err := model.Define(st, table, &model.Options{Engine: eng, Now: e.Now, IndexTable: idx},
			model.GlobalUnique("email", func(p *Patient) string { return p.Email }),
			model.GlobalIndex("doctor", func(p *Patient) string { return p.Doctor }))
		if err != nil {
			t.Fatal(err)
		}
		x, err := xindex.New(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Insert(ctx, &Patient{Ward: "w1", ID: "p1", Diagnosis: secretDiag, Email: "ada@x.org", Doctor: "house"}); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, table)
		h, err := x.Find(ctx, "email", "ada@x.org")
		if err != nil || h.Claimed || h.Entity.Diagnosis != secretDiag {
			t.Fatalf("Find: %+v, %v", h, err)
		}
		f, err := x.Check(ctx, h)
		if err != nil || f.Entity.Diagnosis != secretDiag || f.Stale {
			t.Fatalf("Check: %+v, %v", f, err)
		}
		for h, err := range x.Prefix(ctx, "doctor", "ho") {
			if err != nil || h.Entity.Diagnosis != secretDiag {
				t.Fatalf("Prefix: %+v, %v", h, err)
			}
		}
		leaks := spy.Leaks(secretDiag)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{table, idx}, secretDiag)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
