package store

import (
	"bytes"
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// Queue message bodies travel as XML text, and the service's 64 KiB limit
// applies to that text (its UTF-8 bytes). A body that is UTF-8 text without
// control characters other than tab and LF goes as is, readable by any
// other client; any other body goes as MessageBinaryPrefix followed by its
// base64, and so does a text body that happens to start with the prefix.
// Every backend measures a body by this encoding, so memstore refuses the
// same bodies the service does: a binary body may be at most
// MaxBinaryMessageSize bytes.
const (
	// MessageBinaryPrefix marks a base64-encoded message text.
	MessageBinaryPrefix = "tkb64:"
	// MaxBinaryMessageSize is the largest body that is not plain text:
	// its encoded text is at most MaxMessageSize bytes.
	MaxBinaryMessageSize = (MaxMessageSize - len(MessageBinaryPrefix)) / 4 * 3
)

// messageIsText reports whether body travels as is: valid UTF-8, no
// control character but tab and LF (XML turns CR into LF), no U+FFFE or
// U+FFFF (not XML characters), and not starting with the binary prefix.
func messageIsText(body []byte) bool {
	if !utf8.Valid(body) || bytes.HasPrefix(body, []byte(MessageBinaryPrefix)) {
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
// the service checks against MaxMessageSize.
func MessageTextSize(body []byte) int {
	if messageIsText(body) {
		return len(body)
	}
	return len(MessageBinaryPrefix) + base64.StdEncoding.EncodedLen(len(body))
}

// EncodeMessageText returns the message text body travels as.
func EncodeMessageText(body []byte) string {
	if messageIsText(body) {
		return string(body)
	}
	return MessageBinaryPrefix + base64.StdEncoding.EncodeToString(body)
}

// DecodeMessageText returns the body a message text stands for: the
// decoded bytes of a base64 text with MessageBinaryPrefix, or the text
// itself (a text written by another client).
func DecodeMessageText(text string) []byte {
	if rest, ok := strings.CutPrefix(text, MessageBinaryPrefix); ok {
		if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return b
		}
	}
	return []byte(text)
}
