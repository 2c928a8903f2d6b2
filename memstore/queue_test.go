package memstore

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

func newTestQueue(t *testing.T) (store.Queue, *testClock) {
	t.Helper()
	clock := newTestClock()
	q := newQueueService(clock.tick).queue("jobs")
	if err := q.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q, clock
}

func put(t *testing.T, q store.Queue, body string, opts *store.PutOptions) store.Message {
	t.Helper()
	m, err := q.Put(context.Background(), []byte(body), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func get(t *testing.T, q store.Queue, n int, vis time.Duration) []store.Message {
	t.Helper()
	ms, err := q.Get(context.Background(), n, vis)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func bodies(ms []store.Message) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, string(m.Body))
	}
	return strings.Join(parts, ",")
}

func TestQueueNames(t *testing.T) {
	ctx := context.Background()
	svc := newQueueService(newTestClock().tick)
	for _, tc := range []struct {
		name, code string
	}{
		{"ab", store.CodeOutOfRangeInput},
		{strings.Repeat("a", 64), store.CodeOutOfRangeInput},
		{"Jobs", store.CodeInvalidResourceName},
		{"jo_bs", store.CodeInvalidResourceName},
		{"-jobs", store.CodeInvalidResourceName},
		{"jobs-", store.CodeInvalidResourceName},
		{"jo--bs", store.CodeInvalidResourceName},
		{"", store.CodeOutOfRangeInput},
	} {
		err := svc.queue(tc.name).Create(ctx)
		wantCode(t, err, tc.code, 400)
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("%q: %v is not ErrInvalidInput", tc.name, err)
		}
	}
	for _, ok := range []string{"abc", "a-b-c", "123", strings.Repeat("z", 63)} {
		if err := svc.queue(ok).Create(ctx); err != nil {
			t.Errorf("Create(%q) = %v", ok, err)
		}
	}
}

func TestQueueMissing(t *testing.T) {
	ctx := context.Background()
	svc := newQueueService(newTestClock().tick)
	q := svc.queue("nowhere")
	if q.Name() != "nowhere" {
		t.Fatalf("Name = %q", q.Name())
	}
	receipt := popReceipt(1)
	checks := map[string]error{
		"Delete":        q.Delete(ctx),
		"DeleteMessage": q.DeleteMessage(ctx, messageID(1), receipt),
	}
	_, checks["Put"] = q.Put(ctx, []byte("x"), nil)
	_, checks["Get"] = q.Get(ctx, 1, time.Second)
	_, checks["Peek"] = q.Peek(ctx, 1)
	_, checks["Update"] = q.Update(ctx, messageID(1), receipt, nil, 0)
	for op, err := range checks {
		t.Run(op, func(t *testing.T) {
			wantCode(t, err, store.CodeQueueNotFound, 404)
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%v is not ErrNotFound", err)
			}
		})
	}
}

func TestQueueCreateDelete(t *testing.T) {
	ctx := context.Background()
	q, _ := newTestQueue(t)
	put(t, q, "a", nil)
	if err := q.Create(ctx); err != nil {
		t.Fatalf("second Create = %v, want nil (idempotent)", err)
	}
	if got := get(t, q, 1, time.Second); bodies(got) != "a" {
		t.Fatalf("Create emptied the queue: got %q", bodies(got))
	}
	if err := q.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := q.Peek(ctx, 1)
	wantCode(t, err, store.CodeQueueNotFound, 404)
	wantCode(t, q.Delete(ctx), store.CodeQueueNotFound, 404)
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.Peek(ctx, 32); len(got) != 0 {
		t.Fatalf("a re-created queue has %d messages", len(got))
	}
}

func TestQueueGetHidesAndReappears(t *testing.T) {
	ctx := context.Background()
	q, clock := newTestQueue(t)
	put(t, q, "a", nil)
	put(t, q, "b", nil)
	put(t, q, "c", nil)

	first := get(t, q, 2, 30*time.Second)
	if bodies(first) != "a,b" {
		t.Fatalf("Get(2) = %q, want a,b", bodies(first))
	}
	for _, m := range first {
		if m.DequeueCount != 1 || m.PopReceipt == "" {
			t.Fatalf("received %+v: want dequeue count 1 and a pop receipt", m)
		}
		if d := m.NextVisible.Sub(clock.now()); d < 30*time.Second-time.Millisecond || d > 30*time.Second {
			t.Fatalf("NextVisible is %v after now, want 30s", d)
		}
	}
	if got := get(t, q, 32, 30*time.Second); bodies(got) != "c" {
		t.Fatalf("second Get = %q, want c", bodies(got))
	}
	if got := get(t, q, 32, 30*time.Second); len(got) != 0 {
		t.Fatalf("third Get = %q, want nothing visible", bodies(got))
	}

	clock.advance(30 * time.Second)
	again := get(t, q, 32, time.Minute)
	if bodies(again) != "a,b,c" {
		t.Fatalf("after the timeout Get = %q, want a,b,c in insertion order", bodies(again))
	}
	if again[0].DequeueCount != 2 || again[0].PopReceipt == first[0].PopReceipt {
		t.Fatalf("redelivered %+v: want dequeue count 2 and a new pop receipt", again[0])
	}

	err := q.DeleteMessage(ctx, first[0].ID, first[0].PopReceipt)
	wantCode(t, err, store.CodePopReceiptMismatch, 400)
	if err := q.DeleteMessage(ctx, again[0].ID, again[0].PopReceipt); err != nil {
		t.Fatal(err)
	}
	err = q.DeleteMessage(ctx, again[0].ID, again[0].PopReceipt)
	wantCode(t, err, store.CodeMessageNotFound, 404)

	clock.advance(time.Minute)
	if got := get(t, q, 32, time.Second); bodies(got) != "b,c" {
		t.Fatalf("after delete Get = %q, want b,c", bodies(got))
	}
}

func TestQueuePeek(t *testing.T) {
	q, _ := newTestQueue(t)
	put(t, q, "a", nil)
	put(t, q, "b", nil)
	get(t, q, 1, time.Minute) // hides a
	for range 2 {
		got, err := q.Peek(context.Background(), 32)
		if err != nil {
			t.Fatal(err)
		}
		if bodies(got) != "b" {
			t.Fatalf("Peek = %q, want only the visible b", bodies(got))
		}
		m := got[0]
		if m.PopReceipt != "" || !m.NextVisible.IsZero() || m.DequeueCount != 0 {
			t.Fatalf("Peek returned %+v: want no pop receipt, no next visible time, dequeue count 0", m)
		}
	}
	if got := get(t, q, 32, time.Minute); bodies(got) != "b" || got[0].DequeueCount != 1 {
		t.Fatalf("Peek changed the message: Get = %+v", got)
	}
}

func TestQueuePutTimes(t *testing.T) {
	ctx := context.Background()
	q, clock := newTestQueue(t)
	before := clock.now()
	m := put(t, q, "later", &store.PutOptions{VisibilityDelay: 10 * time.Second, TTL: time.Minute})
	if m.Body != nil || m.ID == "" || m.PopReceipt == "" || m.DequeueCount != 0 {
		t.Fatalf("Put returned %+v: want an ID, a pop receipt, no body", m)
	}
	if !m.InsertionTime.After(before) || m.ExpirationTime.Sub(m.InsertionTime) != time.Minute ||
		m.NextVisible.Sub(m.InsertionTime) != 10*time.Second {
		t.Fatalf("Put times %+v: want expiry = insertion + 1m, visible = insertion + 10s", m)
	}
	if got := get(t, q, 1, time.Second); len(got) != 0 {
		t.Fatal("a delayed message was received before its delay")
	}
	clock.advance(10 * time.Second)
	got := get(t, q, 1, time.Second)
	if bodies(got) != "later" {
		t.Fatalf("after the delay Get = %q", bodies(got))
	}

	// The receipt Put returns is valid until a Get replaces it.
	m2 := put(t, q, "x", nil)
	if _, err := q.Update(ctx, m2.ID, m2.PopReceipt, []byte("y"), 0); err != nil {
		t.Fatalf("Update with the Put receipt: %v", err)
	}

	d := put(t, q, "default", nil)
	if d.ExpirationTime.Sub(d.InsertionTime) != store.DefaultMessageTTL {
		t.Fatalf("default TTL = %v, want %v", d.ExpirationTime.Sub(d.InsertionTime), store.DefaultMessageTTL)
	}
	n := put(t, q, "never", &store.PutOptions{TTL: store.NeverExpires})
	if n.ExpirationTime.Year() != 9999 {
		t.Fatalf("never-expiring message expires %v, want year 9999", n.ExpirationTime)
	}
}

func TestQueueExpiry(t *testing.T) {
	ctx := context.Background()
	q, clock := newTestQueue(t)
	short := put(t, q, "short", &store.PutOptions{TTL: time.Minute})
	put(t, q, "never", &store.PutOptions{TTL: store.NeverExpires})
	clock.advance(59 * time.Second)
	got, _ := q.Peek(ctx, 32)
	if bodies(got) != "short,never" {
		t.Fatalf("before expiry Peek = %q", bodies(got))
	}
	clock.advance(time.Second)
	got, _ = q.Peek(ctx, 32)
	if bodies(got) != "never" {
		t.Fatalf("at expiry Peek = %q, want the short-lived message gone", bodies(got))
	}
	_, err := q.Update(ctx, short.ID, short.PopReceipt, nil, 0)
	wantCode(t, err, store.CodeMessageNotFound, 404)
	clock.advance(30 * 24 * time.Hour)
	if got := get(t, q, 32, time.Second); bodies(got) != "never" {
		t.Fatalf("a month later Get = %q, want the never-expiring message", bodies(got))
	}
}

func TestQueueBadArguments(t *testing.T) {
	ctx := context.Background()
	q, _ := newTestQueue(t)
	m := put(t, q, "a", nil)
	const oor, bad = store.CodeOutOfRangeQueryParameterValue, store.CodeInvalidQueryParameterValue
	week := store.MaxVisibilityTimeout
	putWith := func(o store.PutOptions) error { _, err := q.Put(ctx, []byte("x"), &o); return err }
	getWith := func(n int, v time.Duration) error { _, err := q.Get(ctx, n, v); return err }
	peekWith := func(n int) error { _, err := q.Peek(ctx, n); return err }
	updateWith := func(r string, v time.Duration) error { _, err := q.Update(ctx, m.ID, r, nil, v); return err }
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"Get 0 messages", getWith(0, time.Second), oor},
		{"Get 33 messages", getWith(33, time.Second), oor},
		{"Get -1 messages", getWith(-1, time.Second), oor},
		{"Get visibility 0", getWith(1, 0), oor},
		{"Get visibility 999ms", getWith(1, 999*time.Millisecond), oor},
		{"Get visibility 7d+1s", getWith(1, week+time.Second), oor},
		{"Get visibility 1.5s", getWith(1, 1500*time.Millisecond), bad},
		{"Peek 0", peekWith(0), oor},
		{"Peek 33", peekWith(33), oor},
		{"Put delay -1s", putWith(store.PutOptions{VisibilityDelay: -time.Second}), oor},
		{"Put delay 7d+1s", putWith(store.PutOptions{VisibilityDelay: week + time.Second, TTL: store.NeverExpires}), oor},
		{"Put delay = TTL", putWith(store.PutOptions{VisibilityDelay: time.Minute, TTL: time.Minute}), oor},
		{"Put delay > TTL", putWith(store.PutOptions{VisibilityDelay: time.Hour, TTL: time.Minute}), oor},
		{"Put delay = default TTL", putWith(store.PutOptions{VisibilityDelay: week}), oor},
		{"Put TTL -2s", putWith(store.PutOptions{TTL: -2 * time.Second}), oor},
		{"Put TTL 1.5s", putWith(store.PutOptions{TTL: 1500 * time.Millisecond}), bad},
		{"Update visibility -1s", updateWith(m.PopReceipt, -time.Second), oor},
		{"Update visibility 7d+1s", updateWith(m.PopReceipt, week+time.Second), oor},
		{"Update malformed receipt", updateWith("not-a-receipt", 0), bad},
		{"Update empty receipt", updateWith("", 0), bad},
		{"DeleteMessage malformed receipt", q.DeleteMessage(ctx, m.ID, "AAAA"), bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, tc.err, tc.code, 400)
			if !errors.Is(tc.err, store.ErrInvalidInput) {
				t.Fatalf("%v is not ErrInvalidInput", tc.err)
			}
		})
	}
	// The edges are accepted.
	if err := getWith(32, week); err != nil {
		t.Errorf("Get(32, 7d) = %v", err)
	}
	if err := putWith(store.PutOptions{VisibilityDelay: week, TTL: store.NeverExpires}); err != nil {
		t.Errorf("Put with a 7 day delay that never expires = %v", err)
	}
	if err := putWith(store.PutOptions{VisibilityDelay: time.Minute - time.Second, TTL: time.Minute}); err != nil {
		t.Errorf("Put with delay just under TTL = %v", err)
	}
	// The message was not touched by the refused calls.
	if got, _ := q.Peek(ctx, 1); len(got) != 0 {
		// a was received by Get(32, week) above: nothing visible
		t.Fatalf("Peek = %q", bodies(got))
	}
}

func TestQueueMessageSize(t *testing.T) {
	ctx := context.Background()
	q, _ := newTestQueue(t)
	max := bytes.Repeat([]byte("x"), store.MaxMessageSize)
	m, err := q.Put(ctx, max, nil)
	if err != nil {
		t.Fatalf("Put of exactly 64 KiB: %v", err)
	}
	_, err = q.Put(ctx, append(max, 'y'), nil)
	wantCode(t, err, store.CodeRequestBodyTooLarge, 413)
	if !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "65537") {
		t.Fatalf("%v: want ErrTooLarge naming the size", err)
	}
	_, err = q.Update(ctx, m.ID, m.PopReceipt, append(max, 'y'), 0)
	wantCode(t, err, store.CodeRequestBodyTooLarge, 413)
	// The refused update changed nothing, not even the receipt.
	if _, err := q.Update(ctx, m.ID, m.PopReceipt, []byte("small"), 0); err != nil {
		t.Fatalf("the receipt was invalidated by a refused Update: %v", err)
	}
}

func TestQueueUpdate(t *testing.T) {
	ctx := context.Background()
	q, clock := newTestQueue(t)
	put(t, q, "v1", nil)
	m := get(t, q, 1, time.Minute)[0]

	u, err := q.Update(ctx, m.ID, m.PopReceipt, []byte("v2"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if u.PopReceipt == "" || u.PopReceipt == m.PopReceipt || u.ID != m.ID {
		t.Fatalf("Update returned %+v: want the same ID and a new pop receipt", u)
	}
	if d := u.NextVisible.Sub(clock.now()); d < 10*time.Second-time.Millisecond || d > 10*time.Second {
		t.Fatalf("NextVisible %v after now, want 10s", d)
	}
	_, err = q.Update(ctx, m.ID, m.PopReceipt, nil, 0)
	wantCode(t, err, store.CodePopReceiptMismatch, 400)
	wantCode(t, q.DeleteMessage(ctx, m.ID, m.PopReceipt), store.CodePopReceiptMismatch, 400)

	// A nil body keeps the content; visibility 0 shows it at once.
	u2, err := q.Update(ctx, u.ID, u.PopReceipt, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := get(t, q, 1, time.Second)
	if bodies(got) != "v2" || got[0].DequeueCount != 2 {
		t.Fatalf("after Update Get = %+v, want v2 with dequeue count 2", got)
	}
	// The receipt from Get replaced the one from Update.
	_, err = q.Update(ctx, u2.ID, u2.PopReceipt, nil, 0)
	wantCode(t, err, store.CodePopReceiptMismatch, 400)
	// A receipt of another message is well formed but not this one's.
	other := put(t, q, "other", nil)
	_, err = q.Update(ctx, m.ID, other.PopReceipt, nil, 0)
	wantCode(t, err, store.CodePopReceiptMismatch, 400)
	_, err = q.Update(ctx, "no-such-id", got[0].PopReceipt, nil, 0)
	wantCode(t, err, store.CodeMessageNotFound, 404)
}

func TestQueueCopiesBodies(t *testing.T) {
	q, _ := newTestQueue(t)
	in := []byte("abc")
	if _, err := q.Put(context.Background(), in, nil); err != nil {
		t.Fatal(err)
	}
	in[0] = 'X'
	got, _ := q.Peek(context.Background(), 1)
	got[0].Body[1] = 'Y'
	again, _ := q.Peek(context.Background(), 1)
	if string(again[0].Body) != "abc" {
		t.Fatalf("stored body = %q: callers' slices reach the store", again[0].Body)
	}
}

func TestQueueIDsAndReceiptsUnique(t *testing.T) {
	q, _ := newTestQueue(t)
	ids, receipts := map[string]bool{}, map[string]bool{}
	for range 500 {
		m := put(t, q, "m", nil)
		if ids[m.ID] || receipts[m.PopReceipt] {
			t.Fatalf("repeated ID %q or receipt %q", m.ID, m.PopReceipt)
		}
		ids[m.ID], receipts[m.PopReceipt] = true, true
		if _, err := store.ParseGUID(m.ID); err != nil {
			t.Fatalf("ID %q is not a GUID: %v", m.ID, err)
		}
	}
	for _, m := range get(t, q, 32, time.Minute) {
		if receipts[m.PopReceipt] {
			t.Fatalf("Get reissued receipt %q", m.PopReceipt)
		}
		receipts[m.PopReceipt] = true
	}
}

func TestQueueCanceledContext(t *testing.T) {
	q, _ := newTestQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Put(ctx, []byte("x"), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a canceled context = %v", err)
	}
	if got, _ := q.Peek(context.Background(), 1); len(got) != 0 {
		t.Fatal("a canceled Put added a message")
	}
}

// Concurrent receivers each get a message exactly once while it is
// invisible: no message is lost or handed to two receivers.
func TestQueueConcurrentReceivers(t *testing.T) {
	ctx := context.Background()
	q, _ := newTestQueue(t)
	const total, workers = 400, 8
	for range total {
		put(t, q, "m", nil)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				ms, err := q.Get(ctx, 3, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ms) == 0 {
					return
				}
				mu.Lock()
				for _, m := range ms {
					seen[m.ID]++
				}
				mu.Unlock()
				for _, m := range ms[:1] { // delete some, keep others hidden
					if err := q.DeleteMessage(ctx, m.ID, m.PopReceipt); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("received %d distinct messages, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("message %s received %d times while invisible", id, n)
		}
	}
}

// The store hands out queues and containers that read its clock.
func TestQueueAndContainerThroughStore(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	st := New(WithClock(clock.now))
	q := st.Queue("events")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	put, err := q.Put(ctx, []byte("e1"), &store.PutOptions{VisibilityDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := put.InsertionTime.Sub(clock.now()); d < 0 || d > time.Millisecond {
		t.Fatalf("InsertionTime %v is not the store clock's %v", put.InsertionTime, clock.now())
	}
	clock.advance(time.Minute)
	if got := get(t, st.Queue("events"), 1, time.Second); bodies(got) != "e1" {
		t.Fatalf("after the injected clock passed the delay, Get = %q", bodies(got))
	}
	c := st.Container("blobs")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	p := putBlob(t, st.Container("blobs"), "b", "x", nil)
	if d := p.LastModified.Sub(clock.now()); d < 0 || d > time.Millisecond {
		t.Fatalf("LastModified %v is not the store clock's %v", p.LastModified, clock.now())
	}
}
