package mapper

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// Error is the mapper's error: a struct type it cannot map (a bad tag or an
// unsupported field type), or a value it refuses to store or load. It names
// the struct type, the Go field and the property, so that a failure deep
// in a request points at the line to fix. Err, when set, is the cause (for
// example a *store.Error with code PropertyValueTooLarge), and errors.Is
// and errors.As see through to it.
type Error struct {
	// Type is the struct type being mapped.
	Type reflect.Type
	// Field is the Go field path, such as "Address.City"; empty for
	// type-level failures.
	Field string
	// Property is the table property name, when the failure concerns one.
	Property string
	// Msg says what is wrong, naming the offending value and the limit.
	Msg string
	// Err is the underlying cause, if any.
	Err error
}

// Error formats the type, field, property and message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mapper: ")
	if e.Type != nil {
		b.WriteString(e.Type.String())
		if e.Field != "" {
			b.WriteString(".")
			b.WriteString(e.Field)
		}
	} else if e.Field != "" {
		b.WriteString(e.Field)
	}
	if e.Property != "" && e.Property != lastSegment(e.Field) {
		fmt.Fprintf(&b, " (property %q)", e.Property)
	}
	const prefix = len("mapper: ")
	for _, part := range [...]string{e.Msg, errText(e.Err)} {
		if part == "" {
			continue
		}
		if b.Len() > prefix {
			b.WriteString(": ")
		}
		b.WriteString(part)
	}
	return b.String()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Unwrap returns the underlying cause and, when the cause is not (and does
// not wrap) a *store.Error, the refusal as one: InvalidInput (400), made
// by tablekit's own checks. So errors.As(err, &se) with se a *store.Error
// works for every refusal, whether the mapper or the store noticed it,
// and errors.Is(err, store.ErrInvalidInput) holds; the mapper's Error,
// around it, names the type, field and property.
func (e *Error) Unwrap() []error {
	var se *store.Error
	if e.Err != nil && errors.As(e.Err, &se) {
		return []error{e.Err}
	}
	msg := strings.TrimPrefix(e.Error(), "mapper: ")
	refused := &store.Error{Code: store.CodeInvalidInput, Status: 400, Index: -1, Message: msg, Source: store.SourceClient}
	if e.Err == nil {
		return []error{refused}
	}
	return []error{e.Err, refused}
}

func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// fieldErr builds an *Error for field f of codec c.
func (f *field) errorf(format string, args ...any) *Error {
	return &Error{Type: f.owner, Field: f.goPath, Property: f.name, Msg: fmt.Sprintf(format, args...)}
}

// wrap builds an *Error for field f with a cause.
func (f *field) wrap(err error, format string, args ...any) *Error {
	e := f.errorf(format, args...)
	e.Err = err
	return e
}
