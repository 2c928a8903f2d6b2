package indexentity_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// Patient has an encrypted property; it is listed by a plain one (a list
// value is a key, and keys are never encrypted).
type Patient struct {
	Ward   string `table:",pk"`
	ID     string `table:",rk"`
	Name   string `table:",encrypt"`
	Doctor string
}

const secretName = "AdaSecretName5521"

// TestEncryptedView: the view over a model on an encrypting store finds
// its entities through a List and a global index and returns them
// decrypted, while nothing the backend is asked to keep, and no row it
// stores, holds the plaintext.
func TestEncryptedView(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		table := e.B.NewTable(t, "encie")
		props, err := mapper.EncryptedProperties[Patient]()
		if err != nil {
			t.Fatal(err)
		}
		codec := enctest.Codec(t, props...)
		spied, spy := enctest.Wrap(e.B.Store)
		st := codec.Store(spied)
		o := e.Opts("encie")
		eng := eventualtest.NewEngine(t, st, o)
		doctor := func(p *Patient) string { return p.Doctor }
		m, err := model.Define(st, table, &model.Options{Engine: eng, Now: e.Now},
			model.List("doctor", doctor), model.GlobalIndex("gdoctor", doctor))
		if err != nil {
			t.Fatal(err)
		}
		v, err := indexentity.New(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Patient{{Ward: "w1", ID: "p1", Name: secretName, Doctor: "house"}, {Ward: "w2", ID: "p2", Name: secretName, Doctor: "house"}} {
			if err := m.Insert(ctx, &p); err != nil {
				t.Fatal(err)
			}
		}
		eng2 := eng
		eventualtest.Drain(t, e, &eng2, o, st, table)
		for _, c := range []struct {
			pk, list string
			n        int
		}{{"w1", "doctor", 1}, {"", "gdoctor", 2}} {
			n := 0
			for p, err := range v.FindAll(ctx, c.pk, c.list, "house") {
				if err != nil || p.Name != secretName {
					t.Fatalf("%s: %+v, %v", c.list, p, err)
				}
				n++
			}
			if n != c.n {
				t.Fatalf("%s: found %d, want %d", c.list, n, c.n)
			}
		}
		leaks := spy.Leaks(secretName)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{table}, secretName)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
