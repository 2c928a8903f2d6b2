package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"
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
		{[]byte(MessageBinaryPrefix + "AAAA"), false}, // text that looks encoded
		{[]byte(MessageBinaryPrefix + "not base64!"), false},
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
	text := bytes.Repeat([]byte("m"), MaxMessageSize)
	binary := bytes.Repeat([]byte{0xff}, MaxBinaryMessageSize)
	if err := ValidateMessageBody(text); err != nil {
		t.Errorf("text body of %d bytes: %v", len(text), err)
	}
	if err := ValidateMessageBody(binary); err != nil {
		t.Errorf("binary body of %d bytes: %v", len(binary), err)
	}
	if n := MessageTextSize(binary); n > MaxMessageSize || n+4 <= MaxMessageSize {
		t.Errorf("MaxBinaryMessageSize %d encodes to %d bytes: not the largest that fits %d", len(binary), n, MaxMessageSize)
	}
	for _, c := range []struct {
		body []byte
		want []string
	}{
		{append(text, 'm'), []string{"65537", "65536"}},
		{append(binary, 0xff), []string{"49147", "65538", "65536", "49146"}},
		{bytes.Repeat([]byte{0}, MaxMessageSize), []string{"65536", "87390"}},
	} {
		err := ValidateMessageBody(c.body)
		var se *Error
		if !errors.As(err, &se) || se.Code != CodeRequestBodyTooLarge || se.Status != 413 || !errors.Is(err, ErrTooLarge) {
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
