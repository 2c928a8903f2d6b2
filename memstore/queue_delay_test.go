package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestQueueDelay: with WithQueueDelay(d) a message put stays hidden from
// Get and Peek until d (plus its own VisibilityDelay) has passed on the
// store's clock, then is received as any other; without the option it is
// visible at once. Update's visibility is not delayed.
func TestQueueDelay(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	const d = 1500 * time.Millisecond
	st := New(WithClock(c.now), WithQueueDelay(d))
	q := st.Queue("delayed")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	visible := func() int {
		t.Helper()
		got, err := q.Peek(ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	put, err := q.Put(ctx, []byte("a"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := put.InsertionTime.Add(d); !put.NextVisible.Equal(want) {
		t.Fatalf("NextVisible %s, want %s (insertion + the delay)", put.NextVisible, want)
	}
	if _, err := q.Put(ctx, []byte("b"), &store.PutOptions{VisibilityDelay: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if n := visible(); n != 0 {
		t.Fatalf("%d messages visible at once, want 0 under the delay", n)
	}
	if got, err := q.Get(ctx, 32, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("Get before the delay: %d messages, %v", len(got), err)
	}
	c.advance(d - time.Millisecond)
	if n := visible(); n != 0 {
		t.Fatalf("%d visible just before the delay ended", n)
	}
	c.advance(time.Millisecond)
	got, err := q.Get(ctx, 32, time.Second)
	if err != nil || len(got) != 1 || string(got[0].Body) != "a" {
		t.Fatalf("Get after the delay: %v, %v; want message a alone", got, err)
	}
	// Update's visibility is the one given: 0 shows it again at once.
	if _, err := q.Update(ctx, got[0].ID, got[0].PopReceipt, nil, 0); err != nil {
		t.Fatal(err)
	}
	if n := visible(); n != 1 {
		t.Fatalf("%d visible after Update to 0, want 1", n)
	}
	c.advance(time.Second) // b: its own 2 s plus the delay, d + 1 s gone
	if n := visible(); n != 1 {
		t.Fatalf("%d visible %s after b was put, want 1 (b needs 2 s + %s)", n, d+time.Second, d)
	}
	c.advance(2 * time.Second)
	if n := visible(); n != 2 {
		t.Fatalf("%d visible once b's delay ended, want 2", n)
	}

	// The default, and a negative delay, show a message at once.
	for _, st := range []*Store{New(WithClock(c.now)), New(WithClock(c.now), WithQueueDelay(-time.Second))} {
		q := st.Queue("plain")
		if err := q.Create(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Put(ctx, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		if got, err := q.Peek(ctx, 1); err != nil || len(got) != 1 {
			t.Fatalf("no delay: %d visible, %v", len(got), err)
		}
	}
}
