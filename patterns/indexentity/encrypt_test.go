package indexentity_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
)

// Donor has an encrypted property; it is listed by a plain one.
type Donor struct {
	Region string     `table:",pk"`
	ID     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Secret string     `table:",encrypt"`
	Blood  string
}

func (Donor) TableKind() mapper.Kind { return mapper.Kind{Prefix: "don_"} }

const donorSecret = "DonorSecret1618033"

// TestEncryptedListedEntities writes entities with an encrypted property
// through an encrypting store under each placement of the lists. The
// lists hold keys only, the entity rows and the engine's rows hold no
// plaintext, and the lookups return it.
func TestEncryptedListedEntities(t *testing.T) {
	for _, pl := range []indexentity.Placement{indexentity.SamePartition, indexentity.SeparatePartition, indexentity.InBlobs} {
		t.Run(pl.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := context.Background()
				donors := e.B.NewTable(t, "encdon")
				lists := e.B.NewTable(t, "enclist")
				spied, spy := enctest.Wrap(e.B.Store)
				st := enctest.Codec(t, "Secret").Store(spied, donors, lists)
				o := e.Opts("encie")
				eng := eventualtest.NewEngine(t, st, o)
				container := "enclists" + e.Names
				if err := st.Container(container).Create(ctx); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = e.B.Store.Container(container).Delete(context.Background()) })
				opts := &indexentity.Options{Placement: pl, Engine: eng, IndexTable: lists, Container: container}
				pk := ""
				if pl == indexentity.SamePartition {
					opts, pk = nil, "north"
				}
				x, err := indexentity.New(st, donors, opts,
					indexentity.List("blood", func(d *Donor) string { return d.Blood }))
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range []string{"don_1", "don_2"} {
					if err := x.Insert(ctx, &Donor{Region: "north", ID: id, Secret: donorSecret + id, Blood: "O"}); err != nil {
						t.Fatal(err)
					}
				}
				eventualtest.Drain(t, e, &eng, o, st, donors)
				seen := map[string]string{}
				for d, err := range x.FindAll(ctx, pk, "blood", "O") {
					if err != nil {
						t.Fatal(err)
					}
					seen[d.ID] = d.Secret
				}
				if len(seen) != 2 || seen["don_1"] != donorSecret+"don_1" {
					t.Fatalf("FindAll = %v", seen)
				}
				leaks := spy.Leaks(donorSecret)
				stored, err := enctest.Scan(ctx, e.B.Store, []string{donors, lists}, donorSecret)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range append(leaks, stored...) {
					t.Error("plaintext reached the backend: ", l)
				}
			})
		})
	}
}
