package index_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// Employee is the guide's employee, found by id (its key), by email
// (unique) and by last name (not unique).
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"` // "emp_000123"
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Age        int32
}

func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

func staffTable(t *testing.T, b backendtest.Backend) *index.Table[Employee] {
	t.Helper()
	x, err := index.New[Employee](b.Store, b.NewTable(t, "staff"),
		index.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		index.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).Project("FirstName", "LastName"))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func emp(id int, first, last, email string) *Employee {
	return &Employee{Department: "Sales", ID: fmt.Sprintf("emp_%06d", id), FirstName: first, LastName: last, Email: email, Age: int32(20 + id%40)}
}

// TestInsertFindUpdateDelete: the copies follow the entity through every
// write, lookups by each index find it, and a taken unique value is
// refused naming the index and the value, with nothing written.
func TestInsertFindUpdateDelete(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		x := staffTable(t, b)
		ann, bob, cy := emp(1, "Ann", "Jones", "ann@x.com"), emp(2, "Bob", "Jones", "bob@x.com"), emp(3, "Cy", "Smith", "cy@x.com")
		for _, e := range []*Employee{ann, bob, cy} {
			if err := x.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
			if e.ETag == "" {
				t.Fatal("Insert did not store the ETag")
			}
		}
		got, err := x.Find(ctx, "Sales", "email", "bob@x.com")
		if err != nil || got.ID != bob.ID || got.Age != bob.Age {
			t.Fatalf("Find by email: %+v, %v", got, err)
		}
		var jones []string
		for e, err := range x.FindAll(ctx, "Sales", "lastname", "Jones") {
			if err != nil {
				t.Fatal(err)
			}
			jones = append(jones, e.FirstName+"/"+e.Email) // projected: read through
		}
		if strings.Join(jones, ",") != "Ann/ann@x.com,Bob/bob@x.com" {
			t.Fatalf("FindAll Jones = %v", jones)
		}
		var emails []string
		for e, err := range x.Range(ctx, "Sales", "email", "b", "z") {
			if err != nil {
				t.Fatal(err)
			}
			emails = append(emails, e.Email)
		}
		if strings.Join(emails, ",") != "bob@x.com,cy@x.com" {
			t.Fatalf("Range [b, z) = %v", emails)
		}
		emails = emails[:0]
		for e, err := range x.Prefix(ctx, "Sales", "email", "a") {
			if err != nil {
				t.Fatal(err)
			}
			emails = append(emails, e.Email)
		}
		if strings.Join(emails, ",") != "ann@x.com" {
			t.Fatalf("Prefix a = %v", emails)
		}
		// A taken unique value: refused, naming index and value; nothing
		// written.
		dup := emp(4, "Dee", "Lee", "ann@x.com")
		err = x.Insert(ctx, dup)
		var de *partition.DuplicateError
		if !errors.As(err, &de) || de.IndexName != "email" || de.Value != "ann@x.com" || de.Partition != "Sales" || de.Label != "index email" || !errors.Is(err, partition.ErrDuplicate) || !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("duplicate email: %v", err)
		}
		if _, err := x.Get(ctx, "Sales", dup.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused insert left its entity: %v", err)
		}
		// Moving a value moves its copy; the old value is free again.
		ann.Email, ann.LastName = "ann@y.com", "Hall"
		if err := x.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Find(ctx, "Sales", "email", "ann@x.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the old email still finds Ann: %v", err)
		}
		if got, err := x.Find(ctx, "Sales", "email", "ann@y.com"); err != nil || got.ID != ann.ID {
			t.Fatalf("the new email: %+v %v", got, err)
		}
		if err := x.Insert(ctx, dup); err != nil {
			t.Fatalf("the freed email: %v", err)
		}
		// A stale ETag is refused, a moved value to a taken one too.
		stale := *bob
		bob.Age++
		if err := x.Update(ctx, bob); err != nil {
			t.Fatal(err)
		}
		stale.Email = "other@x.com"
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
		bob.Email = "cy@x.com"
		if err := x.Update(ctx, bob); !errors.As(err, &de) || de.Value != "cy@x.com" {
			t.Fatalf("moving to a taken email: %v", err)
		}
		bob.Email = "bob@x.com"
		// Delete removes every copy.
		if err := x.Delete(ctx, cy); err != nil {
			t.Fatal(err)
		}
		checkConsistent(t, b, x)
		// The entities' repository never reads a copy.
		n := 0
		for e, err := range x.Repository().Partition("Sales").Query(ctx) {
			if err != nil || !strings.HasPrefix(e.ID, "emp_") {
				t.Fatalf("repository read %+v, %v", e, err)
			}
			n++
		}
		if n != 3 {
			t.Fatalf("repository: %d employees, want 3", n)
		}
	})
}

// checkConsistent scans the whole table: every entity has exactly its
// copies, and every copy belongs to an entity with that value.
func checkConsistent(t *testing.T, b backendtest.Backend, x *index.Table[Employee]) {
	t.Helper()
	ctx := context.Background()
	want := map[string]string{} // copy RowKey -> entity RowKey
	have := map[string]string{}
	for e, err := range store.All(ctx, x.Repository().Table(), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if index.IsHeadKey(e.RowKey) {
			continue
		}
		if strings.HasPrefix(e.RowKey, "emp_") {
			if email, _ := e.Properties["Email"].(string); email != "" {
				k, _ := keys.Join("email", email)
				if other, dup := want[k]; dup {
					t.Errorf("two entities hold email %q: %s and %s", email, other, e.RowKey)
				}
				want[k] = e.RowKey
			}
			if last, _ := e.Properties["LastName"].(string); last != "" {
				k, _ := keys.Join("lastname", last, e.RowKey)
				want[k] = e.RowKey
			}
			continue
		}
		have[e.RowKey], _ = e.Properties[index.RefProperty].(string)
	}
	for k, ref := range want {
		if have[k] != ref {
			t.Errorf("entity %s lacks its copy %q (found ref %q)", ref, k, have[k])
		}
	}
	for k, ref := range have {
		if want[k] != ref {
			t.Errorf("copy %q of %s belongs to no entity", k, ref)
		}
	}
}

// TestConcurrentWritesKeepIndexesExact: goroutines insert, update (moving
// indexed values among a small set, so they collide), upsert and delete
// employees at once; a full scan at the end finds every index exactly
// consistent with its entities, and no unique value held twice.
func TestConcurrentWritesKeepIndexesExact(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		x := staffTable(t, b)
		workers, rounds := 6, 30
		if b.Short() {
			rounds = 12
		}
		lastNames := []string{"Jones", "Smith", "Lee"}
		var wg sync.WaitGroup
		var mu sync.Mutex
		outcomes := map[string]int{}
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 9))
				for range rounds {
					id := r.IntN(8)
					e := emp(id, "F", lastNames[r.IntN(3)], fmt.Sprintf("e%d@x.com", r.IntN(10)))
					var err error
					switch r.IntN(4) {
					case 0:
						err = x.Insert(ctx, e)
					case 1:
						cur, gerr := x.Get(ctx, "Sales", e.ID)
						if gerr != nil {
							err = gerr
							break
						}
						cur.Email, cur.LastName = e.Email, e.LastName
						err = x.Update(ctx, &cur)
					case 2:
						err = x.Upsert(ctx, e)
					default:
						err = x.DeleteKey(ctx, "Sales", e.ID)
					}
					kind := "ok"
					switch {
					case err == nil:
					case errors.Is(err, partition.ErrDuplicate):
						kind = "duplicate"
					case errors.Is(err, store.ErrPreconditionFailed):
						kind = "changed"
					case errors.Is(err, store.ErrAlreadyExists), errors.Is(err, store.ErrNotFound):
						kind = "exists/missing"
					default:
						t.Errorf("unexpected error: %v", err)
					}
					mu.Lock()
					outcomes[kind]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		checkConsistent(t, b, x)
		t.Logf("outcomes %v", outcomes)
		if outcomes["duplicate"] == 0 {
			t.Log("no duplicate value was refused in this run")
		}
	})
}

// TestConcurrentSameLastNameLosesNone: employees named Jones added at once
// are all found by the last-name index.
func TestConcurrentSameLastNameLosesNone(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		x := staffTable(t, b)
		n := 40
		if b.Short() {
			n = 16
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := x.Insert(ctx, emp(i, "F", "Jones", fmt.Sprintf("j%d@x.com", i))); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		var ids []string
		for e, err := range x.FindAll(ctx, "Sales", "lastname", "Jones") {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		if len(ids) != n || !slices.IsSorted(ids) {
			t.Fatalf("found %d Joneses, want %d", len(ids), n)
		}
	})
}

// TestBadInputIsRefused: a value too long for a key, an entity key with a
// forbidden character, a projection of a missing field, a type without a
// prefix: clear errors, nothing written.
func TestBadInputIsRefused(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		x := staffTable(t, b)
		long := emp(1, "A", "B", strings.Repeat("e", 1100))
		err := x.Insert(ctx, long)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "index email") || !strings.Contains(err.Error(), "1024") {
			t.Fatalf("a value too long for a key: %v", err)
		}
		bad := emp(2, "A", "B", "a@b")
		bad.ID = "emp_a/b"
		if err := x.Insert(ctx, bad); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "emp_a/b") {
			t.Fatalf("a key with '/': %v", err)
		}
		n := 0
		for range store.All(ctx, x.Repository().Table(), store.Query{}) {
			n++
		}
		if n != 0 {
			t.Fatalf("%d rows written by refused inserts", n)
		}
		// A forbidden character in a value is escaped, not refused.
		odd := emp(3, "A", "B/C#?", "x/y#z@q")
		if err := x.Insert(ctx, odd); err != nil {
			t.Fatalf("a value with '/', '#': %v", err)
		}
		if got, err := x.Find(ctx, "Sales", "email", "x/y#z@q"); err != nil || got.ID != odd.ID {
			t.Fatalf("find it back: %+v, %v", got, err)
		}
		table := b.NewTable(t, "badidx")
		if _, err := index.New[Employee](b.Store, table, index.Unique[Employee]("email", func(e *Employee) string { return e.Email }).Project("Nope")); err == nil || !strings.Contains(err.Error(), "Nope") {
			t.Fatalf("a projection of a missing field: %v", err)
		}
		if _, err := index.New[Employee](b.Store, table, index.Unique[Employee]("bad name", func(e *Employee) string { return e.Email })); err == nil {
			t.Fatal("an index name with a space was accepted")
		}
		if _, err := index.New[Employee](b.Store, table, index.Unique[Employee]("emp", func(e *Employee) string { return e.Email })); err == nil {
			t.Fatal("an index whose copies overlap the entities' prefix was accepted")
		}
		type noKind struct {
			PK string `table:",pk"`
			RK string `table:",rk"`
			A  string
		}
		if _, err := index.New[noKind](b.Store, table, index.Unique[noKind]("a", func(e *noKind) string { return e.A })); err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Fatalf("a type without a kind prefix: %v", err)
		}
	})
}

// lostTable loses the answer to the next transaction once when armed:
// after applying it (after set) or before it reaches the service.
type lostTable struct {
	armed atomic.Bool
	after bool
	sent  atomic.Int32 // transactions that reached the service
}

func (l *lostTable) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	if c.Op != "Table.Transact" {
		return do(ctx)
	}
	if !l.armed.CompareAndSwap(true, false) {
		l.sent.Add(1)
		return do(ctx)
	}
	if l.after {
		l.sent.Add(1)
		if err := do(ctx); err != nil {
			return err
		}
	}
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Message: "no answer"}
}

// lostStore hands out its tables under t's faults, wrapped with
// storetest's kit, which keeps their typed lane.
type lostStore struct {
	store.Store
	t *lostTable
}

func (s *lostStore) Table(name string) store.Table {
	return storetest.WrapTable(s.Store.Table(name), s.t.hook)
}

// TestLostAnswerResolvedByTheHead: a write whose answer is lost is
// resolved exactly by the entity's head, never sent again: applied, the
// write returns as done (the entity's ETag emptied, as the answer that
// carried it was lost), with one transaction sent; not applied, the head
// is moved past it and the write is made again from a new read (three
// transactions: it, the head's move, the new write). Either way the
// entity and its copies are there once, and a second insert is refused
// as existing.
func TestLostAnswerResolvedByTheHead(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		for _, after := range []bool{true, false} {
			name := b.NewTable(t, "lost")
			lt := &lostTable{after: after}
			x, err := index.New[Employee](&lostStore{Store: b.Store, t: lt}, name,
				index.Unique[Employee]("email", func(e *Employee) string { return e.Email }))
			if err != nil {
				t.Fatal(err)
			}
			want := int32(2) // reached the service: the head's move and the new write
			if after {
				want = 1
			}
			e := emp(1, "Ann", "Jones", "ann@x.com")
			lt.armed.Store(true)
			if err := x.Insert(ctx, e); err != nil || lt.sent.Load() != want {
				t.Fatalf("insert, answer lost (applied %v): %v after %d transactions, want done after %d", after, err, lt.sent.Load(), want)
			}
			if after && e.ETag != "" {
				t.Fatalf("insert recovered from a lost answer left ETag %q, want it emptied", e.ETag)
			}
			var de *partition.DuplicateError
			if err := x.Insert(ctx, emp(1, "Ann", "Jones", "ann@x.com")); !errors.Is(err, store.ErrAlreadyExists) || !errors.As(err, &de) || de.Label != "entity" || de.IndexName != "" {
				t.Fatalf("inserting again: %v, want the entity existing", err)
			}
			if got, err := x.Find(ctx, "Sales", "email", "ann@x.com"); err != nil || got.ID != e.ID {
				t.Fatalf("find: %+v, %v", got, err)
			}
			// An update whose answer is lost, then a delete.
			cur, err := x.Get(ctx, "Sales", e.ID)
			if err != nil {
				t.Fatal(err)
			}
			cur.Email = "ann2@x.com"
			lt.armed.Store(true)
			if err := x.Update(ctx, &cur); err != nil {
				t.Fatalf("update, answer lost (applied %v): %v", after, err)
			}
			if _, err := x.Find(ctx, "Sales", "email", "ann@x.com"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the old email after the update: %v, want not found", err)
			}
			lt.armed.Store(true)
			if err := x.DeleteKey(ctx, "Sales", e.ID); err != nil {
				t.Fatalf("delete, answer lost (applied %v): %v", after, err)
			}
			if _, err := x.Get(ctx, "Sales", e.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the entity after the delete: %v, want not found", err)
			}
			if _, err := x.Find(ctx, "Sales", "email", "ann2@x.com"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the copy after the delete: %v, want not found", err)
			}
			checkConsistent(t, b, x)
		}
	})
}
