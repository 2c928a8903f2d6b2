package memstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// queueService holds the store's queues. Lock order: queueService.mu, then
// a queueState's mu; the clock is read under a queue's lock so that the
// times one queue hands out never go back.
type queueService struct {
	tick  func() time.Time
	delay time.Duration // WithQueueDelay: added to every Put's visibility delay

	mu     sync.Mutex
	queues map[string]*queueState
	// ids and receipts count the message IDs and pop receipts issued; they
	// are atomic so that a queue's lock holder never waits for mu.
	ids, receipts atomic.Uint64
}

func newQueueService(tick func() time.Time) *queueService {
	return &queueService{tick: tick, queues: make(map[string]*queueState)}
}

// queue returns a handle; like every store handle it does no I/O and looks
// the queue up on each call.
func (s *queueService) queue(name string) store.Queue { return &queueHandle{s: s, name: name} }

// queueState is one queue: its messages in insertion order, which is the
// order Get and Peek return visible messages in (a message that reappears
// after its visibility timeout resumes its place).
type queueState struct {
	mu      sync.Mutex
	deleted bool
	order   []*message // insertion order; may hold removed messages until compacted
	live    int        // messages in order not yet removed
	byID    map[string]*message
}

type message struct {
	id       string
	receipt  string // latest pop receipt; the only one Update and DeleteMessage accept
	dequeues int64
	inserted time.Time
	expires  time.Time // zero: never expires
	visible  time.Time
	body     []byte
	removed  bool
}

func (m *message) expired(now time.Time) bool {
	return !m.expires.IsZero() && !m.expires.After(now)
}

// expiration is the ExpirationTime reported for m; a message that never
// expires reports the service's maximum date, as Azure reports
// 9999-12-31T23:59:59Z.
func (m *message) expiration() time.Time {
	if m.expires.IsZero() {
		return store.MaxTime.Truncate(time.Second)
	}
	return m.expires
}

// view copies m for a caller; withReceipt is false for Peek, which
// reports neither a pop receipt nor the next visible time.
func (m *message) view(withReceipt bool) store.Message {
	out := store.Message{
		ID:             m.id,
		DequeueCount:   m.dequeues,
		InsertionTime:  m.inserted,
		ExpirationTime: m.expiration(),
		Body:           append([]byte{}, m.body...),
	}
	if withReceipt {
		out.PopReceipt = m.receipt
		out.NextVisible = m.visible
	}
	return out
}

func (s *queueService) nextID() string { return messageID(s.ids.Add(1)) }

func (s *queueService) nextReceipt() string { return popReceipt(s.receipts.Add(1)) }

// open finds a live queue and returns it locked; the caller unlocks it.
func (s *queueService) open(name string) (*queueState, error) {
	s.mu.Lock()
	q := s.queues[name]
	s.mu.Unlock()
	if q != nil {
		q.mu.Lock()
		if !q.deleted {
			return q, nil
		}
		q.mu.Unlock()
	}
	return nil, store.Errorf(store.CodeQueueNotFound, 404, "queue %q does not exist", name)
}

// remove takes m out of the queue; compact reclaims its slot later.
func (q *queueState) remove(m *message) {
	m.removed = true
	delete(q.byID, m.id)
	q.live--
}

// compact drops removed messages from the order slice once they are most
// of it, so removal stays amortized O(1).
func (q *queueState) compact() {
	if len(q.order) <= 32 || q.live >= len(q.order)/2 {
		return
	}
	kept := q.order[:0]
	for _, x := range q.order {
		if !x.removed {
			kept = append(kept, x)
		}
	}
	clear(q.order[len(kept):])
	q.order = kept
}

// find returns the message with the given ID unless it is gone or expired.
func (q *queueState) find(id string, now time.Time) *message {
	m := q.byID[id]
	if m == nil {
		return nil
	}
	if m.expired(now) {
		q.remove(m)
		return nil
	}
	return m
}

// visible returns up to n visible messages in order, dropping expired ones.
func (q *queueState) visible(n int, now time.Time) []*message {
	var out []*message
	defer q.compact()
	for _, m := range q.order {
		if len(out) == n {
			break
		}
		if m.removed {
			continue
		}
		if m.expired(now) {
			q.remove(m)
			continue
		}
		if !m.visible.After(now) {
			out = append(out, m)
		}
	}
	return out
}

type queueHandle struct {
	s    *queueService
	name string
}

var _ store.Queue = (*queueHandle)(nil)

// Name implements store.Queue.
func (h *queueHandle) Name() string { return h.name }

func (h *queueHandle) precheck(ctx context.Context) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	return store.ValidateQueueName(h.name)
}

// Create implements store.Queue. Creating an existing queue succeeds, as
// Create Queue does when the queue exists without metadata.
func (h *queueHandle) Create(ctx context.Context) error {
	if err := h.precheck(ctx); err != nil {
		return err
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if _, ok := h.s.queues[h.name]; !ok {
		h.s.queues[h.name] = &queueState{byID: make(map[string]*message)}
	}
	return nil
}

// Delete implements store.Queue: QueueNotFound (404) when the queue is missing.
func (h *queueHandle) Delete(ctx context.Context) error {
	if err := h.precheck(ctx); err != nil {
		return err
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	q := h.s.queues[h.name]
	if q == nil {
		return store.Errorf(store.CodeQueueNotFound, 404, "queue %q does not exist", h.name)
	}
	delete(h.s.queues, h.name)
	q.mu.Lock()
	q.deleted = true
	q.mu.Unlock()
	return nil
}

// Put implements store.Queue. The returned message carries the ID, a pop
// receipt valid for Update and DeleteMessage, and the times, but no body,
// as Put Message answers.
func (h *queueHandle) Put(ctx context.Context, body []byte, opts *store.PutOptions) (store.Message, error) {
	if err := h.precheck(ctx); err != nil {
		return store.Message{}, err
	}
	if err := driver.ValidateMessageBody(body); err != nil {
		return store.Message{}, err
	}
	delay, ttl, err := driver.ResolvePut(opts)
	if err != nil {
		return store.Message{}, err
	}
	q, err := h.s.open(h.name)
	if err != nil {
		return store.Message{}, err
	}
	defer q.mu.Unlock()
	now := h.s.tick()
	m := &message{
		id:       h.s.nextID(),
		receipt:  h.s.nextReceipt(),
		inserted: now,
		visible:  now.Add(min(delay+h.s.delay, store.MaxVisibilityTimeout)),
		body:     append([]byte{}, body...),
	}
	if ttl > 0 {
		m.expires = now.Add(ttl)
	}
	q.order = append(q.order, m)
	q.live++
	q.byID[m.id] = m
	out := m.view(true)
	out.Body = nil
	return out, nil
}

// Get implements store.Queue. It receives up to n visible messages (1 to
// 32) and hides them for visibility (1 second to 7 days, whole seconds):
// each one's dequeue count goes up and it gets a new pop receipt, which
// invalidates the previous one.
func (h *queueHandle) Get(ctx context.Context, n int, visibility time.Duration) ([]store.Message, error) {
	if err := h.precheck(ctx); err != nil {
		return nil, err
	}
	if err := driver.ValidateMessageCount("Get", n); err != nil {
		return nil, err
	}
	if err := driver.ValidateVisibility("visibility timeout", visibility, store.MinGetVisibility); err != nil {
		return nil, err
	}
	q, err := h.s.open(h.name)
	if err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	now := h.s.tick()
	got := q.visible(n, now)
	out := make([]store.Message, len(got))
	for i, m := range got {
		m.dequeues++
		m.receipt = h.s.nextReceipt()
		m.visible = now.Add(visibility)
		out[i] = m.view(true)
	}
	return out, nil
}

// Peek implements store.Queue: up to n visible messages (1 to 32), with no
// pop receipt and no next visible time, changing nothing.
func (h *queueHandle) Peek(ctx context.Context, n int) ([]store.Message, error) {
	if err := h.precheck(ctx); err != nil {
		return nil, err
	}
	if err := driver.ValidateMessageCount("Peek", n); err != nil {
		return nil, err
	}
	q, err := h.s.open(h.name)
	if err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	got := q.visible(n, h.s.tick())
	out := make([]store.Message, len(got))
	for i, m := range got {
		out[i] = m.view(false)
	}
	return out, nil
}

// received finds the message a pop receipt was issued for:
// MessageNotFound (404) when it is deleted or expired, PopReceiptMismatch
// (400) when the receipt is not its latest.
func (q *queueState) received(queue, id, receipt string, now time.Time) (*message, error) {
	m := q.find(id, now)
	if m == nil {
		return nil, store.Errorf(store.CodeMessageNotFound, 404,
			"message %q does not exist in queue %q (deleted or expired)", clip(id), queue)
	}
	if m.receipt != receipt {
		return nil, store.Errorf(store.CodePopReceiptMismatch, 400,
			"pop receipt %q is not the latest of message %q: it was received again or updated since", receipt, id)
	}
	return m, nil
}

// Update implements store.Queue. visibility may be 0 to 7 days (whole
// seconds); a non-nil body replaces the content. The message's expiry is
// not checked against the new visibility, as the service does not check it.
func (h *queueHandle) Update(ctx context.Context, id, receipt string, body []byte, visibility time.Duration) (store.Message, error) {
	if err := h.precheck(ctx); err != nil {
		return store.Message{}, err
	}
	if err := checkReceipt(receipt); err != nil {
		return store.Message{}, err
	}
	if err := driver.ValidateVisibility("visibility timeout", visibility, 0); err != nil {
		return store.Message{}, err
	}
	if body != nil {
		if err := driver.ValidateMessageBody(body); err != nil {
			return store.Message{}, err
		}
	}
	q, err := h.s.open(h.name)
	if err != nil {
		return store.Message{}, err
	}
	defer q.mu.Unlock()
	now := h.s.tick()
	m, err := q.received(h.name, id, receipt, now)
	if err != nil {
		return store.Message{}, err
	}
	if body != nil {
		m.body = append([]byte{}, body...)
	}
	m.receipt = h.s.nextReceipt()
	m.visible = now.Add(visibility)
	return m.view(true), nil
}

// DeleteMessage implements store.Queue: the pop receipt must be the
// message's latest.
func (h *queueHandle) DeleteMessage(ctx context.Context, id, receipt string) error {
	if err := h.precheck(ctx); err != nil {
		return err
	}
	if err := checkReceipt(receipt); err != nil {
		return err
	}
	q, err := h.s.open(h.name)
	if err != nil {
		return err
	}
	defer q.mu.Unlock()
	m, err := q.received(h.name, id, receipt, h.s.tick())
	if err != nil {
		return err
	}
	q.remove(m)
	q.compact()
	return nil
}
