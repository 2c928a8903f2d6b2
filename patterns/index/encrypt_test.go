package index_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// Nurse has an encrypted property, copied by both indexes (the unique
// one copies the whole entity, the non-unique one projects it).
type Nurse struct {
	Ward   string     `table:",pk"`
	ID     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Secret string     `table:",encrypt"`
	Email  string
	Shift  string
}

const (
	nurseSecret = "NurseSecret2718281"
	nurseLater  = "NurseSecretLater314"
)

// TestEncryptedView writes entities with an encrypted property through a
// model over an encrypting store: the copies of both indexes (full and
// projected) hold it encrypted, none of the rows or requests the backend
// sees holds the plaintext, and the view's lookups return it.
func TestEncryptedView(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		name := e.B.NewTable(t, "encnurse")
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, "Secret").Store(spied, name)
		eng := eventualtest.NewEngine(t, st, e.Opts("encnurse"))
		m, err := model.Define(st, name, &model.Options{Engine: eng, Now: e.Now},
			model.Unique("email", func(n *Nurse) string { return n.Email }),
			model.Index("shift", func(n *Nurse) string { return n.Shift }).Project("Secret"))
		if err != nil {
			t.Fatal(err)
		}
		nurses, err := index.New(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := &Nurse{Ward: "w1", ID: "n1", Secret: nurseSecret, Email: "n@x.org", Shift: "night"}
		if err := m.Insert(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Secret = nurseLater
		if err := m.Update(ctx, n, store.Replace); err != nil {
			t.Fatal(err)
		}
		if err := m.Insert(ctx, &Nurse{Ward: "w1", ID: "n2", Secret: nurseSecret, Email: "m@x.org", Shift: "night"}); err != nil {
			t.Fatal(err)
		}
		if got, err := nurses.Find(ctx, "w1", "email", "n@x.org"); err != nil || got.Secret != nurseLater {
			t.Fatalf("Find = %+v, %v", got, err)
		}
		seen := map[string]string{}
		for got, err := range nurses.Prefix(ctx, "w1", "shift", "ni") {
			if err != nil {
				t.Fatal(err)
			}
			seen[got.ID] = got.Secret
		}
		if len(seen) != 2 || seen["n1"] != nurseLater || seen["n2"] != nurseSecret {
			t.Fatalf("Prefix = %v", seen)
		}
		rows, err := enctest.Rows(ctx, e.B.Store, name)
		if err != nil {
			t.Fatal(err)
		}
		copies := 0
		for k, r := range rows {
			parts, _ := keys.Split(r.RowKey)
			if len(parts) == 0 || parts[0] != "u" && parts[0] != "i" && parts[0] != "e" {
				continue
			}
			if parts[0] != "e" {
				copies++
			}
			if _, ok := r.Properties["Secret"].([]byte); !ok {
				t.Errorf("row %s: Secret stored as %T", k, r.Properties["Secret"])
			}
		}
		if copies != 4 {
			t.Fatalf("%d copies stored, want 4", copies)
		}
		leaks := spy.Leaks(nurseSecret, nurseLater)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{name}, nurseSecret, nurseLater)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
