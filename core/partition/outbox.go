package partition

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// Limits of an outbox message.
const (
	// MaxTopicLen bounds Message.Topic, in UTF-16 code units.
	MaxTopicLen = 256
	// bodyChunks is how many binary properties a body may span: 15 of
	// 64 KiB keep the row under the service's 1 MiB entity limit with room
	// for the other properties and the longest keys.
	bodyChunks = 15
	// MaxBody is the largest Message.Body: 15 binary properties of
	// store.MaxBinaryBytes (960 KiB).
	MaxBody = bodyChunks * store.MaxBinaryBytes
)

// Properties of an outbox row, beside propVersion.
const (
	propTopic        = store.ReservedPrefix + "Topic"
	propBody         = store.ReservedPrefix + "Body" // then TkBody1, TkBody2, ...
	propRequest      = store.ReservedPrefix + "Request"
	propCreated      = store.ReservedPrefix + "Created"
	propClaimedUntil = store.ReservedPrefix + "ClaimedUntil"
	propClaimedBy    = store.ReservedPrefix + "ClaimedBy"
	propClaim        = store.ReservedPrefix + "Claim"
	propAttempts     = store.ReservedPrefix + "Attempts"
)

// Message is an outbox message: the intent to deliver Body to Topic once
// the transaction that writes it commits.
type Message struct {
	// Topic says where the message goes (a queue name, an event type): 1
	// to MaxTopicLen characters.
	Topic string
	// Body is the message, at most MaxBody bytes.
	Body []byte
}

// Outbox adds an outbox row carrying m, in the same transaction as the
// data rows: it exists if and only if the transaction commits. It returns
// the row's id (its RowKey is OutboxPrefix + id); ids from one Partition
// sort by creation time. A drainer finds, claims and removes the row with
// an Outbox. An empty or too long Topic, a Body over MaxBody and a row
// over the budget are refused, naming the value and the limit.
func (t *Txn) Outbox(m Message) (string, error) {
	if err := t.usable(); err != nil {
		return "", err
	}
	if n := keys.UTF16Len(m.Topic); n < 1 || n > MaxTopicLen {
		return "", t.refused("", refuse(store.CodeInvalidInput, 400,
			"outbox topic %s is %d characters long: it must be 1 to %d", quote(m.Topic), n, MaxTopicLen))
	}
	if len(m.Body) > MaxBody {
		return "", t.refused("", refuse(store.CodePropertyValueTooLarge, 400,
			"outbox body of topic %s is %d bytes: the limit is %d (%d binary properties of %d bytes)",
			quote(m.Topic), len(m.Body), MaxBody, bodyChunks, store.MaxBinaryBytes))
	}
	id, err := t.p.s.id()
	if err != nil {
		return "", err
	}
	e := store.Entity{PartitionKey: t.p.pk, RowKey: OutboxPrefix + id, Properties: map[string]any{
		propTopic:        m.Topic,
		propVersion:      t.base.Version + 1,
		propRequest:      t.id,
		propAttempts:     int32(0),
		propCreated:      t.p.s.now().UTC(),
		propClaimedUntil: store.MinTime, // claimable at once
	}}
	for i, chunk := range chunks(m.Body) {
		e.Properties[bodyProp(i)] = chunk
	}
	a := store.Action{Kind: store.ActionInsert, Entity: e}
	if err := store.ValidateAction(&a); err != nil {
		return "", t.refused("", err)
	}
	size := store.ActionWireSize(&a)
	if err := t.fits("", a.Entity.RowKey, size); err != nil {
		return "", err
	}
	t.keys[a.Entity.RowKey] = -1
	t.outbox = append(t.outbox, a)
	t.ids = append(t.ids, id)
	t.bytes += size
	return id, nil
}

// chunks cuts a body into binary properties of at most 64 KiB; an empty
// body has none.
func chunks(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(len(b), store.MaxBinaryBytes)
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out
}

// bodyProp names the i-th body chunk: TkBody, TkBody1, TkBody2, ...
func bodyProp(i int) string {
	if i == 0 {
		return propBody
	}
	return propBody + strconv.Itoa(i)
}

// OutboxRow is an outbox row as a drainer sees it.
type OutboxRow struct {
	// Partition is the PartitionKey of the partition the row belongs to.
	Partition string
	// ID is the row's id; its RowKey is OutboxPrefix + ID.
	ID string
	// Topic and Body are the message.
	Topic string
	Body  []byte
	// Version is the partition version the writing commit created, and
	// Request its request id: a copy made from the message can record the
	// version of the source it came from.
	Version int64
	Request string
	// Created is when the message was added (the writer's clock).
	Created time.Time
	// Attempts counts the claims so far.
	Attempts int32
	// ClaimedBy is the owner of the latest claim ("" before the first),
	// and ClaimedUntil when that claim ends; a row is claimable when
	// ClaimedUntil is not after now.
	ClaimedBy    string
	ClaimedUntil time.Time
	// ETag is the row's ETag: Claim and Remove are conditional on it.
	ETag store.ETag

	claim string // the latest claim's token
}

// outboxRowOf decodes an outbox row.
func outboxRowOf(e *store.Entity) (OutboxRow, error) {
	r := OutboxRow{Partition: e.PartitionKey, ID: e.RowKey[len(OutboxPrefix):], ETag: e.ETag}
	var ok bool
	bad := func(name string) (OutboxRow, error) {
		return r, corrupt(e, "property %s is missing or of type %T", name, e.Properties[name])
	}
	p := e.Properties
	if r.Topic, ok = p[propTopic].(string); !ok {
		return bad(propTopic)
	}
	if r.Version, ok = p[propVersion].(int64); !ok {
		return bad(propVersion)
	}
	if r.Request, ok = p[propRequest].(string); !ok {
		return bad(propRequest)
	}
	if r.Created, ok = p[propCreated].(time.Time); !ok {
		return bad(propCreated)
	}
	if r.ClaimedUntil, ok = p[propClaimedUntil].(time.Time); !ok {
		return bad(propClaimedUntil)
	}
	if r.Attempts, ok = p[propAttempts].(int32); !ok {
		return bad(propAttempts)
	}
	r.ClaimedBy, _ = p[propClaimedBy].(string)
	r.claim, _ = p[propClaim].(string)
	for i := 0; i < bodyChunks; i++ {
		v, present := p[bodyProp(i)]
		if !present {
			break
		}
		b, ok := v.([]byte)
		if !ok {
			return bad(bodyProp(i))
		}
		r.Body = append(r.Body, b...)
	}
	return r, nil
}

func (r OutboxRow) String() string {
	return fmt.Sprintf("outbox row %s of partition %s (topic %s)", quote(r.ID), quote(r.Partition), quote(r.Topic))
}
