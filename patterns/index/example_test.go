package index_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// Person is stored under "p_<id>"; its index copies sit beside it.
type Person struct {
	Team  string     `table:",pk"`
	ID    string     `table:",rk"`
	ETag  store.ETag `table:",etag"`
	Name  string
	Email string
}

func (Person) TableKind() mapper.Kind { return mapper.Kind{Prefix: "p_"} }

// An entity found by a unique secondary index, a value moved, and a taken
// value refused.
func ExampleNew() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "People")
	people, err := index.New[Person](st, "People",
		index.Unique[Person]("email", func(p *Person) string { return p.Email }))
	if err != nil {
		fmt.Println(err)
		return
	}
	ann := &Person{Team: "red", ID: "p_1", Name: "Ann", Email: "ann@example.com"}
	bob := &Person{Team: "red", ID: "p_2", Name: "Bob", Email: "bob@example.com"}
	_ = people.Insert(ctx, ann) // the entity and its copy, one transaction
	_ = people.Insert(ctx, bob)

	p, err := people.Find(ctx, "red", "email", "bob@example.com")
	fmt.Println(p.ID, p.Name, err)

	ann.Email = "ann@example.org" // moves the copy in the same transaction
	fmt.Println(people.Update(ctx, ann))

	bob.Email = "ann@example.org"
	err = people.Update(ctx, bob)
	fmt.Println(errors.Is(err, partition.ErrDuplicate), err)
	// Output:
	// p_2 Bob <nil>
	// <nil>
	// true partition "red" of table People: email "ann@example.org" is taken: EntityAlreadyExists (409) at action 3: entity (PartitionKey "red", RowKey "email !ann@example.2Eorg") already exists in table "People"
}

// All entities sharing a value of a non-unique index, in one range query.
func ExampleTable_FindAll() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "People")
	people, _ := index.New[Person](st, "People",
		index.NonUnique[Person]("name", func(p *Person) string { return p.Name }))
	for i, n := range []string{"Jones", "Smith", "Jones"} {
		_ = people.Insert(ctx, &Person{Team: "red", ID: fmt.Sprintf("p_%d", i), Name: n})
	}
	for p, err := range people.FindAll(ctx, "red", "name", "Jones") {
		fmt.Println(p.ID, p.Name, err)
	}
	// Output:
	// p_0 Jones <nil>
	// p_2 Jones <nil>
}
