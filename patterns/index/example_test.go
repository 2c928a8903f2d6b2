package index_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// Person is stored in its team's partition under its id.
type Person struct {
	Team  string     `table:",pk"`
	ID    string     `table:",rk"`
	ETag  store.ETag `table:",etag"`
	Name  string
	Email string
}

// The indexes are the model's: declared once, written by its writes;
// the view finds an entity by a unique value, by a shared one, and by a
// range of values. A taken value is refused by the model's write.
func ExampleNew() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "People")
	eng, _ := eventual.New(st, "people", nil)
	people, err := model.Define(st, "People", &model.Options{Engine: eng},
		model.Unique("email", func(p *Person) string { return p.Email }),
		model.Index("name", func(p *Person) string { return p.Name }).Project())
	if err != nil {
		fmt.Println(err)
		return
	}
	byValue, err := index.New(people, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []*Person{
		{Team: "red", ID: "1", Name: "Jones", Email: "ann@example.com"},
		{Team: "red", ID: "2", Name: "Smith", Email: "bob@example.com"},
		{Team: "red", ID: "3", Name: "Jones", Email: "cy@example.com"},
	} {
		_ = people.Insert(ctx, p) // the entity and its copies, one transaction
	}

	p, err := byValue.Find(ctx, "red", "email", "bob@example.com")
	fmt.Println(p.ID, p.Name, err)
	for p, err := range byValue.FindAll(ctx, "red", "name", "Jones") {
		fmt.Println(p.ID, p.Email, err) // keys-only copies: each read from its row
	}
	for p, err := range byValue.Range(ctx, "red", "email", "b", "d") {
		fmt.Println(p.Email, err)
	}

	err = people.Insert(ctx, &Person{Team: "red", ID: "4", Email: "ann@example.com"})
	fmt.Println(errors.Is(err, partition.ErrDuplicate))
	// Output:
	// 2 Smith <nil>
	// 1 ann@example.com <nil>
	// 3 cy@example.com <nil>
	// bob@example.com <nil>
	// cy@example.com <nil>
	// true
}
