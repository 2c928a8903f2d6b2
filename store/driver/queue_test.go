package driver

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

func TestMessageTextRoundTripAndSize(t *testing.T) {
	bodies := []struct {
		body   []byte
		asText bool
	}{
		{[]byte{}, true},
		{[]byte("plain text"), true},
		{[]byte("tab\tand\nLF, é 😀 <xml> & 'quotes'"), true},
		{[]byte("CR\r"), false},
		{[]byte{0, 1, 2}, false},
		{[]byte{0xff, 0xfe}, false}, // not UTF-8
		{[]byte("\uFFFE"), false},
		{[]byte(store.MessageBinaryPrefix + "AAAA"), false}, // text that looks encoded
		{[]byte(store.MessageBinaryPrefix + "not base64!"), false},
	}
	for _, c := range bodies {
		text := EncodeMessageText(c.body)
		if got := DecodeMessageText(text); !bytes.Equal(got, c.body) {
			t.Errorf("body %q: text %q decodes to %q", c.body, text, got)
		}
		if n := MessageTextSize(c.body); n != len(text) {
			t.Errorf("body %q: MessageTextSize = %d, but the text is %d bytes", c.body, n, len(text))
		}
		if isText := text == string(c.body); isText != c.asText {
			t.Errorf("body %q travels as %q: as is = %v, want %v", c.body, text, isText, c.asText)
		}
	}
	// A text another client wrote decodes to itself.
	if got := DecodeMessageText("hello"); string(got) != "hello" {
		t.Errorf("DecodeMessageText(hello) = %q", got)
	}
}

func TestValidateMessageBodyCountsTheMessageText(t *testing.T) {
	text := bytes.Repeat([]byte("m"), store.MaxMessageSize)
	binary := bytes.Repeat([]byte{0xff}, store.MaxBinaryMessageSize)
	if err := ValidateMessageBody(text); err != nil {
		t.Errorf("text body of %d bytes: %v", len(text), err)
	}
	if err := ValidateMessageBody(binary); err != nil {
		t.Errorf("binary body of %d bytes: %v", len(binary), err)
	}
	if n := MessageTextSize(binary); n > store.MaxMessageSize || n+4 <= store.MaxMessageSize {
		t.Errorf("MaxBinaryMessageSize %d encodes to %d bytes: not the largest that fits %d", len(binary), n, store.MaxMessageSize)
	}
	for _, c := range []struct {
		body []byte
		want []string
	}{
		{append(text, 'm'), []string{"65537", "65536"}},
		{append(binary, 0xff), []string{"49147", "65538", "65536", "49146"}},
		{bytes.Repeat([]byte{0}, store.MaxMessageSize), []string{"65536", "87390"}},
	} {
		err := ValidateMessageBody(c.body)
		var se *store.Error
		if !errors.As(err, &se) || se.Code != store.CodeRequestBodyTooLarge || se.Status != 413 || !errors.Is(err, store.ErrTooLarge) {
			t.Errorf("body of %d bytes: got %v, want RequestBodyTooLarge (413)", len(c.body), err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(se.Message, w) {
				t.Errorf("message %q does not name %s", se.Message, w)
			}
		}
	}
}

// TestQueueRequestRules: the bounds of a Get, a visibility and a Put's
// options, each refusal naming the value and the limit.
func TestQueueRequestRules(t *testing.T) {
	for _, n := range []int{0, 33} {
		err := ValidateMessageCount("Get", n)
		if store.Code(err) != store.CodeOutOfRangeQueryParameterValue || !strings.Contains(err.Error(), "1 to 32") {
			t.Errorf("Get of %d: %v", n, err)
		}
	}
	if err := ValidateVisibility("visibility timeout", 1500*time.Millisecond, time.Second); store.Code(err) != store.CodeInvalidQueryParameterValue {
		t.Errorf("1.5 s: %v, want InvalidQueryParameterValue", err)
	}
	if err := ValidateVisibility("visibility timeout", 0, time.Second); store.Code(err) != store.CodeOutOfRangeQueryParameterValue {
		t.Errorf("0 s for a Get: %v, want OutOfRangeQueryParameterValue", err)
	}
	if delay, ttl, err := ResolvePut(nil); err != nil || delay != 0 || ttl != store.DefaultMessageTTL {
		t.Errorf("ResolvePut(nil) = %v, %v, %v", delay, ttl, err)
	}
	if _, ttl, err := ResolvePut(&store.PutOptions{TTL: store.NeverExpires}); err != nil || ttl >= 0 {
		t.Errorf("NeverExpires: ttl %v, %v", ttl, err)
	}
	if _, _, err := ResolvePut(&store.PutOptions{VisibilityDelay: time.Minute, TTL: time.Minute}); store.Code(err) != store.CodeOutOfRangeQueryParameterValue {
		t.Errorf("a delay as long as the TTL: %v", err)
	}
}
