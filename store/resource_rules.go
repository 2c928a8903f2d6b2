package store

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Rules of the Queue and Blob services, shared by every backend like the
// Table rules in rules.go.

// Codes the Queue and Blob services answer for a bad query parameter, from
// the common REST error codes of Azure Storage.
const (
	// CodeOutOfRangeQueryParameterValue is the answer to numofmessages,
	// visibilitytimeout, messagettl or maxresults outside their range
	// (Azurite issue #2083 shows the service's code for a visibility
	// timeout of 0 on Get Messages).
	CodeOutOfRangeQueryParameterValue = "OutOfRangeQueryParameterValue"
	// CodeInvalidQueryParameterValue is the answer to a malformed pop
	// receipt, listing marker, or a duration that is not whole seconds.
	CodeInvalidQueryParameterValue = "InvalidQueryParameterValue"
)

// Queue and blob limits beyond those in queue.go.
const (
	// MaxBlobListResults is the most blobs one List returns, and the page
	// size when MaxResults is 0.
	MaxBlobListResults = 5000
	// MinGetVisibility is the shortest visibility timeout Get Messages
	// accepts: "larger than or equal to 1 second".
	MinGetVisibility = time.Second
	// MaxBlobNameUnits is the longest blob name in UTF-16 code units, and
	// MaxBlobPathSegments the most '/'-separated segments it may have
	// (Naming and Referencing Containers, Blobs, and Metadata).
	MaxBlobNameUnits    = 1024
	MaxBlobPathSegments = 254
)

// ValidateQueueName checks a queue name: 3 to 63 characters, lower-case
// letters, digits and single dashes, starting and ending with a letter or
// digit.
func ValidateQueueName(name string) error { return validateResourceName("queue", name) }

// ValidateContainerName checks a blob container name by the same rules as
// a queue name.
func ValidateContainerName(name string) error { return validateResourceName("container", name) }

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
				return refuse(CodeInvalidResourceName, 400,
					"%s name %q starts or ends with a dash: the first and last characters must be a letter or digit", kind, name)
			}
			if name[i-1] == '-' {
				return refuse(CodeInvalidResourceName, 400,
					"%s name %q has two dashes in a row at offset %d: consecutive dashes are not allowed", kind, name, i-1)
			}
		default:
			return refuse(CodeInvalidResourceName, 400,
				"%s name %s: character %q at offset %d is not allowed (lower-case letters, digits and single dashes)", kind, quoteTrunc(name), c, i)
		}
	}
	if len(name) < 3 || len(name) > 63 {
		return refuse(CodeOutOfRangeInput, 400,
			"%s name %s is %d characters long: the length must be 3 to 63", kind, quoteTrunc(name), len(name))
	}
	return nil
}

// wholeSeconds refuses a duration the service cannot receive: the REST API
// carries visibility timeouts and time to live as whole seconds.
func wholeSeconds(what string, d time.Duration) error {
	if d%time.Second != 0 {
		return refuse(CodeInvalidQueryParameterValue, 400,
			"%s %s is not a whole number of seconds: the service counts it in seconds", what, d)
	}
	return nil
}

// ValidateMessageCount checks numofmessages for Get and Peek: 1 to 32.
func ValidateMessageCount(op string, n int) error {
	if n < 1 || n > MaxMessagesPerGet {
		return refuse(CodeOutOfRangeQueryParameterValue, 400,
			"%s of %d messages is out of range: ask for 1 to %d", op, n, MaxMessagesPerGet)
	}
	return nil
}

// ValidateVisibility checks a visibility timeout or delay against [min, 7 days]
// in whole seconds.
func ValidateVisibility(what string, d, min time.Duration) error {
	if d < min || d > MaxVisibilityTimeout {
		return refuse(CodeOutOfRangeQueryParameterValue, 400,
			"%s %s is out of range: it must be %s to %s", what, d, min, MaxVisibilityTimeout)
	}
	return wholeSeconds(what, d)
}

// ValidateMessageBody checks a message body against the 64 KiB limit on
// its message text (see MessageTextSize: a body that is not plain text
// travels as base64, so it may be at most MaxBinaryMessageSize bytes).
// Azure answers an oversized Put Message with RequestBodyTooLarge (413,
// MaxLimit 65536), not the MessageTooLarge its error table lists.
func ValidateMessageBody(body []byte) error {
	if n := MessageTextSize(body); n > MaxMessageSize {
		if n == len(body) {
			return refuse(CodeRequestBodyTooLarge, 413,
				"message of %d bytes is over the limit of %d bytes", len(body), MaxMessageSize)
		}
		return refuse(CodeRequestBodyTooLarge, 413,
			"binary message of %d bytes is %d bytes as base64 message text, over the limit of %d bytes (at most %d bytes of binary data)",
			len(body), n, MaxMessageSize, MaxBinaryMessageSize)
	}
	return nil
}

// ResolvePut checks a Put's options and resolves them to a visibility delay and a time to
// live (ttl < 0 means the message never expires).
func ResolvePut(opts *PutOptions) (delay, ttl time.Duration, err error) {
	ttl = DefaultMessageTTL
	if opts != nil {
		delay = opts.VisibilityDelay
		if opts.TTL != 0 {
			ttl = opts.TTL
		}
	}
	if err := ValidateVisibility("visibility delay", delay, 0); err != nil {
		return 0, 0, err
	}
	if ttl == NeverExpires {
		return delay, -1, nil
	}
	if ttl < 0 {
		return 0, 0, refuse(CodeOutOfRangeQueryParameterValue, 400,
			"time to live %s is out of range: it must be positive, or NeverExpires", ttl)
	}
	if err := wholeSeconds("time to live", ttl); err != nil {
		return 0, 0, err
	}
	if delay >= ttl {
		return 0, 0, refuse(CodeOutOfRangeQueryParameterValue, 400,
			"visibility delay %s is not shorter than the time to live %s: the message would expire before it is visible", delay, ttl)
	}
	return delay, ttl, nil
}

// ResolveBlobListSize resolves BlobListOptions.MaxResults to a page size:
// 0 means the service's maximum, more than MaxBlobListResults is capped as
// the service caps it, and a negative value is refused as the service
// refuses maxresults <= 0.
func ResolveBlobListSize(max int) (int, error) {
	switch {
	case max < 0:
		return 0, refuse(CodeOutOfRangeQueryParameterValue, 400,
			"MaxResults %d is out of range: use 1 to %d, or 0 for the maximum", max, MaxBlobListResults)
	case max == 0 || max > MaxBlobListResults:
		return MaxBlobListResults, nil
	}
	return max, nil
}

// ValidateBlobName checks a blob name: valid UTF-8, 1 to 1,024 characters
// (UTF-16 code units, as the service counts) and at most 254 path segments.
func ValidateBlobName(name string) error {
	if !utf8.ValidString(name) {
		return refuse(CodeInvalidResourceName, 400, "blob name %s is not valid UTF-8", quoteTrunc(name))
	}
	if n := UTF16Len(name); n < 1 || n > MaxBlobNameUnits {
		return refuse(CodeOutOfRangeInput, 400,
			"blob name %s is %d characters long: the length must be 1 to %d", quoteTrunc(name), n, MaxBlobNameUnits)
	}
	if n := strings.Count(name, "/") + 1; n > MaxBlobPathSegments {
		return refuse(CodeOutOfRangeInput, 400,
			"blob name %s has %d path segments: the limit is %d", quoteTrunc(name), n, MaxBlobPathSegments)
	}
	// "Avoid blob names that end with a dot, a forward slash, or a
	// sequence or combination of the two" is advice; control characters are
	// refused (Naming and Referencing Containers, Blobs, and Metadata).
	// Azurite stores such a name, and then every listing of the container
	// fails with 500.
	for i, r := range name {
		if r <= 0x1F || (r >= 0x7F && r <= 0x9F) {
			return refuse(CodeInvalidResourceName, 400,
				"blob name %s contains control character U+%04X at offset %d: control characters are not allowed in blob names", quoteTrunc(name), r, i)
		}
	}
	return nil
}
