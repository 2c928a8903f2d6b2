package xindex_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

func hits(t *testing.T, seq func(func(xindex.Hit[Employee], error) bool)) []string {
	t.Helper()
	var out []string
	for h, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Value.FirstName+"/"+h.IndexValue)
	}
	return out
}

// TestGuideWalkthrough: employees of Sales get copies by email (partition
// email_Sales) and by last name (another table) once the worker ran; a
// lookup tells a copy that is behind its entity, or that leads to an
// entity that moved away; a changed value moves its copy, a delete
// removes them all, and a taken email is refused with nothing written.
func TestGuideWalkthrough(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		f := newFixture(t, e, "walk", nil, xindex.Options{})
		x := f.x
		ann, bob, cy := emp("Sales", 1, "Ann", "Jones", "ann@x.com"), emp("Sales", 2, "Bob", "Jones", "bob@x.com"), emp("Sales", 3, "Cy", "Smith", "cy@x.com")
		for _, v := range []*Employee{ann, bob, cy} {
			if err := x.Insert(ctx, v); err != nil {
				t.Fatal(err)
			}
			if v.ETag == "" {
				t.Fatal("Insert did not store the ETag")
			}
		}
		// Before the worker runs, the value is only claimed.
		if _, err := x.Find(ctx, "Sales", "email", "ann@x.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a claimed value found before its copy exists: %v", err)
		}
		f.drain(t)
		h, err := x.Find(ctx, "Sales", "email", "bob@x.com")
		if err != nil || h.Value.ID != bob.ID || h.Value.Age != bob.Age || h.Source != (xindex.Ref{PartitionKey: "Sales", RowKey: bob.ID}) || h.Version == 0 {
			t.Fatalf("Find by email: %+v, %v", h, err)
		}
		if got := hits(t, x.FindAll(ctx, "Sales", "lastname", "Jones")); strings.Join(got, ",") != "Ann/Jones,Bob/Jones" {
			t.Fatalf("FindAll Jones = %v", got)
		}
		if got := hits(t, x.Range(ctx, "Sales", "email", "b", "z")); strings.Join(got, ",") != "Bob/bob@x.com,Cy/cy@x.com" {
			t.Fatalf("Range [b, z) = %v", got)
		}
		if got := hits(t, x.Prefix(ctx, "Sales", "email", "a")); strings.Join(got, ",") != "Ann/ann@x.com" {
			t.Fatalf("Prefix a = %v", got)
		}
		fresh, err := x.FindFresh(ctx, "Sales", "email", "ann@x.com")
		if err != nil || fresh.Stale || fresh.Value.ETag == "" || fresh.Version != fresh.Hit.Version {
			t.Fatalf("FindFresh after the drain: %+v, %v", fresh, err)
		}

		// A change the worker has not carried out yet: the copy is behind
		// (Stale), and a copy whose value moved away dangles.
		ann.Age++
		if err := x.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		fresh, err = x.FindFresh(ctx, "Sales", "email", "ann@x.com")
		if err != nil || !fresh.Stale || fresh.Value.Age != ann.Age || fresh.Hit.Value.Age == ann.Age {
			t.Fatalf("FindFresh of a copy behind its entity: %+v, %v", fresh, err)
		}
		bob.Email = "bob@y.com"
		if err := x.Update(ctx, bob); err != nil {
			t.Fatal(err)
		}
		_, err = x.FindFresh(ctx, "Sales", "email", "bob@x.com")
		var de *xindex.DanglingError
		if !errors.As(err, &de) || de.Gone || de.Source.RowKey != bob.ID || !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("FindFresh of a value the entity gave up: %v", err)
		}
		// The old value is free at once: its holder gave it up.
		dee := emp("Sales", 4, "Dee", "Lee", "bob@x.com")
		if err := x.Insert(ctx, dee); err != nil {
			t.Fatalf("the given-up email: %v", err)
		}
		// A taken value is refused, naming it; nothing is written.
		dup := emp("Sales", 5, "Eve", "Ray", "cy@x.com")
		err = x.Insert(ctx, dup)
		var dupErr *partition.DuplicateError
		if !errors.As(err, &dupErr) || dupErr.IndexName != "email" || dupErr.Value != "cy@x.com" || dupErr.Holder.RowKey != cy.ID ||
			!errors.Is(err, partition.ErrDuplicate) || !errors.Is(err, store.ErrAlreadyExists) || store.Code(err) != store.CodeEntityAlreadyExists {
			t.Fatalf("a taken email: %v", err)
		}
		if _, err := x.Get(ctx, "Sales", dup.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused insert left its entity: %v", err)
		}
		// A stale ETag is refused.
		stale := *cy
		cy.Age++
		if err := x.Update(ctx, cy); err != nil {
			t.Fatal(err)
		}
		if err := x.Update(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("stale update: %v", err)
		}
		// A stale ETag refuses a delete too, and leaves the row; no ETag
		// at all is refused naming the call.
		if err := x.Delete(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("stale delete: %v", err)
		}
		if _, err := x.Get(ctx, "Sales", stale.ID); err != nil {
			t.Fatalf("a stale delete removed the row: %v", err)
		}
		untagged := stale
		untagged.ETag = ""
		for name, op := range map[string]func(context.Context, *Employee) error{"update": x.Update, "delete": x.Delete} {
			if err := op(ctx, &untagged); !errors.Is(err, mapper.ErrNoETag) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s without an ETag: %v; want mapper.ErrNoETag naming the call", name, err)
			}
		}
		if err := x.Delete(ctx, cy); err != nil {
			t.Fatal(err)
		}
		_, err = x.FindFresh(ctx, "Sales", "email", "cy@x.com")
		if !errors.As(err, &de) || !de.Gone {
			t.Fatalf("FindFresh of a deleted entity's copy: %v", err)
		}
		f.drain(t)
		c := f.scan(t)
		if c.entities != 3 || c.copies != 6 || c.claims != 0 || t.Failed() {
			t.Fatalf("after the drain: %+v", c)
		}
		if _, err := x.Find(ctx, "Sales", "email", "cy@x.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a deleted entity's copy: %v", err)
		}
		if p, _ := f.eng.Poisoned(ctx, 32); len(p) != 0 {
			t.Fatalf("poison: %+v", p)
		}
		// The entities' repository never reads a copy or an engine row.
		n := 0
		for v, err := range x.Repository().Query(ctx) {
			if err != nil || !strings.HasPrefix(v.ID, "emp_") {
				t.Fatalf("repository read %+v, %v", v, err)
			}
			n++
		}
		if n != 3 {
			t.Fatalf("repository: %d employees, want 3", n)
		}
	})
}

// TestOrgWideUniqueIndex: an index whose copies of every department share
// one partition keeps an email unique across departments; a claim left by
// a crashed writer holds the value for its lease, then another entity
// takes it over, and Reap removes the ones nobody took.
func TestOrgWideUniqueIndex(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		cs := &eventualtest.CrashStore{Store: e.B.Store}
		lease := 2 * time.Second
		staff := e.B.NewTable(t, "org")
		o := e.Opts("org")
		eng := eventualtest.NewEngine(t, cs, o)
		opts := xindex.Options{ClaimLease: lease}
		if e.Fake() {
			opts.Now = e.Clock.Now
		}
		build := func(eng *eventual.Engine) *xindex.Table[Employee] {
			x, err := xindex.New[Employee](eng, staff, &opts,
				xindex.Unique[Employee]("email", func(v *Employee) string { return v.Email }).InPartition(func(string) string { return "email" }))
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		x := build(eng)
		if err := x.Insert(ctx, emp("Sales", 1, "Ann", "Jones", "ann@x.com")); err != nil {
			t.Fatal(err)
		}
		err := x.Insert(ctx, emp("Eng", 2, "Ann", "Other", "ann@x.com"))
		var dup *partition.DuplicateError
		if !errors.As(err, &dup) || dup.Holder != (xindex.Ref{PartitionKey: "Sales", RowKey: "emp_000001"}) || dup.Pending {
			t.Fatalf("the same email in another department: %v", err)
		}
		// A writer crashes after its claim, before its entity write. The
		// crash counts requests from here: the message of the first
		// insert, queued after it returned, must have gone first.
		if err := eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		cs.Arm(3, true) // the fence read, the Get of the claim row, then the claim's insert
		if !eventualtest.Survive(func() { _ = x.Insert(ctx, emp("Eng", 3, "Bo", "Lin", "bo@x.com")) }) {
			t.Fatal("no crash")
		}
		eng = eventualtest.NewEngine(t, cs, o)
		x = build(eng)
		err = x.Insert(ctx, emp("Ops", 4, "Bo", "Lin", "bo@x.com"))
		if !errors.As(err, &dup) || !dup.Pending || dup.Holder.RowKey != "emp_000003" {
			t.Fatalf("a value claimed by a write in flight: %v", err)
		}
		e.Pass(lease + 100*time.Millisecond)
		if err := x.Insert(ctx, emp("Ops", 4, "Bo", "Lin", "bo@x.com")); err != nil {
			t.Fatalf("taking over an expired claim: %v", err)
		}
		// Another orphan claim, reaped.
		if err := eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		cs.Arm(3, true)
		if !eventualtest.Survive(func() { _ = x.Insert(ctx, emp("Eng", 5, "Cy", "Ng", "cy@x.com")) }) {
			t.Fatal("no crash")
		}
		x = build(eventualtest.NewEngine(t, cs, o))
		if n, err := x.Reap(ctx, "", "email"); n != 0 || err != nil {
			t.Fatalf("Reap inside the lease: %d, %v", n, err)
		}
		e.Pass(lease + 100*time.Millisecond)
		if n, err := x.Reap(ctx, "", "email"); n != 1 || err != nil {
			t.Fatalf("Reap after the lease: %d, %v; want the one orphan", n, err)
		}
		eng2 := eventualtest.NewEngine(t, cs, o)
		x = build(eng2)
		eventualtest.Drain(t, e, &eng2, o, cs, staff)
		for _, v := range []string{"ann@x.com", "bo@x.com"} {
			if _, err := x.FindFresh(ctx, "Eng", "email", v); err != nil {
				t.Fatalf("%s: %v", v, err)
			}
		}
		if h, _ := x.Find(ctx, "", "email", "bo@x.com"); h.Source.PartitionKey != "Ops" {
			t.Fatalf("bo@x.com belongs to %v, want Ops", h.Source)
		}
		if _, err := x.Find(ctx, "", "email", "cy@x.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the reaped claim's value: %v", err)
		}
	})
}

// slowStore runs hook before the first entity-group transaction on table
// once armed: a writer paused between its claim and its write.
type slowStore struct {
	store.Store
	table string
	hook  func()
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (s *slowStore) Table(name string) store.Table {
	return storetest.WrapTable(s.Store.Table(name), func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if h := s.hook; h != nil && c.Op == "Table.Transact" && strings.EqualFold(c.Name, s.table) {
			s.hook = nil
			h()
		}
		return do(ctx)
	})
}

// TestConflictSlippingPastTheClaimIsReported: a writer slower than the
// claim lease loses its claim to an entity of another department (the
// index spans them: a partition's own writes would make the slow one
// claim again), and both commit the same email. The worker keeps the
// first copy and fails the other operation with a HeldTwiceError naming
// both entities, which ends in the poison queue; once one of them gives
// the value up, the next sweep completes the operation and the index is
// exact again.
func TestConflictSlippingPastTheClaimIsReported(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		ss := &slowStore{Store: e.B.Store}
		lease := time.Second
		staff := e.B.NewTable(t, "conf")
		ss.table = staff
		o := e.Opts("conf")
		o.MaxReceives = 2
		opts := xindex.Options{ClaimLease: lease}
		if e.Fake() {
			opts.Now = e.Clock.Now
		}
		eng := eventualtest.NewEngine(t, ss, o)
		x, err := xindex.New[Employee](eng, staff, &opts,
			xindex.Unique[Employee]("email", func(v *Employee) string { return v.Email }).InPartition(func(string) string { return "email" }))
		if err != nil {
			t.Fatal(err)
		}
		bo := emp("Eng", 2, "Bo", "Lin", "same@x.com")
		ann := emp("Sales", 1, "Ann", "Jones", "same@x.com")
		ss.hook = func() {
			e.Pass(lease + 100*time.Millisecond)
			if err := x.Insert(ctx, ann); err != nil {
				t.Errorf("the second writer: %v", err)
			}
		}
		if err := x.Insert(ctx, bo); err != nil {
			t.Fatal(err)
		}
		// Work until the loser's operation is poisoned.
		var p []eventual.Poisoned
		for range 8 {
			for {
				n, err := eng.ProcessOnce(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
			if p, _ = eng.Poisoned(ctx, 32); len(p) > 0 {
				break
			}
			e.Pass(1100 * time.Millisecond) // a failed receive comes back after 1 s
		}
		if len(p) != 1 {
			t.Fatalf("poison queue: %+v; want the loser's operation", p)
		}
		last := p[0].Attempts[0].Error
		if !strings.Contains(last, `"same@x.com"`) || !strings.Contains(last, "emp_000001") || !strings.Contains(last, "emp_000002") || !strings.Contains(last, "do not retry") {
			t.Fatalf("the poisoned attempt does not name the value and both entities: %s", last)
		}
		t.Logf("poisoned: %s", last)
		h, err := x.Find(ctx, "", "email", "same@x.com")
		if err != nil {
			t.Fatal(err)
		}
		// The loser gives the value up; the sweep completes its operation.
		winner, loser := h.Source, xindex.Ref{PartitionKey: bo.Department, RowKey: bo.ID}
		if winner == loser {
			loser = xindex.Ref{PartitionKey: ann.Department, RowKey: ann.ID}
		}
		v, err := x.Get(ctx, loser.PartitionKey, loser.RowKey)
		if err != nil {
			t.Fatal(err)
		}
		v.Email = "mine@x.com"
		if err := x.Update(ctx, &v); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, ss, staff)
		for value, want := range map[string]xindex.Ref{"same@x.com": winner, "mine@x.com": loser} {
			if h, err := x.FindFresh(ctx, "", "email", value); err != nil || h.Hit.Source != want || h.Stale {
				t.Fatalf("after the fix, %s: %+v, %v; want %v", value, h, err, want)
			}
		}
	})
}
