package model_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// Staff is an employee as the application sees it: its keys are its
// department and its own id.
type Staff struct {
	Dept     string     `table:",pk"`
	ID       string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	Email    string
	Badge    string
	LastName string
}

// One declaration: a badge unique in the department, an email unique
// across the company, a last-name index across departments, and a change
// log. Every write keeps them all.
func ExampleDefine() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Staff")
	eng, _ := eventual.New(st, "staff", nil)
	_ = eng.Setup(ctx)
	staff, err := model.Define(st, "Staff", &model.Options{Engine: eng},
		model.Unique("badge", func(s *Staff) string { return s.Badge }),
		model.GlobalUnique("email", func(s *Staff) string { return s.Email }),
		model.GlobalIndex("lastname", func(s *Staff) string { return s.LastName }),
		model.Log[Staff]())
	if err != nil {
		fmt.Println(err)
		return
	}

	ann := &Staff{Dept: "Sales", ID: "000223", Email: "ann@contoso.com", Badge: "B-17", LastName: "Jones"}
	_ = staff.Insert(ctx, ann)

	// Read-your-writes: found through the email before any worker ran.
	got, err := staff.Find(ctx, "email", "ann@contoso.com")
	fmt.Println(got.ID, got.Badge, err)

	// A rename: the old email stops finding her at once.
	ann.Email = "ann.jones@contoso.com"
	_ = staff.Update(ctx, ann, store.Merge)
	_, err = staff.Find(ctx, "email", "ann@contoso.com")
	fmt.Println("old email:", err != nil)

	// Another employee cannot take her email, nor her badge.
	err = staff.Insert(ctx, &Staff{Dept: "Ops", ID: "000224", Email: "ann.jones@contoso.com"})
	fmt.Println(err != nil)
	err = staff.Insert(ctx, &Staff{Dept: "Sales", ID: "000225", Badge: "B-17"})
	fmt.Println(err != nil)

	_ = eng.Drain(ctx) // workers write the copies in the other partitions
	jones, _ := staff.FindAll(ctx, "lastname", "Jones")
	fmt.Println(len(jones), jones[0].Email)
	log, _ := staff.Log(ctx, "Sales", "000223", 10)
	for _, e := range log {
		fmt.Println(e.Version, e.Op, e.Entity.Email)
	}
	// Output:
	// 000223 B-17 <nil>
	// old email: true
	// true
	// true
	// 1 ann.jones@contoso.com
	// 2 update ann.jones@contoso.com
	// 1 insert ann@contoso.com
}
