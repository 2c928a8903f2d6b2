package xindex_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// Member has an encrypted property; its indexes are on plain ones.
type Member struct {
	Club   string     `table:",pk"`
	ID     string     `table:",rk"` // "mem_1"
	ETag   store.ETag `table:",etag"`
	Secret string     `table:",encrypt"`
	Email  string
	Team   string
}

func (Member) TableKind() mapper.Kind { return mapper.Kind{Prefix: "mem_"} }

const (
	memberSecret = "MemberSecret0042xyz"
	laterSecret  = "MemberSecretLater77"
)

// TestEncryptedCopies indexes members with an encrypted property through
// an encrypting store: a unique index whose copies sit in other
// partitions of the members' table, and a non-unique one in a table of
// its own. Nothing the backend is asked to keep (the entity, the outbox
// row carrying the copies, the copies) holds the plaintext; the lookups
// return it.
func TestEncryptedCopies(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		members := e.B.NewTable(t, "encmem")
		byTeam := e.B.NewTable(t, "encteam")
		props, err := mapper.EncryptedProperties[Member]()
		if err != nil {
			t.Fatal(err)
		}
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, props...).Store(spied, members, byTeam)
		o := e.Opts("encxi")
		eng := eventualtest.NewEngine(t, st, o)
		x, err := xindex.New[Member](eng, members, nil,
			xindex.Unique[Member]("email", func(m *Member) string { return m.Email }),
			xindex.NonUnique[Member]("team", func(m *Member) string { return m.Team }).InTable(byTeam))
		if err != nil {
			t.Fatal(err)
		}
		m := &Member{Club: "c1", ID: "mem_1", Secret: memberSecret, Email: "ann@x.org", Team: "red"}
		if err := x.Insert(ctx, m); err != nil {
			t.Fatal(err)
		}
		if !spy.Seen("Body") {
			t.Fatal("the spy saw no outbox row: the test searches nothing")
		}
		eventualtest.Drain(t, e, &eng, o, st, members)
		m.Secret = laterSecret
		if err := x.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, members)

		if got, err := x.Get(ctx, "c1", "mem_1"); err != nil || got.Secret != laterSecret {
			t.Fatalf("Get = %+v, %v", got, err)
		}
		h, err := x.Find(ctx, "c1", "email", "ann@x.org")
		if err != nil || h.Value.Secret != laterSecret || h.Version != 2 {
			t.Fatalf("Find = %+v, %v", h, err)
		}
		n := 0
		for h, err := range x.FindAll(ctx, "c1", "team", "red") {
			if err != nil || h.Value.Secret != laterSecret {
				t.Fatalf("FindAll: %+v, %v", h, err)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("FindAll found %d copies", n)
		}
		rows, err := enctest.Rows(ctx, e.B.Store, byTeam)
		if err != nil || len(rows) != 1 {
			t.Fatalf("the team index holds %v, %v", rows, err)
		}
		for _, r := range rows {
			if _, ok := r.Properties["Secret"].([]byte); !ok {
				t.Fatalf("the copy's Secret is stored as %T", r.Properties["Secret"])
			}
		}
		leaks := spy.Leaks(memberSecret, laterSecret)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{members, byTeam}, memberSecret, laterSecret)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
