package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// pause is the longest the queue tests wait for a one-second visibility
// timeout or time to live to pass.
const pause = 5 * time.Second

// newQueue makes a store and a queue of its own for one subtest.
func (s *suite) newQueue(t *testing.T) store.Queue {
	t.Helper()
	q := s.h.New(t).Queue(s.names.next())
	must(t, q.Create(t.Context()), "Queue.Create")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := q.Delete(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("cleanup: delete queue %s: %v", q.Name(), err)
		}
	})
	return q
}

// getOne receives exactly one message.
func getOne(t testing.TB, q store.Queue, visibility time.Duration) store.Message {
	t.Helper()
	ms, err := q.Get(t.Context(), 1, visibility)
	must(t, err, "Get")
	if len(ms) != 1 {
		t.Fatalf("Get returned %d messages, want 1", len(ms))
	}
	return ms[0]
}

// wantNone checks that no message is visible, to Get or to Peek.
func wantNone(t testing.TB, q store.Queue, why string) {
	t.Helper()
	ms, err := q.Peek(t.Context(), store.MaxMessagesPerGet)
	must(t, err, "Peek")
	if len(ms) != 0 {
		t.Errorf("%s: Peek returned %d messages, want none", why, len(ms))
	}
	ms, err = q.Get(t.Context(), store.MaxMessagesPerGet, time.Second)
	must(t, err, "Get")
	if len(ms) != 0 {
		t.Errorf("%s: Get returned %d messages, want none", why, len(ms))
	}
}

// near reports whether got is within slack of want.
func near(got, want time.Time, slack time.Duration) bool {
	d := got.Sub(want)
	return d > -slack && d < slack
}

// queues proves the queue semantics the eventually consistent patterns use.
func (s *suite) queues(t *testing.T) {
	s.run(t, "PutGetDelete", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		put, err := q.Put(ctx, []byte("hello"), nil)
		must(t, err, "Put")
		if put.ID == "" || put.InsertionTime.IsZero() {
			t.Errorf("Put returned %+v: want an ID and an insertion time", put)
		}
		if !near(put.ExpirationTime, put.InsertionTime.Add(store.DefaultMessageTTL), time.Minute) {
			t.Errorf("default expiration %s, want 7 days after %s", put.ExpirationTime, put.InsertionTime)
		}
		m := getOne(t, q, 30*time.Second)
		if m.ID != put.ID || string(m.Body) != "hello" || m.DequeueCount != 1 || m.PopReceipt == "" {
			t.Errorf("Get = {ID %s, Body %q, DequeueCount %d, PopReceipt %q}, want {%s, hello, 1, a receipt}",
				m.ID, m.Body, m.DequeueCount, m.PopReceipt, put.ID)
		}
		if !near(m.NextVisible, time.Now().Add(30*time.Second), 10*time.Second) {
			t.Errorf("NextVisible %s is not about 30 s from now", m.NextVisible)
		}
		wantNone(t, q, "while the received message is invisible")
		must(t, q.DeleteMessage(ctx, m.ID, m.PopReceipt), "DeleteMessage")
		err = q.DeleteMessage(ctx, m.ID, m.PopReceipt)
		wantErr(t, err, store.CodeMessageNotFound, 404, noIndex)
	})

	s.run(t, "VisibilityTimeout_ReappearsWithDequeueCount", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		_, err := q.Put(ctx, []byte("again"), nil)
		must(t, err, "Put")
		first := getOne(t, q, time.Second)
		var second store.Message
		deadline := time.Now().Add(pause)
		for {
			ms, err := q.Get(ctx, 1, 30*time.Second)
			must(t, err, "Get")
			if len(ms) == 1 {
				second = ms[0]
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message hidden for 1 s did not reappear within %s", pause)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if second.ID != first.ID || second.DequeueCount != 2 || string(second.Body) != "again" {
			t.Errorf("reappeared as {ID %s, DequeueCount %d, Body %q}, want {%s, 2, again}",
				second.ID, second.DequeueCount, second.Body, first.ID)
		}
		if second.PopReceipt == first.PopReceipt {
			t.Errorf("second Get reused pop receipt %q", first.PopReceipt)
		}
		// The first receipt is stale now.
		err = q.DeleteMessage(ctx, first.ID, first.PopReceipt)
		wantErrIn(t, err, codeStatus{store.CodeMessageNotFound, 404}, codeStatus{store.CodePopReceiptMismatch, 400})
		_, err = q.Update(ctx, first.ID, first.PopReceipt, []byte("x"), 0)
		wantErrIn(t, err, codeStatus{store.CodeMessageNotFound, 404}, codeStatus{store.CodePopReceiptMismatch, 400})
		must(t, q.DeleteMessage(ctx, second.ID, second.PopReceipt), "DeleteMessage with the latest receipt")
		wantNone(t, q, "after delete")
	})

	s.run(t, "VisibilityDelay_HiddenOnPut", func(t *testing.T) {
		q := s.newQueue(t)
		put, err := q.Put(t.Context(), []byte("later"), &store.PutOptions{VisibilityDelay: time.Hour})
		must(t, err, "Put with a delay")
		if !near(put.NextVisible, put.InsertionTime.Add(time.Hour), time.Minute) {
			t.Errorf("NextVisible %s, want an hour after %s", put.NextVisible, put.InsertionTime)
		}
		wantNone(t, q, "message put with a 1 h delay")
	})

	s.run(t, "GetMany_UpTo32InOrder", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		var ids []string
		for _, b := range []string{"a", "b", "c"} {
			m, err := q.Put(ctx, []byte(b), nil)
			must(t, err, "Put")
			ids = append(ids, m.ID)
		}
		ms, err := q.Get(ctx, store.MaxMessagesPerGet, 30*time.Second)
		must(t, err, "Get 32")
		if len(ms) != 3 {
			t.Fatalf("Get 32 returned %d messages, want 3", len(ms))
		}
		for i, m := range ms {
			if m.ID != ids[i] || string(m.Body) != string(rune('a'+i)) || m.PopReceipt == "" || m.DequeueCount != 1 {
				t.Errorf("message %d = {%s, %q, receipt %q, DequeueCount %d}, want {%s, %q, a receipt, 1}",
					i, m.ID, m.Body, m.PopReceipt, m.DequeueCount, ids[i], string(rune('a'+i)))
			}
			// A receipt is good for its own message only: (ID, receipt)
			// pairs are what delete takes. Azurite hands one receipt to a
			// whole Get, so receipts need not differ between messages.
			must(t, q.DeleteMessage(ctx, m.ID, m.PopReceipt), "DeleteMessage")
		}
		wantNone(t, q, "after deleting every message received")
		for _, n := range []int{0, -1, store.MaxMessagesPerGet + 1} {
			_, err := q.Get(ctx, n, 30*time.Second)
			wantErr(t, err, store.CodeOutOfRangeQueryParameterValue, 400, noIndex)
			_, err = q.Peek(ctx, n)
			wantErr(t, err, store.CodeOutOfRangeQueryParameterValue, 400, noIndex)
		}
		_, err = q.Get(ctx, 1, store.MaxVisibilityTimeout+time.Second)
		wantErr(t, err, store.CodeOutOfRangeQueryParameterValue, 400, noIndex)
	})

	s.run(t, "Peek_ChangesNothing", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		put, err := q.Put(ctx, []byte("peek"), nil)
		must(t, err, "Put")
		for range 2 {
			ms, err := q.Peek(ctx, 1)
			must(t, err, "Peek")
			if len(ms) != 1 || ms[0].ID != put.ID || string(ms[0].Body) != "peek" || ms[0].DequeueCount != 0 || ms[0].PopReceipt != "" {
				t.Fatalf("Peek = %+v, want the message with DequeueCount 0 and no pop receipt", ms)
			}
		}
		if m := getOne(t, q, 30*time.Second); m.DequeueCount != 1 {
			t.Errorf("Get after two Peeks: DequeueCount %d, want 1", m.DequeueCount)
		}
	})

	s.run(t, "Update_ContentAndVisibility", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		_, err := q.Put(ctx, []byte("v1"), nil)
		must(t, err, "Put")
		m := getOne(t, q, 30*time.Second)
		up, err := q.Update(ctx, m.ID, m.PopReceipt, []byte("v2"), 0)
		must(t, err, "Update")
		if up.PopReceipt == "" || up.PopReceipt == m.PopReceipt {
			t.Errorf("Update returned pop receipt %q, want a new one (old %q)", up.PopReceipt, m.PopReceipt)
		}
		// Visible again at once, with the new content.
		again := getOne(t, q, 30*time.Second)
		if string(again.Body) != "v2" || again.DequeueCount != 2 {
			t.Errorf("after Update: {Body %q, DequeueCount %d}, want {v2, 2}", again.Body, again.DequeueCount)
		}
		// An update with a nil body keeps the content and hides the message.
		up, err = q.Update(ctx, again.ID, again.PopReceipt, nil, time.Hour)
		must(t, err, "Update visibility only")
		wantNone(t, q, "after hiding for an hour")
		_, err = q.Update(ctx, again.ID, again.PopReceipt, nil, 0)
		wantErrIn(t, err, codeStatus{store.CodeMessageNotFound, 404}, codeStatus{store.CodePopReceiptMismatch, 400})
		up, err = q.Update(ctx, up.ID, up.PopReceipt, nil, 0)
		must(t, err, "Update with the latest receipt")
		if m := getOne(t, q, 30*time.Second); string(m.Body) != "v2" {
			t.Errorf("after a nil-body Update the body is %q, want v2", m.Body)
		}
	})

	s.run(t, "TTL_Expires", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		short, err := q.Put(ctx, []byte("short"), &store.PutOptions{TTL: time.Second})
		must(t, err, "Put with TTL 1s")
		if !near(short.ExpirationTime, short.InsertionTime.Add(time.Second), 500*time.Millisecond) {
			t.Errorf("ExpirationTime %s, want 1 s after %s", short.ExpirationTime, short.InsertionTime)
		}
		forever, err := q.Put(ctx, []byte("forever"), &store.PutOptions{TTL: store.NeverExpires})
		must(t, err, "Put with no expiry")
		if forever.ExpirationTime.Year() < 9999 {
			t.Errorf("a message that never expires reports ExpirationTime %s, want the end of 9999", forever.ExpirationTime)
		}
		deadline := time.Now().Add(pause)
		for {
			ms, err := q.Peek(ctx, store.MaxMessagesPerGet)
			must(t, err, "Peek")
			if len(ms) == 1 && ms[0].ID == forever.ID {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message with TTL 1 s still there after %s (%d messages)", pause, len(ms))
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	s.run(t, "MessageSize_RequestBodyTooLarge", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		body := bytes.Repeat([]byte("m"), store.MaxMessageSize)
		_, err := q.Put(ctx, body, nil)
		must(t, err, "Put of 64 KiB")
		_, err = q.Put(ctx, append(body, 'x'), nil)
		wantErr(t, err, store.CodeRequestBodyTooLarge, 413, noIndex)
		if m := getOne(t, q, 30*time.Second); !bytes.Equal(m.Body, body) {
			t.Errorf("64 KiB message came back as %d bytes", len(m.Body))
		}
		wantNone(t, q, "after the refused put")
		// A body that is not text travels as base64: the limit is on the
		// encoded text (driver.MessageTextSize).
		binary := bytes.Repeat([]byte{0xFF, 0x00, 0x80}, store.MaxBinaryMessageSize/3)
		_, err = q.Put(ctx, append(binary, 0xFF), nil)
		wantErr(t, err, store.CodeRequestBodyTooLarge, 413, noIndex)
		_, err = q.Put(ctx, binary, nil)
		must(t, err, "Put of the largest binary body")
		if m := getOne(t, q, 30*time.Second); !bytes.Equal(m.Body, binary) {
			t.Errorf("binary message of %d bytes came back as %d bytes", len(binary), len(m.Body))
		}
		wantNone(t, q, "after the refused binary put")
	})

	s.run(t, "BinaryBody_RoundTrip", func(t *testing.T) {
		q := s.newQueue(t)
		body := []byte{0, 1, 2, '<', '&', 0xFF, 0xFE, '\n'}
		_, err := q.Put(t.Context(), body, nil)
		must(t, err, "Put")
		if m := getOne(t, q, 30*time.Second); !bytes.Equal(m.Body, body) {
			t.Errorf("body %v came back as %v", body, m.Body)
		}
	})

	s.run(t, "MissingQueue_QueueNotFound", func(t *testing.T) {
		q := s.h.New(t).Queue(s.names.next())
		ctx := t.Context()
		_, err := q.Put(ctx, []byte("x"), nil)
		wantErr(t, err, store.CodeQueueNotFound, 404, noIndex)
		_, err = q.Get(ctx, 1, time.Second)
		wantErr(t, err, store.CodeQueueNotFound, 404, noIndex)
		_, err = q.Peek(ctx, 1)
		wantErr(t, err, store.CodeQueueNotFound, 404, noIndex)
		err = q.Delete(ctx)
		wantErr(t, err, store.CodeQueueNotFound, 404, noIndex)
	})

	s.run(t, "Name_InvalidResourceName", func(t *testing.T) {
		st := s.h.New(t)
		base := s.names.next()
		for _, name := range []string{base + "_x", "-" + base, base + "-", base[:3] + "--x", "Upper" + base, base + " x"} {
			err := st.Queue(name).Create(t.Context())
			if !wantErr(t, err, store.CodeInvalidResourceName, 400, noIndex) {
				t.Logf("queue name %q", name)
			}
		}
		for _, name := range []string{"ab", base + strings.Repeat("x", 64-len(base))} {
			err := st.Queue(name).Create(t.Context())
			if !wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex) {
				t.Logf("queue name of %d characters", len(name))
			}
		}
	})

	s.run(t, "PutDurations_OutOfRange", func(t *testing.T) {
		q := s.newQueue(t)
		ctx := t.Context()
		for _, o := range []store.PutOptions{
			{VisibilityDelay: -time.Second},
			{VisibilityDelay: store.MaxVisibilityTimeout + time.Second, TTL: store.NeverExpires},
			{VisibilityDelay: time.Hour, TTL: time.Minute}, // visible only after it expired
			{TTL: -2 * time.Second},
		} {
			_, err := q.Put(ctx, []byte("x"), &o)
			if !wantErr(t, err, store.CodeOutOfRangeQueryParameterValue, 400, noIndex) {
				t.Logf("PutOptions %+v", o)
			}
		}
		// The service counts in whole seconds.
		_, err := q.Put(ctx, []byte("x"), &store.PutOptions{TTL: 1500 * time.Millisecond})
		wantErr(t, err, store.CodeInvalidQueryParameterValue, 400, noIndex)
		wantNone(t, q, "after the refused puts")
	})

	s.run(t, "CreateExisting_Succeeds", func(t *testing.T) {
		q := s.newQueue(t)
		_, err := q.Put(t.Context(), []byte("kept"), nil)
		must(t, err, "Put")
		must(t, q.Create(t.Context()), "second Create")
		if m := getOne(t, q, 30*time.Second); string(m.Body) != "kept" {
			t.Errorf("second Create lost the message: got %q", m.Body)
		}
	})
}
