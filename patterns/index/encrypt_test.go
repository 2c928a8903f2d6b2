package index_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/mapper"
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

func (Nurse) TableKind() mapper.Kind { return mapper.Kind{Prefix: "nur_"} }

const (
	nurseSecret = "NurseSecret2718281"
	nurseLater  = "NurseSecretLater314"
)

// TestEncryptedIndexCopies writes entities with an encrypted property
// through an encrypting store: their copies in the same partition, in
// the same transaction, are encrypted for their own rows (none of the
// rows the backend stores holds the plaintext), and the lookups, which
// read the copies, return the plaintext.
func TestEncryptedIndexCopies(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "encnurse")
		spied, spy := enctest.Wrap(b.Store)
		st := enctest.Codec(t, "Secret").Store(spied, name)
		nurses, err := index.New[Nurse](st, name,
			index.Unique[Nurse]("email", func(n *Nurse) string { return n.Email }),
			index.NonUnique[Nurse]("shift", func(n *Nurse) string { return n.Shift }).Project("Secret"))
		if err != nil {
			t.Fatal(err)
		}
		n := &Nurse{Ward: "w1", ID: "nur_1", Secret: nurseSecret, Email: "n@x.org", Shift: "night"}
		if err := nurses.Insert(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Secret = nurseLater
		if err := nurses.Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := nurses.Insert(ctx, &Nurse{Ward: "w1", ID: "nur_2", Secret: nurseSecret, Email: "m@x.org", Shift: "night"}); err != nil {
			t.Fatal(err)
		}
		if got, err := nurses.Find(ctx, "w1", "email", "n@x.org"); err != nil || got.Secret != nurseLater {
			t.Fatalf("Find = %+v, %v", got, err)
		}
		seen := map[string]string{}
		for got, err := range nurses.FindAll(ctx, "w1", "shift", "night") {
			if err != nil {
				t.Fatal(err)
			}
			seen[got.ID] = got.Secret
		}
		if len(seen) != 2 || seen["nur_1"] != nurseLater || seen["nur_2"] != nurseSecret {
			t.Fatalf("FindAll = %v", seen)
		}
		rows, err := enctest.Rows(ctx, b.Store, name)
		if err != nil || len(rows) != 6+2 { // the entities and their copies, and each entity's head row
			t.Fatalf("stored rows: %d, %v", len(rows), err)
		}
		for k, r := range rows {
			if index.IsHeadKey(r.RowKey) {
				if _, ok := r.Properties["Secret"]; ok {
					t.Errorf("head row %s holds the entity's Secret", k)
				}
				continue
			}
			if _, ok := r.Properties["Secret"].([]byte); !ok {
				t.Errorf("row %s: Secret stored as %T", k, r.Properties["Secret"])
			}
		}
		leaks := spy.Leaks(nurseSecret, nurseLater)
		stored, err := enctest.Scan(ctx, b.Store, []string{name}, nurseSecret, nurseLater)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
