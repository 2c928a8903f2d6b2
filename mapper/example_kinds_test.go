package mapper_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// Account and Bill share each account's partition; each declares its
// kind, so neither repository ever reads the other's rows.
type Account struct {
	ID    string `table:",pk"`
	Row   string `table:",rk"` // "account"
	Owner string
}

func (Account) TableKind() mapper.Kind { return mapper.Kind{Prefix: "account"} }

type Bill struct {
	Account string `table:",pk"`
	Number  string `table:",rk"` // "inv_0001", ...
	Amount  int64
}

func (Bill) TableKind() mapper.Kind { return mapper.Kind{Prefix: "inv_"} }

func ExampleKind() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Billing")
	accounts := mapper.NewRepository[Account](st, "Billing")
	invoices := mapper.NewRepository[Bill](st, "Billing")

	_ = accounts.Insert(ctx, &Account{ID: "a1", Row: "account", Owner: "Ada"})
	_ = invoices.Insert(ctx, &Bill{Account: "a1", Number: "inv_0001", Amount: 120})
	_ = invoices.Insert(ctx, &Bill{Account: "a1", Number: "inv_0002", Amount: 80})

	// A partition scan of invoices: the account row stays out.
	for inv, err := range invoices.Partition("a1").Query(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(inv.Number, inv.Amount)
	}
	// A key without the kind's prefix is refused before anything is sent.
	err := invoices.Insert(ctx, &Bill{Account: "a1", Number: "0003"})
	var se *store.Error
	fmt.Println(errors.As(err, &se), se.Code, store.SourceOf(err))
	// Reading the account row as an invoice is refused too.
	_, err = invoices.Get(ctx, "a1", "account")
	fmt.Println(errors.Is(err, mapper.ErrWrongKind))
	// Output:
	// inv_0001 120
	// inv_0002 80
	// true InvalidInput client
	// true
}

func ExampleRepository_GetByKey() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Billing")
	invoices := mapper.NewRepository[Bill](st, "Billing")
	_ = invoices.Insert(ctx, &Bill{Account: "a1", Number: "inv_0001", Amount: 120})

	inv, err := invoices.GetByKey(ctx, &Bill{Account: "a1", Number: "inv_0001"})
	fmt.Println(inv.Amount, err)
	// Output:
	// 120 <nil>
}
