package periods

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// login is the entity of the tests: one sign-in of a user.
type login struct {
	User string `table:",pk"`
	ID   string `table:",rk"`
	At   time.Time
	IP   string
}

// now is the tests' "now": 2026-11-22 10:00 UTC.
var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// day returns midnight UTC of November d, 2026 (d may run past 30 or below 1).
func day(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }

// fakeClock is a clock that only sleeps move.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	return nil
}

func (c *fakeClock) slept() (n int, total time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.sleeps {
		total += d
	}
	return len(c.sleeps), total
}

var prefixSeq atomic.Int64

// uniquePrefix returns a table name prefix no other test or run uses, and
// deletes every table with it when the test ends.
func uniquePrefix(t *testing.T, b backendtest.Backend, base string) string {
	t.Helper()
	p := fmt.Sprintf("%s%d%d", base, time.Now().UnixNano()%1_000_000, prefixSeq.Add(1))
	t.Cleanup(func() {
		page, err := b.Store.ListTables(context.Background(), store.ListTablesOptions{Prefix: p})
		if err != nil {
			return
		}
		for _, ti := range page.Tables {
			_ = b.Store.DeleteTable(context.Background(), ti.Name)
		}
	})
	return p
}

// config is a test's inputs of New: the required prefix and period, and
// the options, whose fields a test sets through the embedding.
type config struct {
	Prefix string
	Period keys.Granularity
	Options
}

// newFrom is New with c's inputs.
func newFrom(st store.Store, c config) (*Tables, error) {
	return New(st, c.Prefix, c.Period, &c.Options)
}

// newTables makes a day-period set on b with a fake clock at now.
func newTables(t *testing.T, b backendtest.Backend, mutate func(*config)) (*Tables, *Repo[login], *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: now}
	cfg := config{Prefix: uniquePrefix(t, b, "Logins"), Period: keys.Day, Options: Options{Retention: 30 * 24 * time.Hour,
		Now: clock.Now, Sleep: clock.Sleep, Random: func() float64 { return 0.5 }}}
	if mutate != nil {
		mutate(&cfg)
	}
	p, err := newFrom(b.Store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRepo[login](p)
	if err != nil {
		t.Fatal(err)
	}
	return p, r, clock
}

// tableNames lists the names of periods.
func tableNames(ps []Period) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Table)
	}
	return out
}

// countingStore counts table operations and can fail DeleteTable of one
// table, or apply it and lose the answer.
type countingStore struct {
	store.Store
	mu          sync.Mutex
	creates     int
	deletes     int
	failDelete  string // DeleteTable of this table fails with 403
	loseDelete  string // DeleteTable of this table lands, its answer is lost once
	lostAlready bool
}

func (s *countingStore) CreateTableIfNotExists(ctx context.Context, name string) (bool, error) {
	s.mu.Lock()
	s.creates++
	s.mu.Unlock()
	return s.Store.CreateTableIfNotExists(ctx, name)
}

func (s *countingStore) DeleteTable(ctx context.Context, name string) error {
	s.mu.Lock()
	s.deletes++
	fail := name == s.failDelete
	lose := name == s.loseDelete && !s.lostAlready
	if lose {
		s.lostAlready = true
	}
	s.mu.Unlock()
	if fail {
		return store.Errorf("AuthorizationPermissionMismatch", 403, "injected: this request is not authorized to delete %s", name)
	}
	if err := s.Store.DeleteTable(ctx, name); err != nil {
		return err
	}
	if lose {
		return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "injected: answer lost"}
	}
	return nil
}

func (s *countingStore) counts() (creates, deletes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates, s.deletes
}
