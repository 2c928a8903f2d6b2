package driver

import (
	"bytes"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// Queue message bodies travel as XML text, and the service's 64 KiB limit
// applies to that text (its UTF-8 bytes). A body that is UTF-8 text without
// control characters other than tab and LF goes as is, readable by any
// other client; any other body goes as store.MessageBinaryPrefix followed
// by its base64, and so does a text body that happens to start with the
// prefix. Every backend measures a body by this encoding, so memstore
// refuses the same bodies the service does: a binary body may be at most
// store.MaxBinaryMessageSize bytes.

// messageIsText reports whether body travels as is: valid UTF-8, no
// control character but tab and LF (XML turns CR into LF), no U+FFFE or
// U+FFFF (not XML characters), and not starting with the binary prefix.
func messageIsText(body []byte) bool {
	if !utf8.Valid(body) || bytes.HasPrefix(body, []byte(store.MessageBinaryPrefix)) {
		return false
	}
	for _, c := range body {
		if c < 0x20 && c != '\t' && c != '\n' {
			return false
		}
	}
	return !bytes.ContainsRune(body, 0xFFFE) && !bytes.ContainsRune(body, 0xFFFF)
}

// MessageTextSize is the size in bytes of body's message text, the size
// the service checks against store.MaxMessageSize.
func MessageTextSize(body []byte) int {
	if messageIsText(body) {
		return len(body)
	}
	return len(store.MessageBinaryPrefix) + base64.StdEncoding.EncodedLen(len(body))
}

// EncodeMessageText returns the message text body travels as.
func EncodeMessageText(body []byte) string {
	if messageIsText(body) {
		return string(body)
	}
	return store.MessageBinaryPrefix + base64.StdEncoding.EncodeToString(body)
}

// DecodeMessageText returns the body a message text stands for: the
// decoded bytes of a base64 text with store.MessageBinaryPrefix, or the
// text itself (a text written by another client).
func DecodeMessageText(text string) []byte {
	if rest, ok := strings.CutPrefix(text, store.MessageBinaryPrefix); ok {
		if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return b
		}
	}
	return []byte(text)
}

// ValidateMessageBody checks a message body against the 64 KiB limit on
// its message text (see MessageTextSize: a body that is not plain text
// travels as base64, so it may be at most store.MaxBinaryMessageSize
// bytes). Azure answers an oversized Put Message with RequestBodyTooLarge
// (413, MaxLimit 65536), not the MessageTooLarge its error table lists.
func ValidateMessageBody(body []byte) error {
	if n := MessageTextSize(body); n > store.MaxMessageSize {
		if n == len(body) {
			return refuse(store.CodeRequestBodyTooLarge, 413,
				"message of %d bytes is over the limit of %d bytes", len(body), store.MaxMessageSize)
		}
		return refuse(store.CodeRequestBodyTooLarge, 413,
			"binary message of %d bytes is %d bytes as base64 message text, over the limit of %d bytes (at most %d bytes of binary data)",
			len(body), n, store.MaxMessageSize, store.MaxBinaryMessageSize)
	}
	return nil
}

// ValidateMessageCount checks numofmessages for Get and Peek: 1 to 32.
// op names the request in the message ("Get", "Peek").
func ValidateMessageCount(op string, n int) error {
	if n < 1 || n > store.MaxMessagesPerGet {
		return refuse(store.CodeOutOfRangeQueryParameterValue, 400,
			"%s of %d messages is out of range: ask for 1 to %d", op, n, store.MaxMessagesPerGet)
	}
	return nil
}

// ValidateVisibility checks a visibility timeout or delay against [min, 7
// days] in whole seconds. what names it in the message.
func ValidateVisibility(what string, d, min time.Duration) error {
	if d < min || d > store.MaxVisibilityTimeout {
		return refuse(store.CodeOutOfRangeQueryParameterValue, 400,
			"%s %s is out of range: it must be %s to %s", what, d, min, store.MaxVisibilityTimeout)
	}
	return wholeSeconds(what, d)
}

// wholeSeconds refuses a duration the service cannot receive: the REST API
// carries visibility timeouts and time to live as whole seconds.
func wholeSeconds(what string, d time.Duration) error {
	if d%time.Second != 0 {
		return refuse(store.CodeInvalidQueryParameterValue, 400,
			"%s %s is not a whole number of seconds: the service counts it in seconds", what, d)
	}
	return nil
}

// ResolvePut checks a Put's options and resolves them to a visibility
// delay and a time to live (ttl < 0 means the message never expires).
func ResolvePut(opts *store.PutOptions) (delay, ttl time.Duration, err error) {
	ttl = store.DefaultMessageTTL
	if opts != nil {
		delay = opts.VisibilityDelay
		if opts.TTL != 0 {
			ttl = opts.TTL
		}
	}
	if err := ValidateVisibility("visibility delay", delay, 0); err != nil {
		return 0, 0, err
	}
	if ttl == store.NeverExpires {
		return delay, -1, nil
	}
	if ttl < 0 {
		return 0, 0, refuse(store.CodeOutOfRangeQueryParameterValue, 400,
			"time to live %s is out of range: it must be positive, or NeverExpires", ttl)
	}
	if err := wholeSeconds("time to live", ttl); err != nil {
		return 0, 0, err
	}
	if delay >= ttl {
		return 0, 0, refuse(store.CodeOutOfRangeQueryParameterValue, 400,
			"visibility delay %s is not shorter than the time to live %s: the message would expire before it is visible", delay, ttl)
	}
	return delay, ttl, nil
}
