package eventual

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// ErrNoHandler matches the error of a step whose kind no StepHandler of
// this engine carries out: the process running the worker did not
// register it (Engine.Handle) before working. It is not permanent: the
// message comes back, and goes to the poison queue after MaxReceives
// receives if no worker that knows the kind takes it.
var ErrNoHandler = errors.New("eventual: no handler for the step's kind")

// MaxKindLen bounds the name of a kind of step registered with Handle.
const MaxKindLen = 128

// StepHandler carries out the steps of a kind of its own: the way a
// package built on the engine (a secondary index in other partitions, a
// denormalized copy) runs writes whose guard is more than the engine's
// version check, such as a copy owned by one source at a time.
//
// Run must be idempotent under the operation's version, as the built-in
// steps are: it runs at least once, possibly twice, possibly after a
// later operation of the same source. An error matching
// store.ErrInvalidInput (not store.ErrTransient) is permanent: the
// message goes to the poison queue at once with it; any other error is
// retried (StepAttempts within a receive, then on later receives).
type StepHandler struct {
	// Check, when set, refuses a step no worker could run, before the
	// source write commits (Tx.Then, Submit) and again before it runs.
	Check func(s Step) error
	// Run carries out the step. It must return when ctx ends: each try
	// runs under Options.StepTimeout, and a Run that ignores its context
	// holds the worker's slot and its message for as long as it runs.
	Run func(ctx context.Context, op Operation, s Step) error
}

// Custom returns a step of a kind registered with Handle: its table,
// entity (keys and properties, kept with their types) and data are the
// handler's to read.
func Custom(kind StepKind, table string, e store.Entity, data []byte) Step {
	return Step{Kind: kind, Table: table, Entity: e, Data: data}
}

// Handle registers the handler of steps of kind. Register the same kinds
// on every engine whose workers may receive them, before Work, Drain or
// ProcessOnce. It refuses a built-in kind, an empty or too long name, a
// kind registered already, and a handler without Run.
func (e *Engine) Handle(kind StepKind, h StepHandler) error {
	if e == nil {
		return refuse("the engine is nil: make one with eventual.New")
	}
	switch kind {
	case StepUpsert, StepDelete, StepPutBlob, StepDeleteBlob:
		return refuse("step kind %q is built in", kind)
	}
	if kind == "" || len(kind) > MaxKindLen {
		return refuse("step kind %q must be 1 to %d bytes", kind, MaxKindLen)
	}
	if h.Run == nil {
		return refuse("the handler of step kind %q has no Run", kind)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.handlers[kind]; dup {
		return refuse("step kind %q is registered already", kind)
	}
	if e.handlers == nil {
		e.handlers = map[StepKind]*StepHandler{}
	}
	e.handlers[kind] = &h
	return nil
}

// handler returns the handler of kind, or nil.
func (e *Engine) handler(kind StepKind) *StepHandler {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.handlers[kind]
}

// Store returns the store the engine writes to: handlers and the packages
// that register them read and write through it.
func (e *Engine) Store() store.Store {
	if e == nil {
		return nil
	}
	return e.st
}

// hasEntity reports whether a custom step carries an entity to encode.
func hasEntity(s Step) bool {
	return s.Entity.PartitionKey != "" || s.Entity.RowKey != "" || len(s.Entity.Properties) > 0
}

// checkCustom checks a step of a registered kind: its table name and
// entity when it has them, then the handler's own check.
func checkCustom(s Step, custom func(StepKind) *StepHandler) error {
	var h *StepHandler
	if custom != nil {
		h = custom(s.Kind)
	}
	if h == nil {
		// Not a refusal: a worker without the handler leaves the message
		// for one that has it.
		return fmt.Errorf("%w %q: register it with Engine.Handle on this engine", ErrNoHandler, s.Kind)
	}
	if s.Table != "" {
		if err := store.ValidateTableName(s.Table); err != nil {
			return err
		}
	}
	if hasEntity(s) {
		e := s.Entity
		if err := store.ValidateEntity(&e); err != nil {
			return err
		}
	}
	if h.Check != nil {
		return h.Check(s)
	}
	return nil
}

// runCustom runs a step of a registered kind.
func (e *Engine) runCustom(ctx context.Context, op Operation, s Step) error {
	h := e.handler(s.Kind)
	if h == nil {
		return fmt.Errorf("%w %q: register it with Engine.Handle on this worker's engine", ErrNoHandler, s.Kind)
	}
	return h.Run(ctx, op, s)
}
