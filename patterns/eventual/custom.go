package eventual

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// StepCustom runs a function registered with Engine.Handle: a step whose
// write the engine does not know itself, such as adding an id to a list
// kept in another partition. The engine delivers it as it delivers every
// step (at least once, in order, retried with backoff, poisoned after
// MaxReceives); the function supplies the idempotence.
const StepCustom StepKind = "custom"

// MaxHandlerLen bounds the name of a custom step's handler.
const MaxHandlerLen = 256

// StepFunc carries out one custom step of op. It may run late, more than
// once, and at the same time as other steps on the same rows (several
// workers, a redelivered message), so it must be idempotent and guarded:
// read what is stored, decide from the operation's Version or from the
// source's current state, and write conditionally. An error matching
// store.ErrInvalidInput (and not store.ErrTransient) sends the message
// to the poison queue at once; any other error is retried.
type StepFunc func(ctx context.Context, op Operation, s Step) error

// Custom returns the step that runs the function registered under
// handler (Engine.Handle) with data as its input. The data travels in the
// operation (an outbox row, a message or a blob), so keep it to what the
// function needs.
func Custom(handler string, data []byte) Step {
	return Step{Kind: StepCustom, Handler: handler, Data: data}
}

// Handle registers fn as the function of the custom steps named name.
// Every engine whose workers may receive such a step must register it
// before it works: a step whose handler is unknown fails and is retried,
// then poisoned, with an error naming the handler. It refuses an empty,
// too long or already registered name.
func (e *Engine) Handle(name string, fn StepFunc) error {
	if err := checkHandlerName(name); err != nil {
		return err
	}
	if fn == nil {
		return refuse("handler %q: the function is nil", name)
	}
	e.handlersMu.Lock()
	defer e.handlersMu.Unlock()
	if _, dup := e.handlers[name]; dup {
		return refuse("handler %q is registered already", name)
	}
	if e.handlers == nil {
		e.handlers = map[string]StepFunc{}
	}
	e.handlers[name] = fn
	return nil
}

// checkHandlerName refuses a name no handler can have.
func checkHandlerName(name string) error {
	if n := store.UTF16Len(name); n < 1 || n > MaxHandlerLen {
		return refuse("handler name %q is %d characters long: it must be 1 to %d", name, n, MaxHandlerLen)
	}
	return nil
}

// custom runs a custom step through its handler.
func (e *Engine) custom(ctx context.Context, op Operation, s Step) error {
	e.handlersMu.RLock()
	fn := e.handlers[s.Handler]
	e.handlersMu.RUnlock()
	if fn == nil {
		return fmt.Errorf("eventual: no handler %q is registered with this engine (Engine.Handle)", s.Handler)
	}
	return fn(ctx, op, s)
}
