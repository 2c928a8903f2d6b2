package mapper

import (
	"context"
	"reflect"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Row is one entity of a page ReadPage read: its keys, and its value
// decoded as T or the error that kept it from decoding.
type Row[T any] struct {
	// PartitionKey and RowKey are the entity's keys, whatever T does with
	// them.
	PartitionKey, RowKey string
	// Value is the entity as T; the zero T when Err is set.
	Value T
	// Err is why the entity could not be decoded as T: a row of another
	// kind (ErrWrongKind), a value that does not fit its field (*Error).
	Err error
}

// ReadPage reads one page of q from tbl and appends its entities, in key
// order, to rows, each decoded as T with Decode's rules (a type with a
// kind refuses another kind's rows with ErrWrongKind). It returns rows
// and the page's continuation token ("" on the last page). It is the
// page read under Repository.Query, for code that sends queries of its
// own (a pattern package's key ranges) and wants values of T without
// building store.Entity values first: over a store.TypedTable (memstore,
// azstore) the backend reads each entity straight into T
// (store.TypedTable.QueryInto); over any other Table it decodes the
// entities of Table.Query. q goes to the table as it is: the caller
// chooses its filter (add the kind's condition to read one kind only),
// $select and $top. A failed request returns its error and rows as they
// were.
func ReadPage[T any](ctx context.Context, tbl store.Table, q store.Query, rows []Row[T]) ([]Row[T], string, error) {
	c, err := codecFor(reflect.TypeFor[T]())
	if err != nil {
		return rows, "", err
	}
	typed, _ := driver.Typed(tbl)
	return readPage(ctx, c, tbl, typed, q, rows)
}

// readPage is ReadPage with T's codec and tbl's typed lane (nil for
// none) known.
func readPage[T any](ctx context.Context, c *codec, tbl store.Table, typed store.TypedTable, q store.Query, rows []Row[T]) ([]Row[T], string, error) {
	if typed == nil {
		page, err := tbl.Query(ctx, q)
		if err != nil {
			return rows, "", err
		}
		rows = growRows(rows, len(page.Entities))
		for i := range page.Entities {
			e := &page.Entities[i]
			rows = append(rows, Row[T]{PartitionKey: e.PartitionKey, RowKey: e.RowKey})
			row := &rows[len(rows)-1]
			if err := c.decodeEntity(e, reflect.ValueOf(&row.Value).Elem()); err != nil {
				var zero T
				row.Value, row.Err = zero, err // never hand out a half-decoded value
			}
		}
		return rows, page.Continuation, nil
	}
	// Each entity is read into one scratch value by one reader, and copied
	// to its row when the next begins (or the page ends): the rows may
	// move as they grow, the scratch value never does.
	if q.Top > 0 {
		rows = growRows(rows, min(q.Top, 32))
	}
	p := &pageRows[T]{rows: rows}
	p.rd.c, p.rd.v = c, reflect.ValueOf(&p.v).Elem()
	start := len(rows)
	cont, _, err := typed.QueryInto(ctx, q, p.next)
	if err != nil {
		clear(p.rows[start:]) // drop the references the failed page left
		return p.rows[:start], "", err
	}
	p.flush()
	return p.rows, cont, nil
}

// pageRows collects the rows of one typed page.
type pageRows[T any] struct {
	rows []Row[T]
	v    T
	rd   reader
	open bool // rd holds an entity not yet in rows
}

// next is the QueryInto callback: the entity before is done.
func (p *pageRows[T]) next() store.EntityReader {
	p.flush()
	p.rd.reset()
	p.open = true
	return &p.rd
}

// flush moves the entity rd read into rows.
func (p *pageRows[T]) flush() {
	if !p.open {
		return
	}
	p.open = false
	row := Row[T]{PartitionKey: p.rd.pk, RowKey: p.rd.rk}
	if row.Err = p.rd.finish(); row.Err == nil {
		row.Value = p.v
	}
	p.rows = append(p.rows, row)
}

// growRows makes room for n more rows.
func growRows[T any](rows []Row[T], n int) []Row[T] {
	if cap(rows)-len(rows) < n {
		rows = append(make([]Row[T], 0, len(rows)+n), rows...)
	}
	return rows
}
