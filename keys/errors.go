package keys

import "errors"

// Sentinel errors. Every error this package returns wraps exactly one of
// them, so callers can branch with errors.Is; the message names the
// offending value and the limit.
var (
	// ErrInvalidKey reports a string that is not a legal PartitionKey or
	// RowKey: too long, not valid UTF-8, or containing a forbidden character.
	ErrInvalidKey = errors.New("keys: invalid key")
	// ErrMalformed reports input to a decoder (Unescape, Split, DecodeInt64,
	// ParseInvertedTicks, ...) that the matching encoder cannot have produced.
	ErrMalformed = errors.New("keys: malformed encoding")
	// ErrOutOfRange reports a value outside what an encoder can represent:
	// a number wider than its padding, a time outside .NET's DateTime range,
	// a bucket count outside its limits.
	ErrOutOfRange = errors.New("keys: value out of range")
	// ErrInvalidTableName reports a table name (or table name prefix) that
	// breaks the service's naming rules.
	ErrInvalidTableName = errors.New("keys: invalid table name")
)
