package partition_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// refused asserts that err is a refusal made before anything was sent: a
// *store.Error of the given code from tablekit's own checks, whose
// message names every one of the given values.
func refused(t *testing.T, err error, code string, names ...string) {
	t.Helper()
	var se *store.Error
	if !errors.As(err, &se) {
		t.Fatalf("%v: want a *store.Error", err)
	}
	if se.Code != code || se.Source != store.SourceClient {
		t.Fatalf("%v: code %s from %s, want %s from the client's checks", err, se.Code, se.Source, code)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Fatalf("%v: the message does not name %s", err, n)
		}
	}
}

// A bad PartitionKey or bad Options are refused by New, naming the value
// and the limit.
func TestNewRefusesBadInput(t *testing.T) {
	b := backendtest.Memstore()
	tbl := b.Store.Table(b.NewTable(t, "bad"))
	cases := []struct {
		pk    string
		opts  *partition.Options
		code  string
		names []string
	}{
		{"a/b", nil, store.CodeOutOfRangeInput, []string{`"a/b"`, `'/'`}},
		{"tab\there", nil, store.CodeOutOfRangeInput, []string{`U+0009`}},
		{strings.Repeat("k", 1025), nil, store.CodeKeyValueTooLarge, []string{"1025", "1024"}},
		{"ok", &partition.Options{History: partition.MaxHistory + 1}, store.CodeInvalidInput, []string{"257", "256"}},
	}
	for _, c := range cases {
		p, err := partition.New(tbl, c.pk, c.opts)
		if p != nil {
			t.Fatalf("New(%.20q) returned a partition", c.pk)
		}
		refused(t, err, c.code, c.names...)
	}
	// A request id the fence could not list is refused at Begin.
	p := open(t, tbl, "ok", &partition.Options{NewID: func() (string, error) { return "a,b", nil }})
	_, err := p.Begin(context.Background())
	refused(t, err, store.CodeInvalidInput, `"a,b"`, "comma")
}

// Every bad row is refused when it is added, naming the value and the
// limit, and nothing of it is added: the transaction still commits what
// was accepted, and nothing is written before Commit.
func TestTxnRefusesBadRowsAndWritesNothingHalf(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "p", nil)
		tx := begin(t, p)
		must(t, tx.Insert("employee", row("emp_1", "Name", "Ada")))

		refused(t, tx.Insert("email", row("a#b")), store.CodeInvalidInput, `"a#b"`, `'#'`)
		refused(t, tx.Insert("email", row("ctl\x7f")), store.CodeInvalidInput, "U+007F")
		refused(t, tx.Insert("fence?", row("")), store.CodeInvalidInput, "reserved", "fence", `ge " " and lt "\ufffd"`)
		refused(t, tx.Insert("tail?", row("\uFFFDmine")), store.CodeInvalidInput, `"\ufffdmine"`, "reserved")
		refused(t, tx.Upsert("bad", store.Entity{PartitionKey: "q", RowKey: "x"}, store.Merge),
			store.CodeCommandsInBatchActOnDifferentPartitions, `"q"`, `"p"`)
		refused(t, tx.Insert("again", row("emp_1")), store.CodeInvalidDuplicateRow, `"emp_1"`, `"employee"`)
		refused(t, tx.Update("employee", row("emp_2"), store.Merge, ""), store.CodeInvalidInput, "If-Match is empty")
		refused(t, tx.Insert("bad name", row("x", "bad-name", "v")), store.CodePropertyNameInvalid, `"bad-name"`)
		refused(t, tx.Insert("big", row("x", "S", strings.Repeat("s", store.MaxStringUnits+1))), store.CodePropertyValueTooLarge, "32768", "32767")
		_, err := tx.Outbox(partition.Message{Topic: ""})
		refused(t, err, store.CodeInvalidInput, "topic", "256")
		_, err = tx.Outbox(partition.Message{Topic: strings.Repeat("t", 257)})
		refused(t, err, store.CodeInvalidInput, "257", "256")
		_, err = tx.Outbox(partition.Message{Topic: "big", Body: make([]byte, partition.MaxBody+1)})
		refused(t, err, store.CodePropertyValueTooLarge, "983041", "983040")

		if tx.Len() != 1 {
			t.Fatalf("refused rows were added: Len %d", tx.Len())
		}
		if rows := raw(t, tbl, "p"); len(rows) != 0 {
			t.Fatalf("%d rows written before Commit", len(rows))
		}
		res, err := tx.Commit(ctx)
		must(t, err)
		if ks := dataKeys(t, tbl, "p"); len(ks) != 1 || ks[0] != "emp_1" || res.Version != 1 {
			t.Fatalf("after commit: data rows %q, version %d: want only the accepted emp_1", ks, res.Version)
		}
		_, err = tx.Commit(ctx)
		refused(t, err, store.CodeInvalidInput, "committed already")
		refused(t, tx.Insert("late", row("late")), store.CodeInvalidInput, "committed already")
	})
}

// The fence and the tail take 2 of the 100 actions: 98 rows fit, the 99th
// is refused naming the limits (errors.Is mapper.ErrBatchFull); outbox
// rows count too. The full transaction commits.
func TestActionBudget(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		for _, outbox := range []int{0, 3} {
			pk := fmt.Sprintf("p%d", outbox)
			tx := begin(t, open(t, tbl, pk, nil))
			for i := range outbox {
				_, err := tx.Outbox(partition.Message{Topic: "t", Body: []byte{byte(i)}})
				must(t, err)
			}
			fit := partition.MaxRows - outbox
			for i := range fit {
				if free := tx.Free().Rows; free != fit-i {
					t.Fatalf("Free().Rows = %d before row %d, want %d", free, i, fit-i)
				}
				must(t, tx.Insert("row", row(fmt.Sprintf("r%03d", i))))
			}
			err := tx.Insert("one too many", row("r999"))
			if !errors.Is(err, mapper.ErrBatchFull) {
				t.Fatalf("row %d: %v, want ErrBatchFull", fit+1, err)
			}
			refused(t, err, store.CodeInvalidInput, `"r999"`, "100 actions", "2 of them", "at most 98")
			if _, err := tx.Outbox(partition.Message{Topic: "t"}); !errors.Is(err, mapper.ErrBatchFull) {
				t.Fatalf("outbox row past the budget: %v", err)
			}
			res, err := tx.Commit(ctx)
			must(t, err)
			if len(res.ETags) != fit || len(res.Outbox) != outbox || len(dataKeys(t, tbl, pk)) != fit {
				t.Fatalf("committed %d ETags, %d outbox ids, %d data rows: want %d, %d, %d", len(res.ETags), len(res.Outbox), len(dataKeys(t, tbl, pk)), fit, outbox, fit)
			}
		}
	})
}

// Rows are counted on the wire (base64, escapes and framing included):
// the one that would bring the body to 4 MiB is refused before anything is
// sent, naming its size and the limit, and the rest commits.
func TestByteBudget(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		tx := begin(t, open(t, tbl, "p", nil))
		big := func(rk string) store.Entity {
			e := row(rk)
			for i := range 14 {
				e.Properties[fmt.Sprintf("B%02d", i)] = make([]byte, store.MaxBinaryBytes)
			}
			return e
		}
		before := tx.Free().Bytes
		for i := range 3 {
			must(t, tx.Insert("blob", big(fmt.Sprintf("big%d", i))))
		}
		used := before - tx.Free().Bytes
		if used < 3*14*store.MaxBinaryBytes*4/3 {
			t.Fatalf("three rows of 14 x 64 KiB binary took %d bytes of the budget: base64 alone is more", used)
		}
		err := tx.Insert("blob", big("big3"))
		if !errors.Is(err, mapper.ErrBatchFull) {
			t.Fatalf("fourth big row: %v, want ErrBatchFull", err)
		}
		refused(t, err, store.CodeRequestBodyTooLarge, `"big3"`, "4194304")
		must(t, tx.Insert("small", row("small")))
		if rows := raw(t, tbl, "p"); len(rows) != 0 {
			t.Fatalf("%d rows written before Commit", len(rows))
		}
		_, err = tx.Commit(ctx)
		must(t, err)
		if ks := dataKeys(t, tbl, "p"); len(ks) != 4 {
			t.Fatalf("data rows %q, want big0-big2 and small", ks)
		}
	})
}

// A property map changed after its row was added is caught by the store's
// check of the whole transaction before anything is sent, and reported as
// that row's error.
func TestMapChangedAfterAddIsRefusedBeforeSending(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := newTable(t, b)
		tx := begin(t, open(t, tbl, "p", nil))
		e := row("emp_1", "Name", "Ada")
		must(t, tx.Insert("ok", row("emp_0")))
		must(t, tx.Insert("employee", e))
		e.Properties["bad-name"] = "x"
		_, err := tx.Commit(context.Background())
		var re *partition.RowError
		if !errors.As(err, &re) || re.Label != "employee" || re.Index != 1 {
			t.Fatalf("%v: want a RowError for row 1 \"employee\"", err)
		}
		refused(t, err, store.CodePropertyNameInvalid, `"bad-name"`)
		if rows := raw(t, tbl, "p"); len(rows) != 0 {
			t.Fatalf("%d rows written", len(rows))
		}
	})
}
