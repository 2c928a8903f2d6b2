package azstore

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablekit/tablekit/store"
)

// queueHandle is one queue of the account; it implements store.Queue.
type queueHandle struct {
	s      *Store
	name   string
	client *azqueue.QueueClient
}

// Queue implements store.Store. It does no I/O.
func (s *Store) Queue(name string) store.Queue {
	h := &queueHandle{s: s, name: name}
	if s.queues != nil {
		h.client = s.queues.NewQueueClient(name)
	}
	return h
}

// Name implements store.Queue.
func (h *queueHandle) Name() string { return h.name }

func (h *queueHandle) ready() error {
	if err := validateResourceName("queue", h.name); err != nil {
		return err
	}
	if h.client == nil {
		return errNoEndpoint("queue")
	}
	return nil
}

// Create implements store.Queue; an existing queue is not an error.
func (h *queueHandle) Create(ctx context.Context) error {
	if err := h.ready(); err != nil {
		return err
	}
	_, err := h.client.Create(ctx, nil)
	err = mapErr(err, "create queue "+quote(h.name))
	if store.Code(err) == store.CodeQueueAlreadyExists {
		return nil
	}
	return err
}

// Delete implements store.Queue.
func (h *queueHandle) Delete(ctx context.Context) error {
	if err := h.ready(); err != nil {
		return err
	}
	_, err := h.client.Delete(h.s.once(ctx), nil)
	return mapErr(err, "delete queue "+quote(h.name))
}

// checkMessageText refuses a body the service cannot carry: a message is
// XML text, so it must be valid UTF-8 without control characters other
// than tab, CR and LF.
func checkMessageText(body []byte) error {
	if len(body) > store.MaxMessageSize {
		return store.Errorf(store.CodeRequestBodyTooLarge, 413,
			"message of %d bytes is over the limit of %d bytes", len(body), store.MaxMessageSize)
	}
	if !utf8.Valid(body) {
		return store.Errorf(store.CodeInvalidInput, 400, "message body is not valid UTF-8: the queue service carries text (base64-encode binary bodies)")
	}
	for i, c := range body {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return store.Errorf(store.CodeInvalidInput, 400, "message body has control character %#x at offset %d: XML text cannot carry it (base64-encode binary bodies)", c, i)
		}
	}
	return nil
}

func seconds(d time.Duration) *int32 { return to.Ptr(int32(d / time.Second)) }

// Put implements store.Queue. A put is retried only when refused outright:
// a replay after a lost response would enqueue the message twice.
func (h *queueHandle) Put(ctx context.Context, body []byte, opts *store.PutOptions) (store.Message, error) {
	if err := h.ready(); err != nil {
		return store.Message{}, err
	}
	if err := checkMessageText(body); err != nil {
		return store.Message{}, err
	}
	delay, ttl, err := putTimes(opts)
	if err != nil {
		return store.Message{}, err
	}
	o := &azqueue.EnqueueMessageOptions{VisibilityTimeout: seconds(delay), TimeToLive: to.Ptr(int32(-1))}
	if ttl > 0 {
		o.TimeToLive = seconds(ttl)
	}
	resp, err := h.client.EnqueueMessage(h.s.once(ctx), string(body), o)
	if err != nil {
		return store.Message{}, mapErr(err, "put to queue "+quote(h.name))
	}
	var m store.Message
	if len(resp.Messages) > 0 && resp.Messages[0] != nil {
		e := resp.Messages[0]
		m = store.Message{ID: deref(e.MessageID), PopReceipt: deref(e.PopReceipt),
			InsertionTime: derefTime(e.InsertionTime), NextVisible: derefTime(e.TimeNextVisible)}
		if ttl > 0 {
			m.ExpirationTime = derefTime(e.ExpirationTime)
		}
	}
	return m, nil
}

// Get implements store.Queue.
func (h *queueHandle) Get(ctx context.Context, n int, visibility time.Duration) ([]store.Message, error) {
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := checkCount("Get", n); err != nil {
		return nil, err
	}
	if err := checkVisibility("visibility timeout", visibility, time.Second); err != nil {
		return nil, err
	}
	resp, err := h.client.DequeueMessages(h.s.once(ctx), &azqueue.DequeueMessagesOptions{
		NumberOfMessages: to.Ptr(int32(n)), VisibilityTimeout: seconds(visibility)})
	if err != nil {
		return nil, mapErr(err, "get from queue "+quote(h.name))
	}
	out := make([]store.Message, 0, len(resp.Messages))
	for _, d := range resp.Messages {
		if d == nil {
			continue
		}
		m := store.Message{ID: deref(d.MessageID), PopReceipt: deref(d.PopReceipt),
			InsertionTime: derefTime(d.InsertionTime), ExpirationTime: expiry(d.ExpirationTime),
			NextVisible: derefTime(d.TimeNextVisible), Body: []byte(deref(d.MessageText))}
		if d.DequeueCount != nil {
			m.DequeueCount = *d.DequeueCount
		}
		out = append(out, m)
	}
	return out, nil
}

// Peek implements store.Queue.
func (h *queueHandle) Peek(ctx context.Context, n int) ([]store.Message, error) {
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := checkCount("Peek", n); err != nil {
		return nil, err
	}
	resp, err := h.client.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(n))})
	if err != nil {
		return nil, mapErr(err, "peek at queue "+quote(h.name))
	}
	out := make([]store.Message, 0, len(resp.Messages))
	for _, p := range resp.Messages {
		if p == nil {
			continue
		}
		m := store.Message{ID: deref(p.MessageID), InsertionTime: derefTime(p.InsertionTime),
			ExpirationTime: expiry(p.ExpirationTime), Body: []byte(deref(p.MessageText))}
		if p.DequeueCount != nil {
			m.DequeueCount = *p.DequeueCount
		}
		out = append(out, m)
	}
	return out, nil
}

// Update implements store.Queue.
func (h *queueHandle) Update(ctx context.Context, id, popReceipt string, body []byte, visibility time.Duration) (store.Message, error) {
	if err := h.ready(); err != nil {
		return store.Message{}, err
	}
	if err := checkVisibility("visibility timeout", visibility, 0); err != nil {
		return store.Message{}, err
	}
	o := &azqueue.UpdateMessageOptions{VisibilityTimeout: seconds(visibility)}
	content := ""
	if body != nil {
		if err := checkMessageText(body); err != nil {
			return store.Message{}, err
		}
		content = string(body)
	}
	// azqueue v1.0.1 always sends a message text, so an Update with a nil
	// body sets it to "" on Azure (memstore keeps it): see docs/azure.md.
	resp, err := h.client.UpdateMessage(h.s.once(ctx), id, popReceipt, content, o)
	if err != nil {
		return store.Message{}, mapErr(err, "update message "+quote(id)+" of queue "+quote(h.name))
	}
	return store.Message{ID: id, PopReceipt: deref(resp.PopReceipt), NextVisible: derefTime(resp.TimeNextVisible), Body: body}, nil
}

// DeleteMessage implements store.Queue.
func (h *queueHandle) DeleteMessage(ctx context.Context, id, popReceipt string) error {
	if err := h.ready(); err != nil {
		return err
	}
	_, err := h.client.DeleteMessage(h.s.once(ctx), id, popReceipt, nil)
	return mapErr(err, "delete message "+quote(id)+" of queue "+quote(h.name))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// expiry maps the service's "never" (9999-12-31) to the zero time, as
// memstore reports a message that never expires.
func expiry(t *time.Time) time.Time {
	if t == nil || t.Year() >= 9999 {
		return time.Time{}
	}
	return t.UTC()
}
