package store

// Queue message bodies travel as XML text, and the service's 64 KiB limit
// applies to that text (its UTF-8 bytes). A body that is UTF-8 text without
// control characters other than tab and LF goes as is, readable by any
// other client; any other body goes as MessageBinaryPrefix followed by its
// base64, and so does a text body that happens to start with the prefix.
// Every backend encodes and measures a body this way (store/driver's
// EncodeMessageText and MessageTextSize), so memstore refuses the same
// bodies the service does: a binary body may be at most
// MaxBinaryMessageSize bytes. Another client reading the queue finds such
// a body behind the prefix.
const (
	// MessageBinaryPrefix marks a base64-encoded message text.
	MessageBinaryPrefix = "tkb64:"
	// MaxBinaryMessageSize is the largest body that is not plain text:
	// its encoded text is at most MaxMessageSize bytes.
	MaxBinaryMessageSize = (MaxMessageSize - len(MessageBinaryPrefix)) / 4 * 3
)
