package partition_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// A commit writes the caller's rows, the fence and the tail with the same
// new version, and its outbox rows; a second commit builds on the first.
func TestCommitWritesRowsFenceTailAndOutbox(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "Sales", nil)

		tx := begin(t, p)
		if tx.Base().Exists() || tx.Base().Version != 0 {
			t.Fatalf("fresh partition: base %+v, want version 0 without a fence row", tx.Base())
		}
		must(t, tx.Insert("employee", row("emp_000123", "Name", "Ada")))
		must(t, tx.Insert("index email", row("email_ada@contoso.com", "ID", "000123")))
		id, err := tx.Outbox(partition.Message{Topic: "employee-added", Body: []byte("000123")})
		must(t, err)
		res, err := tx.Commit(ctx)
		must(t, err)
		if res.Version != 1 || res.Recovered || len(res.ETags) != 2 || res.ETags[0] == "" || res.ETags[1] == "" {
			t.Fatalf("result %+v: want version 1 and two ETags", res)
		}
		if !reflect.DeepEqual(res.Outbox, []string{id}) {
			t.Fatalf("outbox ids %v, want [%s]", res.Outbox, id)
		}
		if f, tl := versions(t, tbl, "Sales"); f != 1 || tl != 1 {
			t.Fatalf("fence version %d, tail version %d: want 1 and 1", f, tl)
		}
		stored, err := tbl.Get(ctx, "Sales", "emp_000123", nil)
		must(t, err)
		if stored.ETag != res.ETags[0] || stored.Properties["Name"] != "Ada" {
			t.Fatalf("stored %+v, want Name Ada with ETag %s", stored, res.ETags[0])
		}
		// The raw partition: fence first, data, tail, then the outbox row.
		var got []string
		for _, e := range raw(t, tbl, "Sales") {
			got = append(got, e.RowKey)
		}
		want := []string{partition.FenceKey, "email_ada@contoso.com", "emp_000123", partition.TailKey, partition.OutboxPrefix + id}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("partition rows %+q, want %+q", got, want)
		}

		// The next commit, begun from the Result without a read, builds on it.
		tx2, err := p.BeginAt(res.Fence)
		must(t, err)
		must(t, tx2.Update("employee", row("emp_000123", "Name", "Ada L."), store.Merge, res.ETags[0]))
		must(t, tx2.Delete("index email", "email_ada@contoso.com", res.ETags[1]))
		res2, err := tx2.Commit(ctx)
		must(t, err)
		if res2.Version != 2 || res2.ETags[1] != "" {
			t.Fatalf("second result %+v: want version 2 and no ETag for the delete", res2)
		}
		if ks := dataKeys(t, tbl, "Sales"); !reflect.DeepEqual(ks, []string{"emp_000123"}) {
			t.Fatalf("data rows %q after the delete", ks)
		}
		if f, tl := versions(t, tbl, "Sales"); f != 2 || tl != 2 {
			t.Fatalf("fence version %d, tail version %d: want 2 and 2", f, tl)
		}
	})
}

// Two transactions begun from the same state: the second to commit fails
// on the fence with a ConflictError, and nothing of it is written.
func TestConcurrentWriterIsAConflict(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "p", nil)
		for _, fresh := range []bool{true, false} { // the fence's insert, then its update
			a, bb := begin(t, p), begin(t, p)
			must(t, a.Upsert("a", row("a"+a.RequestID()), store.Replace))
			must(t, bb.Upsert("b", row("b"+bb.RequestID()), store.Replace))
			if _, err := a.Commit(ctx); err != nil {
				t.Fatalf("first commit (fresh %v): %v", fresh, err)
			}
			_, err := bb.Commit(ctx)
			var ce *partition.ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, partition.ErrConflict) {
				t.Fatalf("second commit (fresh %v): %v, want a ConflictError", fresh, err)
			}
			if ce.Version != bb.Base().Version || ce.Err == nil || ce.Partition != "p" {
				t.Fatalf("ConflictError %+v: want version %d and the service's error", ce, bb.Base().Version)
			}
			if _, err := tbl.Get(ctx, "p", "b"+bb.RequestID(), nil); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the refused transaction's row is there: %v", err)
			}
		}
		if f, tl := versions(t, tbl, "p"); f != 2 || tl != 2 {
			t.Fatalf("versions %d/%d after two winning commits, want 2/2", f, tl)
		}
	})
}

// The error of a refused transaction names the failing row by its label
// and meaning: an insert that meets a row is a DuplicateError, a stale
// If-Match a ChangedError, a missing row a ChangedError with Missing; the
// fence is not moved and no row is written.
func TestErrorsTypedByTheFailingRow(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "Sales", nil)
		tx := begin(t, p)
		must(t, tx.Insert("employee", row("emp_1", "Email", "a@x")))
		must(t, tx.Insert("index email", row("email_a@x", "ID", "1")))
		res, err := tx.Commit(ctx)
		must(t, err)
		empETag := res.ETags[0]

		cases := []struct {
			name  string
			build func(tx *partition.Txn)
			check func(t *testing.T, err error)
		}{
			{"duplicate index value", func(tx *partition.Txn) {
				must(t, tx.Insert("employee", row("emp_2", "Email", "a@x")))
				must(t, tx.Insert("index email", row("email_a@x", "ID", "2")))
			}, func(t *testing.T, err error) {
				var de *partition.DuplicateError
				if !errors.As(err, &de) || !errors.Is(err, partition.ErrDuplicate) {
					t.Fatalf("%v: want a DuplicateError", err)
				}
				if de.Label != "index email" || de.RowKey != "email_a@x" || de.Index != 1 || de.Kind != store.ActionInsert {
					t.Fatalf("DuplicateError names %+v, want row 1 \"index email\" email_a@x", de.Row)
				}
				if !errors.Is(err, store.ErrAlreadyExists) || de.Err.Code != store.CodeEntityAlreadyExists {
					t.Fatalf("%v: want the service's EntityAlreadyExists inside", err)
				}
			}},
			{"entity changed", func(tx *partition.Txn) {
				must(t, tx.Insert("note", row("note_1")))
				must(t, tx.Update("employee", row("emp_1", "Email", "b@x"), store.Merge, `W/"datetime'2000-01-01T00%3A00%3A00Z'"`))
			}, func(t *testing.T, err error) {
				var ce *partition.ChangedError
				if !errors.As(err, &ce) || !errors.Is(err, partition.ErrChanged) || ce.Missing {
					t.Fatalf("%v: want a ChangedError, not Missing", err)
				}
				if ce.Label != "employee" || ce.Index != 1 || !errors.Is(err, store.ErrPreconditionFailed) {
					t.Fatalf("ChangedError names %+v: want row 1 \"employee\" and a 412 inside", ce.Row)
				}
			}},
			{"entity gone", func(tx *partition.Txn) {
				must(t, tx.Delete("employee", "emp_missing", store.ETagAny))
			}, func(t *testing.T, err error) {
				var ce *partition.ChangedError
				if !errors.As(err, &ce) || !ce.Missing || ce.RowKey != "emp_missing" || !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%v: want a ChangedError with Missing for emp_missing", err)
				}
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tx := begin(t, p)
				c.build(tx)
				_, err := tx.Commit(ctx)
				c.check(t, err)
				if errors.Is(err, partition.ErrConflict) {
					t.Fatalf("%v matches ErrConflict", err)
				}
				if f, tl := versions(t, tbl, "Sales"); f != 1 || tl != 1 {
					t.Fatalf("versions %d/%d after a refused commit, want 1/1", f, tl)
				}
				if ks := dataKeys(t, tbl, "Sales"); !reflect.DeepEqual(ks, []string{"email_a@x", "emp_1"}) {
					t.Fatalf("data rows %q after a refused commit", ks)
				}
			})
		}
		got, err := tbl.Get(ctx, "Sales", "emp_1", nil)
		must(t, err)
		if got.ETag != empETag {
			t.Fatalf("emp_1 was rewritten by a refused commit")
		}
	})
}

// A read-modify-write: a transaction begun from a Snapshot fails when
// anything in the partition changed after the read, even a row the
// transaction does not touch.
func TestBeginAtSnapshotSeesAnyChange(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "p", nil)
		tx := begin(t, p)
		must(t, tx.Insert("x", row("x", "N", int64(1))))
		must(t, tx.Insert("y", row("y", "N", int64(1))))
		_, err := tx.Commit(ctx)
		must(t, err)

		snap, err := p.Read(ctx, nil)
		must(t, err)
		other := begin(t, p)
		must(t, other.Upsert("y", row("y", "N", int64(2)), store.Replace))
		_, err = other.Commit(ctx)
		must(t, err)

		tx, err = p.BeginAt(snap.Fence)
		must(t, err)
		must(t, tx.Update("x", row("x", "N", int64(2)), store.Replace, snap.Rows[0].ETag))
		if _, err := tx.Commit(ctx); !errors.Is(err, partition.ErrConflict) {
			t.Fatalf("commit on a stale snapshot: %v, want a conflict (row y changed)", err)
		}
		if _, err := p.BeginAt(partition.Fence{}); err == nil {
			t.Fatalf("BeginAt took the fence of another partition")
		}
	})
}

// A query that forgets DataCond reads the reserved rows; with DataCond it
// reads exactly the data rows.
func TestDataCondExcludesReservedRows(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "p", nil)
		tx := begin(t, p)
		for _, rk := range []string{" space first", "!bang", "a", "zz", "\u00e9t\u00e9", "\U0001F600 emoji", "\uE000 private use"} {
			must(t, tx.Insert(rk, row(rk)))
		}
		_, err := tx.Outbox(partition.Message{Topic: "t"})
		must(t, err)
		_, err = tx.Commit(ctx)
		must(t, err)
		if n := len(raw(t, tbl, "p")); n != 10 {
			t.Fatalf("raw partition holds %d rows, want 7 data + fence + tail + outbox", n)
		}
		page, err := tbl.Query(ctx, store.Query{Filter: partition.DataCond("p").String()})
		must(t, err)
		var got []string
		for _, e := range page.Entities {
			got = append(got, e.RowKey)
		}
		want := []string{" space first", "!bang", "a", "zz", "\u00e9t\u00e9", "\U0001F600 emoji", "\uE000 private use"}
		if !reflect.DeepEqual(got, want) || page.Continuation != "" {
			t.Fatalf("DataCond query: %+q, want %+q in the service's order", got, want)
		}
		for _, rk := range want {
			if partition.IsReserved(rk) {
				t.Fatalf("IsReserved(%+q) = true for a data key", rk)
			}
		}
		for _, rk := range []string{"", "\uFFFD", "\uFFFDoutbox_x", "\uFFFE", "\uFFFF"} {
			if !partition.IsReserved(rk) {
				t.Fatalf("IsReserved(%+q) = false", rk)
			}
		}
	})
}
