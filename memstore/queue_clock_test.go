package memstore

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// testClock is a fake service clock: it stands still until advanced, and
// tick moves it 100 ns per reading, as the store's tick does when its
// clock stalls, so every reading is distinct and strictly increasing.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock {
	return &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) tick() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(100 * time.Nanosecond)
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// wantCode fails the test unless err is a *store.Error with the code and status.
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	var se *store.Error
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want %s (%d)", err, code, status)
	}
	if se.Code != code || se.Status != status {
		t.Fatalf("error = %v, want %s (%d)", err, code, status)
	}
	if se.Message == "" {
		t.Fatalf("error %s has no message", se.Code)
	}
}
