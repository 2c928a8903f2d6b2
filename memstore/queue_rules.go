package memstore

import (
	"fmt"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Codes the Queue and Blob services answer for a bad query parameter. They
// come from the common REST error codes of Azure Storage; store/errors.go
// does not define them (yet), so they live here.
const (
	// codeOutOfRangeQueryParameter is what Azure answers for numofmessages
	// or visibilitytimeout outside their range (Azurite issue #2083 shows
	// the service's code for a visibility timeout of 0 on Get Messages).
	codeOutOfRangeQueryParameter = "OutOfRangeQueryParameterValue"
	// codeInvalidQueryParameter is what Azure answers for a malformed pop
	// receipt ("invalid receipt format") or listing marker.
	codeInvalidQueryParameter = "InvalidQueryParameterValue"
)

// Limits of the Queue and Blob services that store does not define.
const (
	// defaultListBlobs is the most blobs one List returns, and the page
	// size when MaxResults is 0.
	defaultListBlobs = 5000
	// minGetVisibility is the shortest visibility timeout Get Messages
	// accepts: "larger than or equal to 1 second".
	minGetVisibility = time.Second
)

// validateResourceName checks a queue or container name: 3 to 63
// characters, lower-case letters, digits and dashes, starting and ending
// with a letter or digit, with no two dashes in a row. A bad character is
// InvalidResourceName (400); a bad length is OutOfRangeInput (400), the
// code Azure sends for a container name of the wrong length.
func validateResourceName(kind, name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 {
				return store.Errorf(store.CodeInvalidResourceName, 400,
					"%s name %q starts or ends with a dash: the first and last characters must be a letter or digit", kind, name)
			}
			if name[i-1] == '-' {
				return store.Errorf(store.CodeInvalidResourceName, 400,
					"%s name %q has two dashes in a row at offset %d: consecutive dashes are not allowed", kind, name, i-1)
			}
		default:
			return store.Errorf(store.CodeInvalidResourceName, 400,
				"%s name %q: character %q at offset %d is not allowed (lower-case letters, digits and single dashes)", kind, clip(name), c, i)
		}
	}
	if len(name) < 3 || len(name) > 63 {
		return store.Errorf(store.CodeOutOfRangeInput, 400,
			"%s name %q is %d characters long: the length must be 3 to 63", kind, clip(name), len(name))
	}
	return nil
}

// clip shortens a long value for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + fmt.Sprintf("...(%d bytes)", len(s))
}

// wholeSeconds refuses a duration the service cannot receive: the REST API
// carries visibility timeouts and time to live as whole seconds.
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

// checkBody checks a message body against the 64 KiB limit. Azure answers
// an oversized Put Message with RequestBodyTooLarge (413, MaxLimit 65536),
// not the MessageTooLarge its error table lists.
func checkBody(body []byte) error {
	if len(body) > store.MaxMessageSize {
		return store.Errorf(store.CodeRequestBodyTooLarge, 413,
			"message of %d bytes is over the limit of %d bytes", len(body), store.MaxMessageSize)
	}
	return nil
}

// putTimes resolves a Put's options to a visibility delay and a time to
// live (ttl < 0 means the message never expires).
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
