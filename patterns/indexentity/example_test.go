package indexentity_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
)

// Member is an employee as the application sees it.
type Member struct {
	Dept     string     `table:",pk"`
	ID       string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	LastName string
}

// Employees are found by last name in their department through the
// model's List, and in every department through its global index; the
// writes are the model's.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Members")
	eng, _ := eventual.New(st, "members", nil)
	_ = eng.Setup(ctx)
	lastName := func(m *Member) string { return m.LastName }
	members, err := model.Define(st, "Members", &model.Options{Engine: eng},
		model.List("family", lastName),          // in the partition, exact
		model.GlobalIndex("lastname", lastName)) // across partitions
	if err != nil {
		fmt.Println(err)
		return
	}
	byName, err := indexentity.New(members, nil)
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, m := range []Member{{"Sales", "000223", "", "Jones"}, {"Sales", "000310", "", "Jones"}, {"Ops", "000117", "", "Jones"}} {
		_ = members.Insert(ctx, &m)
	}
	ids, err := byName.Keys(ctx, "Sales", "family", "Jones")
	fmt.Println(ids, err)
	for m, err := range byName.FindAll(ctx, "", "lastname", "Jones") {
		fmt.Println(m.Dept, m.ID, err)
	}

	// A change of name: the list changes in the same transaction.
	_ = members.Update(ctx, &Member{Dept: "Sales", ID: "000310", LastName: "Smith"}, store.Replace)
	for m, err := range byName.FindAll(ctx, "Sales", "family", "Jones") {
		fmt.Println(m.Dept, m.ID, err)
	}
	// Output:
	// [("Sales", "000223") ("Sales", "000310")] <nil>
	// Ops 000117 <nil>
	// Sales 000223 <nil>
	// Sales 000310 <nil>
	// Sales 000223 <nil>
}
