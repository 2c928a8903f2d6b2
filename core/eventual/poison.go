package eventual

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Poisoned is a message in the poison queue: its operation, where it was,
// and the error of every attempt.
type Poisoned struct {
	// ID is the message's id in the poison queue.
	ID string
	// Operation is the operation, when it could be read.
	Operation *Operation
	// Where says where the operation lives: "inline", "blob <name>",
	// "outbox <table> (<pk>, <id>)", or "not an operation message".
	Where string
	// Attempts are the failures, oldest first.
	Attempts []Attempt
}

// Attempt is one failed receive of a message.
type Attempt struct {
	At    time.Time
	Error string
}

// Poisoned lists up to n (1 to 32) messages of the poison queue without
// taking them.
func (e *Engine) Poisoned(ctx context.Context, n int) ([]Poisoned, error) {
	if err := e.usable(ctx); err != nil {
		return nil, err
	}
	msgs, err := e.poison.Peek(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("eventual: peek %s: %w", e.o.PoisonQueue, err)
	}
	out := make([]Poisoned, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, e.describe(ctx, m))
	}
	return out, nil
}

// describe reads a poison message.
func (e *Engine) describe(ctx context.Context, m store.Message) Poisoned {
	p := Poisoned{ID: m.ID, Where: "not an operation message"}
	var env envelope
	if json.Unmarshal(m.Body, &env) != nil {
		return p
	}
	for _, a := range env.Attempts {
		p.Attempts = append(p.Attempts, Attempt(a))
	}
	switch {
	case env.Outbox != nil:
		p.Where = fmt.Sprintf("outbox %s (%q, %q)", env.Outbox.Table, env.Outbox.PK, env.Outbox.ID)
	case env.Blob != "":
		p.Where = "blob " + env.Blob
	case len(env.Op) > 0:
		p.Where = "inline"
		if op, err := e.decodeOp(ctx, env.Op); err == nil {
			p.Operation = &op
		}
	default:
		var raw poisonRaw
		if json.Unmarshal(m.Body, &raw) == nil {
			for _, a := range raw.Attempts {
				p.Attempts = append(p.Attempts, Attempt(a))
			}
		}
	}
	return p
}

// Redrive moves up to n (1 to 32) poison messages back to the operations
// queue, their attempts cleared, once the cause is fixed. It returns how
// many it moved. A message that is not an operation message stays.
func (e *Engine) Redrive(ctx context.Context, n int) (int, error) {
	if err := e.usable(ctx); err != nil {
		return 0, err
	}
	msgs, err := e.poison.Get(ctx, n, e.o.Visibility)
	if err != nil {
		return 0, fmt.Errorf("eventual: receive from %s: %w", e.o.PoisonQueue, err)
	}
	moved := 0
	for _, m := range msgs {
		var env envelope
		if json.Unmarshal(m.Body, &env) != nil || (env.Outbox == nil && len(env.Op) == 0 && env.Blob == "") {
			continue
		}
		env.Attempts = nil
		if err := e.enqueue(ctx, env); err != nil {
			return moved, err
		}
		if err := e.poison.DeleteMessage(ctx, m.ID, m.PopReceipt); err != nil {
			return moved, fmt.Errorf("eventual: delete from %s: %w", e.o.PoisonQueue, err)
		}
		moved++
	}
	return moved, nil
}
