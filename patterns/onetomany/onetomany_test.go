package onetomany_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/onetomany"
	"github.com/tablekit/tablekit/store"
)

// Employee is the parent: RowKey keys.Join("emp", ID) in its department's
// partition.
type Employee struct {
	Department string     `table:"-"`
	ID         string     `table:"-"`
	ETag       store.ETag `table:",etag"`
	Name       string
}

func (e Employee) TableKeys() (string, string, error) {
	rk, err := keys.Join("emp", e.ID)
	return e.Department, rk, err
}

func (e *Employee) SetTableKeys(pk, rk string) error {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 2 || parts[0] != "emp" {
		return fmt.Errorf("RowKey %q is not an employee key (%v)", rk, err)
	}
	e.Department, e.ID = pk, parts[1]
	return nil
}

func (Employee) TableKind() mapper.Kind { return mapper.Kind{Property: "Kind", Value: "employee"} }

// Review is a child: keys.Join("emp", EmployeeID, "review", year).
type Review struct {
	Department string     `table:"-"`
	EmployeeID string     `table:"-"`
	Year       int        `table:"-"`
	ETag       store.ETag `table:",etag"`
	Rating     int32
	Text       string
}

func (r Review) TableKeys() (string, string, error) {
	rk, err := keys.Join("emp", r.EmployeeID, "review", fmt.Sprintf("%04d", r.Year))
	return r.Department, rk, err
}

func (r *Review) SetTableKeys(pk, rk string) error {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 4 {
		return fmt.Errorf("RowKey %q is not a review key (%v)", rk, err)
	}
	r.Department, r.EmployeeID = pk, parts[1]
	_, err = fmt.Sscanf(parts[3], "%d", &r.Year)
	return err
}

func (Review) TableKind() mapper.Kind { return mapper.Kind{Property: "Kind", Value: "review"} }

func parentOf(r *Review) Employee { return Employee{Department: r.Department, ID: r.EmployeeID} }

func newFamilies(t *testing.T, b backendtest.Backend) *onetomany.Table[Employee, Review] {
	t.Helper()
	f, err := onetomany.New[Employee, Review](b.Store, b.NewTable(t, "family"), parentOf)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func reviews(id string, years ...int) []*Review {
	out := make([]*Review, len(years))
	for i, y := range years {
		out[i] = &Review{Department: "Sales", EmployeeID: id, Year: y, Rating: int32(y % 5), Text: fmt.Sprintf("%s in %d", id, y)}
	}
	return out
}

func mustKey(t *testing.T, parts ...string) string {
	t.Helper()
	k, err := keys.Join(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rowsOf counts the rows of the table but the heads of families that are
// gone: a parent's row that holds the head's own two properties alone
// (what a Delete leaves, and what shutting out a lost insert leaves), no
// parent to any read.
func rowsOf(t *testing.T, tbl store.Table) int {
	t.Helper()
	n := 0
	for e, err := range store.All(context.Background(), tbl, store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, v := e.Properties["TkHeadVersion"]; v && len(e.Properties) == 2 {
			continue
		}
		n++
	}
	return n
}

// TestFamilyInOneTransactionAndOneQuery: a parent and its children go in
// one transaction and come back in one range query, which skips the
// neighbours: another employee whose id extends this one's, and a row of
// another kind inside the family's key range.
func TestFamilyInOneTransactionAndOneQuery(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		f := newFamilies(t, b)
		emp := &Employee{Department: "Sales", ID: "000123", Name: "Don Hall"}
		rs := reviews("000123", 2024, 2022, 2023)
		if err := f.Insert(ctx, emp, rs...); err != nil {
			t.Fatal(err)
		}
		if emp.ETag == "" || rs[0].ETag == "" {
			t.Fatalf("ETags not handed back (parent %q, child %q)", emp.ETag, rs[0].ETag)
		}
		other := &Employee{Department: "Sales", ID: "0001234", Name: "Other"}
		if err := f.Insert(ctx, other, reviews("0001234", 2020)...); err != nil {
			t.Fatal(err)
		}
		note, _ := keys.Join("emp", "000123", "note")
		if _, err := f.Table().Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: note, Properties: map[string]any{"Kind": "note", "Text": "x"}}); err != nil {
			t.Fatal(err)
		}
		got, err := f.Get(ctx, Employee{Department: "Sales", ID: "000123"})
		if err != nil {
			t.Fatal(err)
		}
		var years []int
		for _, r := range got.Children {
			if r.EmployeeID != "000123" {
				t.Fatalf("a child of another parent: %+v", r)
			}
			years = append(years, r.Year)
		}
		if got.Parent.Name != "Don Hall" || got.Parent.ETag != emp.ETag || fmt.Sprint(years) != "[2022 2023 2024]" {
			t.Fatalf("Get = %+v, years %v", got.Parent, years)
		}
		years = years[:0]
		for r, err := range f.Children(ctx, Employee{Department: "Sales", ID: "000123"}) {
			if err != nil {
				t.Fatal(err)
			}
			years = append(years, r.Year)
		}
		if fmt.Sprint(years) != "[2022 2023 2024]" {
			t.Fatalf("Children = %v", years)
		}
		if k, err := onetomany.ChildKey(mustKey(t, "emp", "000123"), "review", "2024"); err != nil || k != mustKey(t, "emp", "000123", "review", "2024") {
			t.Fatalf("ChildKey = %q, %v", k, err)
		}
		if _, err := f.Get(ctx, Employee{Department: "Sales", ID: "999"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a missing parent: %v", err)
		}
		// An insert meeting an existing child writes nothing.
		dup := append(reviews("000123", 2030), reviews("000123", 2024)...)
		again := &Employee{Department: "Sales", ID: "000123", Name: "x"}
		if err := f.Insert(ctx, again, dup...); !errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("insert over an existing family: %v", err)
		}
		if _, err := mapper.NewRepository[Review](b.Store, f.Table().Name()).GetByKey(ctx, dup[0]); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused insert left a child: %v", err)
		}
	})
}

// TestWritesAreFencedByTheParent: Update, Add and Remove write the parent
// in the same transaction, conditional on its ETag: a stale ETag writes
// nothing, and no child is added to a parent that is gone.
func TestWritesAreFencedByTheParent(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		f := newFamilies(t, b)
		emp := &Employee{Department: "Sales", ID: "7", Name: "Ann"}
		if err := f.Insert(ctx, emp, reviews("7", 2020)...); err != nil {
			t.Fatal(err)
		}
		stale := *emp
		emp.Name = "Ann Lee"
		upd := reviews("7", 2020, 2021)
		upd[0].Text = "rewritten"
		if err := f.Update(ctx, emp, upd...); err != nil {
			t.Fatal(err)
		}
		if err := f.Add(ctx, &stale, reviews("7", 2022)...); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("Add with a stale parent ETag: %v", err)
		}
		if err := f.Update(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("Update with a stale parent ETag: %v", err)
		}
		if err := f.Update(ctx, &Employee{Department: "Sales", ID: "7"}); !errors.Is(err, mapper.ErrNoETag) {
			t.Fatalf("Update without an ETag: %v", err)
		}
		// Without an ETag the fence is the parent's existence.
		if err := f.Add(ctx, &Employee{Department: "Sales", ID: "7"}, reviews("7", 2023)...); err != nil {
			t.Fatal(err)
		}
		if err := f.Add(ctx, &Employee{Department: "Sales", ID: "gone"}, reviews("gone", 2023)...); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Add to a missing parent: %v", err)
		}
		got, err := f.Get(ctx, Employee{Department: "Sales", ID: "7"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Parent.Name != "Ann Lee" || len(got.Children) != 3 || got.Children[0].Text != "rewritten" {
			t.Fatalf("family after the writes: %+v", got)
		}
		if rowsOf(t, f.Table()) != 4 {
			t.Fatalf("%d rows, want 4: a refused write left something", rowsOf(t, f.Table()))
		}
		p := got.Parent
		if err := f.Remove(ctx, &p, &got.Children[1]); err != nil {
			t.Fatal(err)
		}
		if err := f.Remove(ctx, &p, &got.Children[1]); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("removing a removed child: %v", err)
		}
	})
}

// TestConcurrentAddsLoseNoChild: writers adding children to one parent at
// once, each fenced by the parent's existence, all land; writers holding
// the parent's ETag conflict, retry, and land too.
func TestConcurrentAddsLoseNoChild(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		f := newFamilies(t, b)
		if err := f.Insert(ctx, &Employee{Department: "Sales", ID: "9", Name: "Busy"}); err != nil {
			t.Fatal(err)
		}
		writers, each := 8, 10
		if b.Short() {
			each = 4
		}
		var conflicts atomic.Int64
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for j := range each {
					year := 1000 + w*100 + j
					if w%2 == 0 {
						if err := f.Add(ctx, &Employee{Department: "Sales", ID: "9"}, reviews("9", year)...); err != nil {
							t.Error(err)
						}
						continue
					}
					for {
						cur, err := f.Get(ctx, Employee{Department: "Sales", ID: "9"})
						if err != nil {
							t.Error(err)
							return
						}
						err = f.Add(ctx, &cur.Parent, reviews("9", year)...)
						if errors.Is(err, store.ErrPreconditionFailed) {
							conflicts.Add(1)
							continue
						}
						if err != nil {
							t.Error(err)
						}
						break
					}
				}
			})
		}
		wg.Wait()
		got, err := f.Get(ctx, Employee{Department: "Sales", ID: "9"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Children) != writers*each {
			t.Fatalf("%d children, want %d", len(got.Children), writers*each)
		}
		t.Logf("writers %d, children %d, fence conflicts retried %d, lost 0", writers, writers*each, conflicts.Load())
	})
}

// TestDeleteLargeFamilyResumes: a family larger than one transaction is
// deleted in fenced transactions, the first marking the parent, the last
// deleting it; when the store fails every transaction after the first,
// Delete stops with a DeletePendingError that counts what it deleted and
// what remains, the family reads as deleted, and Delete again finishes.
func TestDeleteLargeFamilyResumes(t *testing.T) {
	defer onetomany.SetBackoff(func(int) time.Duration { return 0 })()
	var failing atomic.Bool // whether transactions fail, once ok has gone through
	var ok atomic.Int64
	b := backendtest.Memstore(memstore.WithFaults(func(op memstore.Operation, _ string) error {
		if op == memstore.OpTransact && failing.Load() && ok.Add(-1) < 0 {
			return memstore.ServerBusy()
		}
		return nil
	}))
	ctx := t.Context()
	f := newFamilies(t, b)
	emp := &Employee{Department: "Sales", ID: "big", Name: "Many"}
	if err := f.Insert(ctx, emp); err != nil {
		t.Fatal(err)
	}
	for start := 0; start < 250; start += 50 {
		var ys []int
		for y := start; y < start+50; y++ {
			ys = append(ys, y)
		}
		if err := f.Add(ctx, emp, reviews("big", ys...)...); err != nil {
			t.Fatal(err)
		}
	}
	ok.Store(1) // every transaction of the delete after the first fails
	failing.Store(true)
	err := f.Delete(ctx, emp)
	var pending *onetomany.DeletePendingError
	if !errors.As(err, &pending) || !errors.Is(err, onetomany.ErrDeletePending) || !errors.Is(err, store.ErrThrottled) {
		t.Fatalf("Delete with failures part-way: %v, want a DeletePendingError wrapping the throttling", err)
	}
	left := 250 - onetomany.MaxChildrenPerWrite
	if pending.Deleted != onetomany.MaxChildrenPerWrite || pending.Remaining != 1+left {
		t.Fatalf("DeletePendingError says %d deleted, %d remaining; want %d and %d", pending.Deleted, pending.Remaining, onetomany.MaxChildrenPerWrite, 1+left)
	}
	failing.Store(false)
	if _, err := f.Get(ctx, Employee{Department: "Sales", ID: "big"}); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, onetomany.ErrDeletePending) {
		t.Fatalf("Get of a family being deleted: %v", err)
	}
	n := 0
	for _, err := range f.Children(ctx, Employee{Department: "Sales", ID: "big"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != left || rowsOf(t, f.Table()) != 1+left {
		t.Fatalf("after the failure: %d children, %d rows; want %d children and the marked parent", n, rowsOf(t, f.Table()), left)
	}
	if err := f.Delete(ctx, &Employee{Department: "Sales", ID: "big"}); err != nil {
		t.Fatal(err)
	}
	if n := rowsOf(t, f.Table()); n != 0 {
		t.Fatalf("%d rows left", n)
	}
	if err := f.Delete(ctx, &Employee{Department: "Sales", ID: "big"}); err != nil {
		t.Fatalf("deleting a deleted family: %v", err)
	}
}

// TestLostAnswersNeverHalfWrite: family writes whose answers are lost (or
// answered 500) are resolved or reported unknown, never as failed when
// they happened, and the family is always whole.
func TestLostAnswersNeverHalfWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	var mu sync.Mutex
	faults := 0
	b := backendtest.Memstore(memstore.WithFaults(func(op memstore.Operation, _ string) error {
		if op != memstore.OpTransact {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.IntN(4) {
		case 0:
			faults++
			return memstore.AfterApply(memstore.ResponseLost())
		case 1:
			faults++
			return memstore.InternalError()
		}
		return nil
	}))
	ctx := t.Context()
	f := newFamilies(t, b)
	writes, done, notDone, unknown := 0, 0, 0, 0
	for i := range 60 {
		id := fmt.Sprintf("e%02d", i)
		emp := &Employee{Department: "Sales", ID: id, Name: id}
		err := f.Insert(ctx, emp, reviews(id, 1, 2, 3)...)
		writes++
		rows := 0
		for _, err := range store.All(ctx, f.Table(), store.Query{Filter: "PartitionKey eq 'Sales' and RowKey ge 'emp !" + id + "' and RowKey lt 'emp !" + id + "!'"}) {
			if err != nil {
				t.Fatal(err)
			}
			rows++
		}
		switch {
		case err == nil:
			done++
			if rows != 4 {
				t.Fatalf("insert %s reported done, %d of 4 rows stored", id, rows)
			}
		case errors.Is(err, store.ErrUnknownOutcome):
			unknown++
			if rows != 0 && rows != 4 {
				t.Fatalf("insert %s unknown, %d of 4 rows stored", id, rows)
			}
		default:
			notDone++
			if rows != 0 {
				t.Fatalf("insert %s reported not done (%v), but %d rows stored", id, err, rows)
			}
		}
	}
	t.Logf("writes %d, faults %d: done %d, not done %d, unknown %d; half-written 0, failed-but-applied 0", writes, faults, done, notDone, unknown)
}

// TestBadInputIsRefused: each refusal names the value and the limit, and
// nothing is written.
func TestBadInputIsRefused(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		f := newFamilies(t, b)
		var ys []int
		for y := range onetomany.MaxChildrenPerWrite + 1 {
			ys = append(ys, y)
		}
		err := f.Insert(ctx, &Employee{Department: "Sales", ID: "1"}, reviews("1", ys...)...)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "at most 99") {
			t.Fatalf("100 children: %v", err)
		}
		err = f.Insert(ctx, &Employee{Department: "Sales", ID: "1"}, reviews("2", 2020)...)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "belongs to parent") {
			t.Fatalf("a child of another parent: %v", err)
		}
		err = f.Insert(ctx, &Employee{Department: "Sales", ID: strings.Repeat("x", 1100)})
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a key too long: %v", err)
		}
		if err := f.Insert(ctx, nil); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a nil parent: %v", err)
		}
		if err := f.Insert(ctx, &Employee{Department: "Sales", ID: "1"}, nil); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a nil child: %v", err)
		}
		if n := rowsOf(t, f.Table()); n != 0 {
			t.Fatalf("%d rows written by refused writes", n)
		}
		type plain struct {
			PK string `table:",pk"`
			RK string `table:",rk"`
		}
		if _, err := onetomany.New[plain, Review](b.Store, f.Table().Name(), func(*Review) plain { return plain{} }); err == nil || !strings.Contains(err.Error(), "discriminator") {
			t.Fatalf("a parent without a discriminator: %v", err)
		}
		if _, err := onetomany.New[Employee, Review](b.Store, f.Table().Name(), nil); err == nil {
			t.Fatal("a nil parentOf was accepted")
		}
	})
}
