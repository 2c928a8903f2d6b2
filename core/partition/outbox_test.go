package partition_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// clock is a settable clock for claims and outbox timestamps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// collect drains a Scan.
func collect(t *testing.T, ob *partition.Outbox, opts partition.ScanOptions) []partition.OutboxRow {
	t.Helper()
	var rows []partition.OutboxRow
	for r, err := range ob.Scan(context.Background(), opts) {
		must(t, err)
		rows = append(rows, r)
	}
	return rows
}

// Outbox rows are written with their commit, found per partition and
// across the table, claimed by one drainer at a time, claimable again when
// a claim runs out, and removed by the drainer that holds the claim; none
// of it moves the partition's fence.
func TestOutboxFindClaimRemove(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		clk := &clock{t: time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)}
		opts := fast()
		opts.Now = clk.Now
		pa, pb := open(t, tbl, "a", opts), open(t, tbl, "b", opts)

		tx := begin(t, pa)
		must(t, tx.Insert("order", row("order_1")))
		idMail, err := tx.Outbox(partition.Message{Topic: "mail", Body: []byte("to: ada")})
		must(t, err)
		idAudit, err := tx.Outbox(partition.Message{Topic: "audit"})
		must(t, err)
		_, err = tx.Commit(ctx)
		must(t, err)
		largest := bytes.Repeat([]byte("0123456789abcdef"), partition.MaxBody/16)
		txb := begin(t, pb)
		_, err = txb.Outbox(partition.Message{Topic: "blob", Body: largest})
		must(t, err)
		_, err = txb.Commit(ctx)
		must(t, err)

		ob, err := partition.NewOutbox(tbl, opts)
		must(t, err)
		pending, err := ob.Pending(ctx, "a")
		must(t, err)
		if len(pending) != 2 || pending[0].ID != idMail || pending[1].ID != idAudit {
			t.Fatalf("Pending(a) = %v, want the mail row then the audit row", pending)
		}
		m := pending[0]
		if m.Topic != "mail" || string(m.Body) != "to: ada" || m.Version != 1 || m.Request != tx.RequestID() ||
			!m.Created.Equal(clk.Now()) || m.Attempts != 0 || m.ClaimedBy != "" || m.Partition != "a" {
			t.Fatalf("mail row %+v", m)
		}
		if pending[1].Body != nil {
			t.Fatalf("an empty body came back as %q", pending[1].Body)
		}
		pbRows, err := ob.Pending(ctx, "b")
		must(t, err)
		if len(pbRows) != 1 || !bytes.Equal(pbRows[0].Body, largest) {
			t.Fatalf("the %d-byte body did not come back whole", len(largest))
		}
		if got := collect(t, ob, partition.ScanOptions{}); len(got) != 3 {
			t.Fatalf("Scan found %d rows, want 3", len(got))
		}

		claimed, err := ob.Claim(ctx, m, "worker-1", time.Minute)
		must(t, err)
		if claimed.ClaimedBy != "worker-1" || claimed.Attempts != 1 || !claimed.ClaimedUntil.Equal(clk.Now().Add(time.Minute)) || claimed.ETag == m.ETag {
			t.Fatalf("claimed row %+v", claimed)
		}
		if _, err := ob.Claim(ctx, m, "worker-2", time.Minute); !errors.Is(err, partition.ErrClaimed) {
			t.Fatalf("claim from a stale read: %v, want ErrClaimed", err)
		}
		if _, err := ob.Claim(ctx, claimed, "worker-2", time.Minute); !errors.Is(err, partition.ErrClaimed) {
			t.Fatalf("claim of a row claimed by another: %v, want ErrClaimed", err)
		}
		if got := collect(t, ob, partition.ScanOptions{}); len(got) != 2 {
			t.Fatalf("Scan while claimed found %d rows, want the 2 unclaimed", len(got))
		}
		if got := collect(t, ob, partition.ScanOptions{Claimed: true}); len(got) != 3 {
			t.Fatalf("Scan with Claimed while one is claimed found %d rows, want all 3", len(got))
		}

		clk.Add(2 * time.Minute) // worker-1 stalls past its lease
		if got := collect(t, ob, partition.ScanOptions{}); len(got) != 3 {
			t.Fatalf("Scan after the lease ran out found %d rows, want 3", len(got))
		}
		fresh, err := ob.Get(ctx, "a", idMail)
		must(t, err)
		again, err := ob.Claim(ctx, fresh, "worker-2", time.Minute)
		must(t, err)
		if again.Attempts != 2 || again.ClaimedBy != "worker-2" {
			t.Fatalf("second claim %+v", again)
		}
		if err := ob.Remove(ctx, claimed); !errors.Is(err, partition.ErrClaimed) {
			t.Fatalf("remove by the drainer that lost its claim: %v, want ErrClaimed", err)
		}
		must(t, ob.Remove(ctx, again))
		must(t, ob.Remove(ctx, again)) // gone already: not an error
		if _, err := ob.Claim(ctx, again, "worker-2", time.Minute); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim of a removed row: %v, want ErrNotFound", err)
		}
		if left, err := ob.Pending(ctx, "a"); err != nil || len(left) != 1 || left[0].ID != idAudit {
			t.Fatalf("Pending(a) after the removal: %v, %v", left, err)
		}
		if got := collect(t, ob, partition.ScanOptions{CreatedBefore: clk.Now().Add(-time.Hour)}); len(got) != 0 {
			t.Fatalf("Scan for rows older than an hour found %d", len(got))
		}
		if got := collect(t, ob, partition.ScanOptions{CreatedBefore: clk.Now(), PageSize: 1}); len(got) != 2 {
			t.Fatalf("Scan, one row a page, found %d rows, want 2", len(got))
		}
		if f, tl := versions(t, tbl, "a"); f != 1 || tl != 1 {
			t.Fatalf("claims and removals moved the fence: %d/%d", f, tl)
		}
		snap, err := pa.Read(ctx, nil)
		must(t, err)
		if len(snap.Rows) != 1 || snap.Rows[0].RowKey != "order_1" {
			t.Fatalf("Read returned %d rows: outbox rows are not data", len(snap.Rows))
		}

		_, err = ob.Claim(ctx, pbRows[0], "", time.Minute)
		refused(t, err, store.CodeInvalidInput, "owner", "256")
		_, err = ob.Claim(ctx, pbRows[0], "w", 0)
		refused(t, err, store.CodeInvalidInput, "lease")
	})
}

// A claim whose answer is lost is read back: its token says whether it
// applied. A removal whose answer is lost is sent again, which finds the
// row gone.
func TestOutboxLostAnswers(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		tbl := newTable(t, b)
		p := open(t, tbl, "p", fast())
		tx := begin(t, p)
		_, err := tx.Outbox(partition.Message{Topic: "t"})
		must(t, err)
		_, err = tx.Commit(ctx)
		must(t, err)

		h := &hookTable{Table: tbl}
		ob, err := partition.NewOutbox(h, fast())
		must(t, err)
		rows, err := ob.Pending(ctx, "p")
		must(t, err)

		h.update = func(ctx context.Context, in store.Table, e store.Entity, m store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
			return "", lostAnswer() // lost before it reached the service
		}
		if _, err := ob.Claim(ctx, rows[0], "w", time.Minute); !errors.Is(err, store.ErrUnknownOutcome) {
			t.Fatalf("claim lost before applying: %v, want ErrUnknownOutcome", err)
		}
		h.update = func(ctx context.Context, in store.Table, e store.Entity, m store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
			if _, err := in.Update(ctx, e, m, ifMatch); err != nil {
				return "", err
			}
			return "", lostAnswer()
		}
		claimed, err := ob.Claim(ctx, rows[0], "w", time.Minute)
		must(t, err)
		if claimed.ClaimedBy != "w" || claimed.Attempts != 1 || claimed.ETag == rows[0].ETag {
			t.Fatalf("claim recovered from a lost answer: %+v", claimed)
		}

		deletes := 0
		h.delete = func(ctx context.Context, in store.Table, pk, rk string, ifMatch store.ETag) error {
			deletes++
			err := in.Delete(ctx, pk, rk, ifMatch)
			if deletes == 1 && err == nil {
				return lostAnswer()
			}
			return err
		}
		must(t, ob.Remove(ctx, claimed))
		if deletes != 2 || hasRow(t, tbl, "p", partition.OutboxPrefix+claimed.ID) {
			t.Fatalf("remove after a lost answer: %d deletes sent, row there %v", deletes, hasRow(t, tbl, "p", partition.OutboxPrefix+claimed.ID))
		}
	})
}
