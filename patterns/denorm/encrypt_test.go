package denorm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// Manager has an encrypted name, copied into the department it manages
// (another table) and the team it leads (its own partition).
type Manager struct {
	Unit    string     `table:",pk"`
	ID      string     `table:",rk"`
	ETag    store.ETag `table:",etag"`
	Name    string     `table:",encrypt"`
	Phone   string
	Manages string
	Leads   string
}

func (Manager) TableKind() mapper.Kind { return mapper.Kind{Prefix: "mgr_"} }

const (
	mgrSecret   = "ManagerSecret5150abc"
	mgrRenamed  = "ManagerSecretLater99"
	unrelated   = "unrelated"
	departments = "encdept"
)

func managerRels(depts string) denorm.Rel[Manager] {
	return denorm.Copy[Manager]("manager", func(m *Manager) []denorm.Target {
		if m.Manages == "" {
			return nil
		}
		return []denorm.Target{{Table: depts, PartitionKey: "dept", RowKey: m.Manages}}
	}).Field("Name", "ManagerName").Field("Phone", "ManagerPhone")
}

// TestEncryptedDenormalizedCopies copies an encrypted property under
// another name, into a target elsewhere (through the engine) and one in
// the source's partition (in its transaction), through an encrypting
// store that encrypts the target property too. Nothing the backend is
// asked to keep holds the plaintext; the targets read back through the
// encrypting store hold it. A target property the target's table does
// not encrypt is refused before anything is written.
func TestEncryptedDenormalizedCopies(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		staff := e.B.NewTable(t, "encstaff")
		depts := e.B.NewTable(t, departments)
		spied, spy := enctest.Wrap(e.B.Store)
		codec := enctest.Codec(t, "Name", "ManagerName", "LeadName")
		st := codec.Store(spied, staff, depts)
		o := e.Opts("encdn")
		eng := eventualtest.NewEngine(t, st, o)
		d, err := denorm.New[Manager](eng, staff, managerRels(depts),
			denorm.Copy[Manager]("lead", func(m *Manager) []denorm.Target {
				if m.Leads == "" {
					return nil
				}
				return []denorm.Target{{PartitionKey: m.Unit, RowKey: m.Leads}}
			}).Field("Name", "LeadName"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales", Properties: map[string]any{"Budget": int64(7)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Table(staff).Insert(ctx, store.Entity{PartitionKey: "u1", RowKey: "team_east", Properties: map[string]any{"Region": "East"}}); err != nil {
			t.Fatal(err)
		}
		m := &Manager{Unit: "u1", ID: "mgr_1", Name: mgrSecret, Phone: "555", Manages: "Sales", Leads: "team_east"}
		if err := d.Insert(ctx, m); err != nil {
			t.Fatal(err)
		}
		if !spy.Seen("Body") {
			t.Fatal("the spy saw no outbox row: the test searches nothing")
		}
		eventualtest.Drain(t, e, &eng, o, st, staff)
		m.Name = mgrRenamed
		if err := d.Update(ctx, m); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, staff)

		dept, err := st.Table(depts).Get(ctx, "dept", "Sales", nil)
		if err != nil || dept.Properties["ManagerName"] != mgrRenamed || dept.Properties["ManagerPhone"] != "555" || dept.Properties["Budget"] != int64(7) {
			t.Fatalf("department = %v, %v", dept.Properties, err)
		}
		team, err := st.Table(staff).Get(ctx, "u1", "team_east", nil)
		if err != nil || team.Properties["LeadName"] != mgrRenamed || team.Properties["Region"] != "East" {
			t.Fatalf("team = %v, %v", team.Properties, err)
		}
		leaks := spy.Leaks(mgrSecret, mgrRenamed)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{staff, depts}, mgrSecret, mgrRenamed)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}

// TestEncryptedCopyToPlainPropertyRefused: a relation that would store an
// encrypted property under a name the target's table does not encrypt
// is refused before anything is written, naming both properties; so is
// one whose target table is not encrypted at all.
func TestEncryptedCopyToPlainPropertyRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		wrapTargets bool
	}{
		{"target property not encrypted", true},
		{"target table not encrypted", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := eventualtest.MemEnv()
			staff := e.B.NewTable(t, "encstaff")
			depts := e.B.NewTable(t, departments)
			wrapped := []string{staff}
			if c.wrapTargets {
				wrapped = append(wrapped, depts)
			}
			st := enctest.Codec(t, "Name").Store(e.B.Store, wrapped...)
			o := e.Opts("encrf")
			eng := eventualtest.NewEngine(t, st, o)
			d, err := denorm.New[Manager](eng, staff, managerRels(depts))
			if err != nil {
				t.Fatal(err)
			}
			err = d.Insert(ctx, &Manager{Unit: "u1", ID: "mgr_1", Name: mgrSecret, Manages: "Sales"})
			if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"ManagerName"`) || !strings.Contains(err.Error(), `"Name"`) {
				t.Fatalf("an encrypted property copied into a plain one: %v", err)
			}
			if rows, _ := enctest.Rows(ctx, e.B.Store, staff); len(rows) != 0 {
				t.Fatalf("the refused write left rows: %v", rows)
			}
			// A manager who manages nothing copies nothing: written.
			if err := d.Insert(ctx, &Manager{Unit: "u1", ID: "mgr_2", Name: mgrSecret}); err != nil {
				t.Fatal(err)
			}
			if err := d.DeleteKey(ctx, "u1", "mgr_2"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
