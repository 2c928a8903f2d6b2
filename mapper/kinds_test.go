package mapper_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// The newcomer's order service: a customer and its orders in one
// partition, orders newest first.

type shopCustomer struct {
	ID   string `table:",pk"`
	Row  string `table:",rk"` // always "customer"
	Name string
}

func (shopCustomer) TableKind() mapper.Kind { return mapper.Kind{Prefix: "customer"} }

type shopOrder struct {
	Customer string
	Placed   time.Time
	ID       string
	ETag     store.ETag `table:",etag"`
	Total    int64
}

func (shopOrder) TableKind() mapper.Kind { return mapper.Kind{Prefix: "order_"} }

// TableKeys puts the newest order first: order_<inverted ticks>_<id>.
func (o shopOrder) TableKeys() (string, string, error) {
	inv, err := keys.InvertedTicks(o.Placed)
	if err != nil {
		return "", "", err
	}
	return o.Customer, "order_" + inv + "_" + o.ID, nil
}

func (o *shopOrder) SetTableKeys(pk, rk string) error {
	rest, ok := strings.CutPrefix(rk, "order_")
	inv, id, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 {
		return fmt.Errorf("RowKey %q is not an order key", rk)
	}
	t, err := keys.ParseInvertedTicks(inv)
	if err != nil {
		return err
	}
	o.Customer, o.Placed, o.ID = pk, t, id
	return nil
}

// The design guide's employee with its yearly reviews, told apart by a
// discriminator property and a RowKey prefix both.

type guideEmployee struct {
	Department string `table:",pk"`
	RowKey     string `table:",rk"`
	Name       string
}

func (guideEmployee) TableKind() mapper.Kind {
	return mapper.Kind{Prefix: "empid_", Property: "EntityType", Value: "Employee"}
}

type guideReview struct {
	Department string     `table:",pk"`
	RowKey     string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	Rating     int32
	Comment    string
}

func (guideReview) TableKind() mapper.Kind {
	return mapper.Kind{Prefix: "review_", Property: "EntityType", Value: "Review"}
}

// TestKindsKeepPartitionsApart: in a partition holding a customer and its
// orders, and one holding employees and their reviews, no query or read
// of one kind returns the other, the discriminator survives every write
// mode, a key without its kind's prefix is refused, orders come newest
// first and a day's orders are one range, and values are read, updated
// and deleted by their key fields. On memstore and Azurite.
func TestKindsKeepPartitionsApart(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		name := b.NewTable(t, "kinds")
		customers := mapper.NewRepository[shopCustomer](b.Store, name)
		orders := mapper.NewRepository[shopOrder](b.Store, name)

		day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
		for _, c := range []string{"c1", "c2"} {
			if err := customers.Insert(ctx, &shopCustomer{ID: c, Row: "customer", Name: "Customer " + c}); err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				o := shopOrder{Customer: c, Placed: day.Add(time.Duration(i) * 10 * time.Hour), ID: fmt.Sprintf("o%d", i), Total: int64(100 * i)}
				if err := orders.Insert(ctx, &o); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A partition scan of one kind returns only that kind.
		var got []string
		for o, err := range orders.Partition("c1").Query(ctx) {
			if err != nil {
				t.Fatalf("orders of c1: %v", err)
			}
			got = append(got, o.ID)
		}
		if strings.Join(got, ",") != "o5,o4,o3,o2,o1,o0" {
			t.Fatalf("orders of c1 = %v, want all six, newest first, and no customer row", got)
		}
		n := 0
		for c, err := range customers.Query(ctx) {
			if err != nil || c.Row != "customer" {
				t.Fatalf("customers: %+v, %v", c, err)
			}
			n++
		}
		if n != 2 {
			t.Fatalf("a table scan of customers found %d, want 2", n)
		}
		// A day's orders, newest first, in one range.
		rng, err := keys.InvertedTicksRange("order_", day, day.AddDate(0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for o, err := range orders.Partition("c1").Query(ctx, mapper.Where[shopOrder]("RowKey").InRange(rng)) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, o.ID)
		}
		if strings.Join(got, ",") != "o2,o1,o0" {
			t.Fatalf("orders of 2024-03-01 = %v, want o2, o1, o0 (o3 is at 30 h)", got)
		}
		// Read, update and delete by the key fields, no key arithmetic.
		key := shopOrder{Customer: "c1", Placed: day.Add(20 * time.Hour), ID: "o2"}
		o, err := orders.GetByKey(ctx, &key)
		if err != nil || o.Total != 200 || !o.Placed.Equal(key.Placed) {
			t.Fatalf("GetByKey: %+v, %v", o, err)
		}
		o.Total = 250
		if err := orders.Update(ctx, &o, store.Replace); err != nil {
			t.Fatal(err)
		}
		if err := orders.DeleteByKey(ctx, &shopOrder{Customer: "c1", Placed: day, ID: "o0"}); err != nil {
			t.Fatal(err)
		}
		if _, err := orders.GetByKey(ctx, &shopOrder{Customer: "c1", Placed: day, ID: "o0"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted order: %v", err)
		}
		// A point read of another kind's row is refused, naming the row.
		_, orderRK, _ := key.TableKeys()
		if _, err := customers.Get(ctx, "c1", orderRK); !errors.Is(err, mapper.ErrWrongKind) || !strings.Contains(err.Error(), orderRK) {
			t.Fatalf("a customer read of an order row: %v, want ErrWrongKind naming the row", err)
		}
		// A key without its kind's prefix is refused before sending, as
		// a *store.Error from tablekit's own checks.
		bad := shopCustomer{ID: "c3", Row: "cust", Name: "x"}
		err = customers.Insert(ctx, &bad)
		var se *store.Error
		if !errors.As(err, &se) || se.Code != store.CodeInvalidInput || se.Source != store.SourceClient || !strings.Contains(err.Error(), `"customer"`) {
			t.Fatalf("a customer key without the prefix: %v", err)
		}

		// The guide's employees and reviews: prefix and discriminator.
		staff := mapper.NewRepository[guideEmployee](b.Store, name)
		reviews := mapper.NewRepository[guideReview](b.Store, name)
		for i := range 3 {
			if err := staff.Insert(ctx, &guideEmployee{Department: "Sales", RowKey: fmt.Sprintf("empid_%06d", i), Name: fmt.Sprint("E", i)}); err != nil {
				t.Fatal(err)
			}
			r := guideReview{Department: "Sales", RowKey: fmt.Sprintf("review_%06d_2024", i), Rating: int32(i)}
			if err := reviews.Insert(ctx, &r); err != nil {
				t.Fatal(err)
			}
			// Replace keeps the discriminator.
			r.Comment = "kept"
			if err := reviews.Update(ctx, &r, store.Replace); err != nil {
				t.Fatal(err)
			}
		}
		for e, err := range staff.Partition("Sales").Query(ctx) {
			if err != nil || !strings.HasPrefix(e.RowKey, "empid_") {
				t.Fatalf("employees: %+v, %v", e, err)
			}
		}
		nr := 0
		for r, err := range reviews.Partition("Sales").Query(ctx) {
			if err != nil || r.Comment != "kept" {
				t.Fatalf("reviews: %+v, %v", r, err)
			}
			nr++
		}
		if nr != 3 {
			t.Fatalf("%d reviews, want 3", nr)
		}
		raw, err := b.Store.Table(name).Get(ctx, "Sales", "review_000001_2024", nil)
		if err != nil || raw.Properties["EntityType"] != "Review" {
			t.Fatalf("the stored review after a Replace: %v, %v", raw.Properties, err)
		}
		// A row that has the prefix but another discriminator is refused.
		if _, err := b.Store.Table(name).Upsert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "empid_999999",
			Properties: map[string]any{"EntityType": "Contractor"}}, store.Replace); err != nil {
			t.Fatal(err)
		}
		if _, err := staff.Get(ctx, "Sales", "empid_999999"); !errors.Is(err, mapper.ErrWrongKind) {
			t.Fatalf("a row with the prefix and another discriminator: %v", err)
		}
		for e, err := range staff.Partition("Sales").Query(ctx) {
			if err != nil || e.RowKey == "empid_999999" {
				t.Fatalf("the contractor row came back from an employee query: %+v, %v", e, err)
			}
		}
	})
}

// TestRegistryTable: a registry bound to its table reads, writes, updates
// and deletes several kinds with the Repository's conditions, and leaves
// rows of unregistered kinds out of its queries.
func TestRegistryTable(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		name := b.NewTable(t, "regtable")
		reg, err := mapper.NewPropertyRegistry("EntityType")
		if err != nil {
			t.Fatal(err)
		}
		if err := mapper.Register[guideEmployee](reg, "Employee"); err != nil {
			t.Fatal(err)
		}
		if err := mapper.Register[guideReview](reg, "Review"); err != nil {
			t.Fatal(err)
		}
		if err := mapper.Register[shopOrder](reg, "Order"); err == nil {
			t.Fatal("a type that declares no discriminator was registered in a property registry")
		}
		tbl := reg.On(b.Store, name)
		e := guideEmployee{Department: "Sales", RowKey: "empid_000001", Name: "Ann"}
		r := guideReview{Department: "Sales", RowKey: "review_000001_2024", Rating: 4}
		for _, v := range []any{&e, &r} {
			if err := tbl.Insert(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		// A row of another kind in the same partition.
		if _, err := b.Store.Table(name).Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "zz", Properties: map[string]any{"EntityType": "Robot"}}); err != nil {
			t.Fatal(err)
		}
		got, err := tbl.Get(ctx, "Sales", "review_000001_2024")
		if rv, ok := got.(guideReview); err != nil || !ok || rv.Rating != 4 {
			t.Fatalf("Get: %#v, %v", got, err)
		}
		r.Rating = 5
		if err := tbl.Update(ctx, &r, store.Merge); err != nil {
			t.Fatal(err)
		}
		stale := r
		stale.ETag = `W/"datetime'2000-01-01T00%3A00%3A00Z'"`
		if err := tbl.Update(ctx, &stale, store.Merge); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("a stale update: %v", err)
		}
		var kinds []string
		for v, err := range tbl.Query(ctx, mapper.Where[any]("PartitionKey").Eq("Sales")) {
			if err != nil {
				t.Fatalf("query: %v (a row of an unregistered kind must stay out)", err)
			}
			switch x := v.(type) {
			case guideEmployee:
				kinds = append(kinds, "employee "+x.Name)
			case guideReview:
				kinds = append(kinds, fmt.Sprint("review ", x.Rating))
			}
		}
		if strings.Join(kinds, ", ") != "employee Ann, review 5" {
			t.Fatalf("kinds %v", kinds)
		}
		// A typed condition, erased for the registry.
		n := 0
		for _, err := range tbl.Query(ctx, mapper.Where[guideReview]("Rating").Ge(5).Any()) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("reviews rated 5 or more: %d", n)
		}
		if err := tbl.Delete(ctx, &e); !errors.Is(err, mapper.ErrNoETag) {
			t.Fatalf("a conditional delete of a type without an etag field: %v", err)
		}
		if err := tbl.Delete(ctx, &r); err != nil {
			t.Fatal(err)
		}
		if err := tbl.DeleteKey(ctx, "Sales", "empid_000001"); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Get(ctx, "Sales", "empid_000001"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after Delete: %v", err)
		}
	})
}

// TestParsedFilterWithRepository: a filter string from elsewhere queries
// a typed repository, and the repository's kind still applies.
func TestParsedFilterWithRepository(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := t.Context()
		name := b.NewTable(t, "parsed")
		reviews := mapper.NewRepository[guideReview](b.Store, name)
		staff := mapper.NewRepository[guideEmployee](b.Store, name)
		for i := range 5 {
			if err := reviews.Insert(ctx, &guideReview{Department: "Sales", RowKey: fmt.Sprintf("review_%d", i), Rating: int32(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := staff.Insert(ctx, &guideEmployee{Department: "Sales", RowKey: "empid_1", Name: "Rating"}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for r, err := range reviews.Query(ctx, mapper.ParseCond[guideReview]("Rating ge 3 and PartitionKey eq 'Sales'")) {
			if err != nil || r.Rating < 3 {
				t.Fatalf("%+v, %v", r, err)
			}
			n++
		}
		if n != 2 {
			t.Fatalf("%d reviews rated 3 or more, want 2", n)
		}
		for _, err := range reviews.Query(ctx, mapper.ParseCond[guideReview]("Rating gt")) {
			if !errors.Is(err, store.ErrInvalidInput) {
				t.Fatalf("a malformed filter: %v", err)
			}
		}
	})
}
