package driver

import (
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/internal/quote"
)

// refuse builds the *store.Error of one of the kit's own checks: nothing
// was sent (Source is SourceClient).
func refuse(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, format, args...)
	e.Source = store.SourceClient
	return e
}

// invalid is refuse with InvalidInput (400).
func invalid(format string, args ...any) *store.Error {
	return refuse(store.CodeInvalidInput, 400, format, args...)
}

// quoteTrunc quotes a caller's value for an error message, as store does.
func quoteTrunc(s string) string { return quote.Trunc(s) }
