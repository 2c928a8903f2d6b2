package logtail_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// Claim is an expense claim: the employee is the partition, the stream
// sets the RowKey.
type Claim struct {
	Employee string `table:",pk"`
	Key      string `table:",rk"`
	Amount   float64
	What     string
}

// claims returns a stream of one employee's claims with four claims in
// it, made a minute apart from 09:00.
func claims() *logtail.Stream[Claim] {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Expenses"); err != nil {
		panic(err)
	}
	next := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { t := next; next = next.Add(time.Minute); return t }
	s, err := logtail.New[Claim](st.Table("Expenses"), "emp000123", &logtail.Options{Now: clock})
	if err != nil {
		panic(err)
	}
	for _, c := range []Claim{{Amount: 12.5, What: "taxi"}, {Amount: 80, What: "hotel"}, {Amount: 7.25, What: "lunch"}, {Amount: 42, What: "train"}} {
		if _, err := s.Append(ctx, c); err != nil {
			panic(err)
		}
	}
	return s
}

func ExampleStream_Latest() {
	s := claims()
	last, err := s.Latest(context.Background(), 2) // one query: $top=2
	if err != nil {
		panic(err)
	}
	for _, ev := range last {
		fmt.Println(ev.Time.Format(time.TimeOnly), ev.Value.What, ev.Value.Amount)
	}
	// Output:
	// 09:03:00 train 42
	// 09:02:00 lunch 7.25
}

func ExampleStream_Page() {
	s := claims()
	ctx := context.Background()
	token := ""
	for {
		page, err := s.Page(ctx, token, 3)
		if err != nil {
			panic(err)
		}
		for _, ev := range page.Events {
			fmt.Print(ev.Value.What, " ")
		}
		fmt.Println("| more:", page.Next != "")
		if page.Next == "" {
			break
		}
		token = page.Next // hand it to the next request to go back in time
	}
	// Output:
	// train lunch hotel | more: true
	// taxi | more: false
}

func ExampleStream_Since() {
	s := claims()
	since := time.Date(2026, 11, 22, 9, 1, 0, 0, time.UTC)
	for ev, err := range s.Since(context.Background(), since) {
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Time.Format(time.TimeOnly), ev.Value.What)
	}
	// Output:
	// 09:03:00 train
	// 09:02:00 lunch
	// 09:01:00 hotel
}
