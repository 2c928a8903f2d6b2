package periods

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// The service keeps a deleted table's name for a while; memstore models it
// with WithTableDeleteDelay on the same fake clock the package sleeps on.
// Azurite re-creates a table at once, so these tests run on memstore only.
func deletingBackend(clock *fakeClock, delay time.Duration) backendtest.Backend {
	return backendtest.Memstore(memstore.WithClock(clock.Now), memstore.WithTableDeleteDelay(delay))
}

func TestATableBeingDeletedIsWaitedOut(t *testing.T) {
	clock := &fakeClock{t: now}
	b := deletingBackend(clock, 40*time.Second)
	p, logins, _ := newTables(t, b, func(c *config) { c.Now, c.Sleep = clock.Now, clock.Sleep })
	ctx := t.Context()
	if err := logins.Insert(ctx, now, &login{User: "ann", ID: "1", At: now}); err != nil {
		t.Fatal(err)
	}
	per, _ := p.PeriodOf(now)
	// An operator drops today's table; the next write must re-create it.
	if err := b.Store.DeleteTable(ctx, per.Table); err != nil {
		t.Fatal(err)
	}
	if err := logins.Insert(ctx, now, &login{User: "bob", ID: "2", At: now}); err != nil {
		t.Fatalf("write after the table was deleted: %v", err)
	}
	n, waited := clock.slept()
	t.Logf("re-created %s after %d pauses, %s waited (delete delay 40s)", per.Table, n, waited)
	if waited < 40*time.Second || n < 2 {
		t.Fatalf("waited %s in %d pauses, want at least the 40 s delay", waited, n)
	}
	got, err := logins.Get(ctx, now, "bob", "2")
	if err != nil || got.User != "bob" {
		t.Fatalf("the write did not land: %+v, %v", got, err)
	}
	if _, err := logins.Get(ctx, now, "ann", "1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("data of the deleted table came back: %v", err)
	}
}

func TestATableDeletedTooLongFailsClearlyAndWritesNothing(t *testing.T) {
	clock := &fakeClock{t: now}
	b := deletingBackend(clock, time.Hour)
	p, logins, _ := newTables(t, b, func(c *config) { c.Now, c.Sleep = clock.Now, clock.Sleep })
	ctx := t.Context()
	if _, err := p.Ensure(ctx, now); err != nil {
		t.Fatal(err)
	}
	per, _ := p.PeriodOf(now)
	if err := b.Store.DeleteTable(ctx, per.Table); err != nil {
		t.Fatal(err)
	}
	err := logins.Insert(ctx, now, &login{User: "bob", ID: "2", At: now})
	if !errors.Is(err, ErrBeingDeleted) || store.Code(err) != store.CodeTableBeingDeleted ||
		!strings.Contains(err.Error(), per.Table) || !strings.Contains(err.Error(), "after 8 attempts over") {
		t.Fatalf("write while the table is being deleted for an hour: %v", err)
	}
	n, waited := clock.slept()
	t.Logf("gave up after %d pauses, %s: %v", n, waited, err)
	if n != 7 || waited < time.Minute || waited > 3*time.Minute {
		t.Fatalf("%d pauses of %s in all, want 7 pauses of about two minutes", n, waited)
	}
	if _, err := p.Prepare(ctx); !errors.Is(err, ErrBeingDeleted) {
		t.Fatalf("Prepare while the table is being deleted: %v", err)
	}
	// Once the name is free again, the period's table is empty: nothing
	// was half-written.
	clock.t = clock.t.Add(time.Hour)
	if err := logins.Insert(ctx, now, &login{User: "cy", ID: "3", At: now}); err != nil {
		t.Fatal(err)
	}
	var users []string
	for l, err := range logins.Query(ctx, now, now) {
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, l.User)
	}
	if len(users) != 1 || users[0] != "cy" {
		t.Fatalf("period holds %v, want only the write made after the wait", users)
	}
}
