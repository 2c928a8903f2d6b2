package mapper

import (
	"fmt"
	"reflect"
	"strings"
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

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

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
