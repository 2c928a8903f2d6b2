package azstore

import (
	"context"
	"time"

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
	if err := store.ValidateQueueName(h.name); err != nil {
		return err
	}
	if h.client == nil {
		return errNoEndpoint("queue")
	}
	return nil
}

// Create implements store.Queue; an existing queue is not an error.
func (h *queueHandle) Create(ctx context.Context) error {
	ctx, err := begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.Create(ctx, nil)
	err = classify(ctx, err, "create queue "+quote(h.name), true)
	if store.Code(err) == store.CodeQueueAlreadyExists {
		return nil
	}
	return err
}

// Delete implements store.Queue.
func (h *queueHandle) Delete(ctx context.Context) error {
	ctx, err := begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.Delete(h.s.once(ctx), nil)
	return classify(ctx, err, "delete queue "+quote(h.name), true)
}

// encodeBody checks a body and returns the message text it travels as
// (store.EncodeMessageText: plain text as is, anything else as base64).
func encodeBody(body []byte) (string, error) {
	if err := store.ValidateMessageBody(body); err != nil {
		return "", err
	}
	return store.EncodeMessageText(body), nil
}

func decodeBody(text *string) []byte {
	if text == nil {
		return []byte{}
	}
	return store.DecodeMessageText(*text)
}

func seconds(d time.Duration) *int32 { return to.Ptr(int32(d / time.Second)) }

// Put implements store.Queue. A put is retried only when refused outright:
// a replay after a lost response would enqueue the message twice.
func (h *queueHandle) Put(ctx context.Context, body []byte, opts *store.PutOptions) (store.Message, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return store.Message{}, err
	}
	if err := h.ready(); err != nil {
		return store.Message{}, err
	}
	text, err := encodeBody(body)
	if err != nil {
		return store.Message{}, err
	}
	delay, ttl, err := store.ResolvePut(opts)
	if err != nil {
		return store.Message{}, err
	}
	o := &azqueue.EnqueueMessageOptions{VisibilityTimeout: seconds(delay), TimeToLive: to.Ptr(int32(-1))}
	if ttl > 0 {
		o.TimeToLive = seconds(ttl)
	}
	resp, err := h.client.EnqueueMessage(h.s.once(ctx), text, o)
	if err != nil {
		return store.Message{}, classify(ctx, err, "put to queue "+quote(h.name), true)
	}
	var m store.Message
	if len(resp.Messages) > 0 && resp.Messages[0] != nil {
		e := resp.Messages[0]
		m = store.Message{ID: deref(e.MessageID), PopReceipt: deref(e.PopReceipt),
			InsertionTime: derefTime(e.InsertionTime), NextVisible: derefTime(e.TimeNextVisible),
			ExpirationTime: derefTime(e.ExpirationTime)}
	}
	return m, nil
}

// Get implements store.Queue.
func (h *queueHandle) Get(ctx context.Context, n int, visibility time.Duration) ([]store.Message, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := store.ValidateMessageCount("Get", n); err != nil {
		return nil, err
	}
	if err := store.ValidateVisibility("visibility timeout", visibility, store.MinGetVisibility); err != nil {
		return nil, err
	}
	resp, err := h.client.DequeueMessages(h.s.once(ctx), &azqueue.DequeueMessagesOptions{
		NumberOfMessages: to.Ptr(int32(n)), VisibilityTimeout: seconds(visibility)})
	if err != nil {
		return nil, classify(ctx, err, "get from queue "+quote(h.name), true)
	}
	out := make([]store.Message, 0, len(resp.Messages))
	for _, d := range resp.Messages {
		if d == nil {
			continue
		}
		m := store.Message{ID: deref(d.MessageID), PopReceipt: deref(d.PopReceipt),
			InsertionTime: derefTime(d.InsertionTime), ExpirationTime: derefTime(d.ExpirationTime),
			NextVisible: derefTime(d.TimeNextVisible), Body: decodeBody(d.MessageText)}
		if d.DequeueCount != nil {
			m.DequeueCount = *d.DequeueCount
		}
		out = append(out, m)
	}
	return out, nil
}

// Peek implements store.Queue.
func (h *queueHandle) Peek(ctx context.Context, n int) ([]store.Message, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := store.ValidateMessageCount("Peek", n); err != nil {
		return nil, err
	}
	resp, err := h.client.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(n))})
	if err != nil {
		return nil, classify(ctx, err, "peek at queue "+quote(h.name), false)
	}
	out := make([]store.Message, 0, len(resp.Messages))
	for _, p := range resp.Messages {
		if p == nil {
			continue
		}
		m := store.Message{ID: deref(p.MessageID), InsertionTime: derefTime(p.InsertionTime),
			ExpirationTime: derefTime(p.ExpirationTime), Body: decodeBody(p.MessageText)}
		if p.DequeueCount != nil {
			m.DequeueCount = *p.DequeueCount
		}
		out = append(out, m)
	}
	return out, nil
}

// Update implements store.Queue.
func (h *queueHandle) Update(ctx context.Context, id, popReceipt string, body []byte, visibility time.Duration) (store.Message, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return store.Message{}, err
	}
	if err := h.ready(); err != nil {
		return store.Message{}, err
	}
	if err := store.ValidateVisibility("visibility timeout", visibility, 0); err != nil {
		return store.Message{}, err
	}
	o := &azqueue.UpdateMessageOptions{VisibilityTimeout: seconds(visibility)}
	content := ""
	if body != nil {
		var err error
		if content, err = encodeBody(body); err != nil {
			return store.Message{}, err
		}
	}
	if body == nil {
		// azqueue always sends a message text; queuePolicy drops it so the
		// service keeps the current one.
		ctx = withKeepMessageBody(ctx)
	}
	resp, err := h.client.UpdateMessage(h.s.once(ctx), id, popReceipt, content, o)
	if err != nil {
		return store.Message{}, classify(ctx, err, "update message "+quote(id)+" of queue "+quote(h.name), true)
	}
	return store.Message{ID: id, PopReceipt: deref(resp.PopReceipt), NextVisible: derefTime(resp.TimeNextVisible), Body: body}, nil
}

// DeleteMessage implements store.Queue.
func (h *queueHandle) DeleteMessage(ctx context.Context, id, popReceipt string) error {
	ctx, err := begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.DeleteMessage(h.s.once(ctx), id, popReceipt, nil)
	return classify(ctx, err, "delete message "+quote(id)+" of queue "+quote(h.name), true)
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
