package azstore

import (
	"time"

	"github.com/tablekit/tablekit/store"
)

// The Queue and Blob rules below mirror memstore's (memstore/queue_rules.go)
// so both backends refuse the same input with the same code. They belong in
// store's rules; until they move there they are kept identical by the
// parity test.

const (
	codeOutOfRangeQueryParameter = "OutOfRangeQueryParameterValue"
	codeInvalidQueryParameter    = "InvalidQueryParameterValue"
)

// validateResourceName checks a queue or container name: 3 to 63
// lower-case letters, digits and single dashes, starting and ending with a
// letter or digit.
func validateResourceName(kind, name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 {
				return store.Errorf(store.CodeInvalidResourceName, 400,
					"%s name %s starts or ends with a dash: the first and last characters must be a letter or digit", kind, quote(name))
			}
			if name[i-1] == '-' {
				return store.Errorf(store.CodeInvalidResourceName, 400,
					"%s name %s has two dashes in a row at offset %d: consecutive dashes are not allowed", kind, quote(name), i-1)
			}
		default:
			return store.Errorf(store.CodeInvalidResourceName, 400,
				"%s name %s: character %q at offset %d is not allowed (lower-case letters, digits and single dashes)", kind, quote(name), c, i)
		}
	}
	if len(name) < 3 || len(name) > 63 {
		return store.Errorf(store.CodeOutOfRangeInput, 400,
			"%s name %s is %d characters long: the length must be 3 to 63", kind, quote(name), len(name))
	}
	return nil
}

func wholeSeconds(what string, d time.Duration) error {
	if d%time.Second != 0 {
		return store.Errorf(codeInvalidQueryParameter, 400,
			"%s %s is not a whole number of seconds: the service counts it in seconds", what, d)
	}
	return nil
}

// checkCount checks numofmessages for Get and Peek: 1 to 32.
func checkCount(op string, n int) error {
	if n < 1 || n > store.MaxMessagesPerGet {
		return store.Errorf(codeOutOfRangeQueryParameter, 400,
			"%s of %d messages is out of range: ask for 1 to %d", op, n, store.MaxMessagesPerGet)
	}
	return nil
}

// checkVisibility checks a visibility timeout or delay against [min, 7 days].
func checkVisibility(what string, d, min time.Duration) error {
	if d < min || d > store.MaxVisibilityTimeout {
		return store.Errorf(codeOutOfRangeQueryParameter, 400,
			"%s %s is out of range: it must be %s to %s", what, d, min, store.MaxVisibilityTimeout)
	}
	return wholeSeconds(what, d)
}

// putTimes resolves a Put's options to a visibility delay and a time to
// live (ttl < 0: never expires).
func putTimes(opts *store.PutOptions) (delay, ttl time.Duration, err error) {
	ttl = store.DefaultMessageTTL
	if opts != nil {
		delay = opts.VisibilityDelay
		if opts.TTL != 0 {
			ttl = opts.TTL
		}
	}
	if err := checkVisibility("visibility delay", delay, 0); err != nil {
		return 0, 0, err
	}
	if ttl == store.NeverExpires {
		return delay, -1, nil
	}
	if ttl < 0 {
		return 0, 0, store.Errorf(codeOutOfRangeQueryParameter, 400,
			"time to live %s is out of range: it must be positive, or store.NeverExpires", ttl)
	}
	if err := wholeSeconds("time to live", ttl); err != nil {
		return 0, 0, err
	}
	if delay >= ttl {
		return 0, 0, store.Errorf(codeOutOfRangeQueryParameter, 400,
			"visibility delay %s is not shorter than the time to live %s: the message would expire before it is visible", delay, ttl)
	}
	return delay, ttl, nil
}
