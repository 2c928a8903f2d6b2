package azqueues

import (
	"context"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
)

// queueHandle is one queue of the account; it implements store.Queue.
type queueHandle struct {
	svc    *service
	name   string
	client *azqueue.QueueClient
}

// Name implements store.Queue.
func (h *queueHandle) Name() string { return h.name }

func (h *queueHandle) ready() error {
	if err := store.ValidateQueueName(h.name); err != nil {
		return err
	}
	if h.client == nil {
		return azbase.ErrNoEndpoint("queue")
	}
	return nil
}

// Create implements store.Queue; an existing queue is not an error.
func (h *queueHandle) Create(ctx context.Context) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.Create(ctx, nil)
	err = azbase.Classify(ctx, err, "create queue "+azbase.Quote(h.name), true)
	if store.Code(err) == store.CodeQueueAlreadyExists {
		return nil
	}
	return err
}

// Delete implements store.Queue.
func (h *queueHandle) Delete(ctx context.Context) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.Delete(azbase.Once(ctx, h.svc.writeRetry), nil)
	return azbase.Classify(ctx, err, "delete queue "+azbase.Quote(h.name), true)
}

// encodeBody checks a body and returns the message text it travels as
// (driver.EncodeMessageText: plain text as is, anything else as base64).
func encodeBody(body []byte) (string, error) {
	if err := driver.ValidateMessageBody(body); err != nil {
		return "", err
	}
	return driver.EncodeMessageText(body), nil
}

func decodeBody(text *string) []byte {
	if text == nil {
		return []byte{}
	}
	return driver.DecodeMessageText(*text)
}

func seconds(d time.Duration) *int32 { return to.Ptr(int32(d / time.Second)) }

// Put implements store.Queue. A put is retried only when refused outright:
// a replay after a lost response would enqueue the message twice.
func (h *queueHandle) Put(ctx context.Context, body []byte, opts *store.PutOptions) (store.Message, error) {
	ctx, err := azbase.Begin(ctx)
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
	delay, ttl, err := driver.ResolvePut(opts)
	if err != nil {
		return store.Message{}, err
	}
	o := &azqueue.EnqueueMessageOptions{VisibilityTimeout: seconds(delay), TimeToLive: to.Ptr(int32(-1))}
	if ttl > 0 {
		o.TimeToLive = seconds(ttl)
	}
	resp, err := h.client.EnqueueMessage(azbase.Once(ctx, h.svc.writeRetry), text, o)
	if err != nil {
		return store.Message{}, azbase.Classify(ctx, err, "put to queue "+azbase.Quote(h.name), true)
	}
	var m store.Message
	if len(resp.Messages) > 0 && resp.Messages[0] != nil {
		e := resp.Messages[0]
		m = store.Message{ID: azbase.Deref(e.MessageID), PopReceipt: azbase.Deref(e.PopReceipt),
			InsertionTime: azbase.DerefTime(e.InsertionTime), NextVisible: azbase.DerefTime(e.TimeNextVisible),
			ExpirationTime: azbase.DerefTime(e.ExpirationTime)}
	}
	return m, nil
}

// Get implements store.Queue.
func (h *queueHandle) Get(ctx context.Context, n int, visibility time.Duration) ([]store.Message, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := driver.ValidateMessageCount("Get", n); err != nil {
		return nil, err
	}
	if err := driver.ValidateVisibility("visibility timeout", visibility, store.MinGetVisibility); err != nil {
		return nil, err
	}
	resp, err := h.client.DequeueMessages(azbase.Once(ctx, h.svc.writeRetry), &azqueue.DequeueMessagesOptions{
		NumberOfMessages: to.Ptr(int32(n)), VisibilityTimeout: seconds(visibility)})
	if err != nil {
		return nil, azbase.Classify(ctx, err, "get from queue "+azbase.Quote(h.name), true)
	}
	out := make([]store.Message, 0, len(resp.Messages))
	for _, d := range resp.Messages {
		if d == nil {
			continue
		}
		m := store.Message{ID: azbase.Deref(d.MessageID), PopReceipt: azbase.Deref(d.PopReceipt),
			InsertionTime: azbase.DerefTime(d.InsertionTime), ExpirationTime: azbase.DerefTime(d.ExpirationTime),
			NextVisible: azbase.DerefTime(d.TimeNextVisible), Body: decodeBody(d.MessageText)}
		if d.DequeueCount != nil {
			m.DequeueCount = *d.DequeueCount
		}
		out = append(out, m)
	}
	return out, nil
}

// Peek implements store.Queue.
func (h *queueHandle) Peek(ctx context.Context, n int) ([]store.Message, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.ready(); err != nil {
		return nil, err
	}
	if err := driver.ValidateMessageCount("Peek", n); err != nil {
		return nil, err
	}
	resp, err := h.client.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(n))})
	if err != nil {
		return nil, azbase.Classify(ctx, err, "peek at queue "+azbase.Quote(h.name), false)
	}
	out := make([]store.Message, 0, len(resp.Messages))
	for _, p := range resp.Messages {
		if p == nil {
			continue
		}
		m := store.Message{ID: azbase.Deref(p.MessageID), InsertionTime: azbase.DerefTime(p.InsertionTime),
			ExpirationTime: azbase.DerefTime(p.ExpirationTime), Body: decodeBody(p.MessageText)}
		if p.DequeueCount != nil {
			m.DequeueCount = *p.DequeueCount
		}
		out = append(out, m)
	}
	return out, nil
}

// Update implements store.Queue.
func (h *queueHandle) Update(ctx context.Context, id, popReceipt string, body []byte, visibility time.Duration) (store.Message, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return store.Message{}, err
	}
	if err := h.ready(); err != nil {
		return store.Message{}, err
	}
	if err := driver.ValidateVisibility("visibility timeout", visibility, 0); err != nil {
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
	resp, err := h.client.UpdateMessage(azbase.Once(ctx, h.svc.writeRetry), id, popReceipt, content, o)
	if err != nil {
		return store.Message{}, azbase.Classify(ctx, err, "update message "+azbase.Quote(id)+" of queue "+azbase.Quote(h.name), true)
	}
	return store.Message{ID: id, PopReceipt: azbase.Deref(resp.PopReceipt), NextVisible: azbase.DerefTime(resp.TimeNextVisible), Body: body}, nil
}

// DeleteMessage implements store.Queue.
func (h *queueHandle) DeleteMessage(ctx context.Context, id, popReceipt string) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	_, err = h.client.DeleteMessage(azbase.Once(ctx, h.svc.writeRetry), id, popReceipt, nil)
	return azbase.Classify(ctx, err, "delete message "+azbase.Quote(id)+" of queue "+azbase.Quote(h.name), true)
}

// queuePolicy drops the body of a message update marked
// withKeepMessageBody: azqueue always sends a message text, but Update
// Message without a body changes only the visibility and keeps the text.
type queuePolicy struct{}

func withKeepMessageBody(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKeepMessageBody, true)
}

func (queuePolicy) Do(req *policy.Request) (*http.Response, error) {
	if keep, _ := req.Raw().Context().Value(ctxKeepMessageBody).(bool); keep && req.Raw().Method == http.MethodPut {
		if err := req.SetBody(nil, ""); err != nil {
			return nil, err
		}
		req.Raw().Header.Del("Content-Type")
	}
	return req.Next()
}
