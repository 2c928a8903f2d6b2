package mapper_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// A log line and a marker row share one partition: a query of a key range
// of its own reads the lines as values of a struct, page by page, and a
// row of another kind in the range is reported, not decoded.
type logLine struct {
	Host string `table:",pk"`
	Key  string `table:",rk"`
	Text string
}

func (logLine) TableKind() mapper.Kind { return mapper.Kind{Prefix: "line_"} }

func ExampleReadPage() {
	ctx := context.Background()
	st := newTable("Logs")
	tbl := st.Table("Logs")
	lines := mapper.NewRepository[logLine](st, "Logs")
	for i, text := range []string{"boot", "ready", "request", "shutdown"} {
		v := logLine{Host: "web1", Key: fmt.Sprintf("line_%02d", i), Text: text}
		if err := lines.Insert(ctx, &v); err != nil {
			fmt.Println(err)
			return
		}
	}
	if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "web1", RowKey: "mark_end"}); err != nil {
		fmt.Println(err)
		return
	}
	// Lines 01 onward, two a page: the caller's own filter and $top.
	q := store.Query{Filter: filter.And(filter.PK.Eq("web1"), filter.RK.Ge("line_01")).String(), Top: 2}
	var rows []mapper.Row[logLine]
	for {
		var next string
		var err error
		rows, next, err = mapper.ReadPage(ctx, tbl, q, rows[:0])
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, row := range rows {
			if row.Err != nil {
				fmt.Println(row.RowKey, "is not a line:", errors.Is(row.Err, mapper.ErrWrongKind))
				continue
			}
			fmt.Println(row.RowKey, row.Value.Text)
		}
		if next == "" {
			break
		}
		q.Continuation = next
	}
	// Output:
	// line_01 ready
	// line_02 request
	// line_03 shutdown
	// mark_end is not a line: true
}
