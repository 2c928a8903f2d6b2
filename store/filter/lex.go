package filter

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tokEOF tokKind = iota
	tokIdent
	tokLiteral
	tokLParen
	tokRParen
)

// token is one lexical token: its kind, its byte offset in the input, its
// source text, and for a literal its typed value.
type token struct {
	kind tokKind
	pos  int
	text string
	lit  literal
}

// lexer splits a $filter into tokens.
type lexer struct {
	src string
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// isIdentStart and isIdentPart follow the property name rule of the
// service (a C# identifier: a letter or '_', then letters, digits, '_').
func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// next returns the next token or an InvalidInput error naming it.
func (lx *lexer) next() (token, error) {
	for lx.pos < len(lx.src) && isSpace(lx.src[lx.pos]) {
		lx.pos++
	}
	start := lx.pos
	if start >= len(lx.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	c := lx.src[start]
	switch {
	case c == '(':
		lx.pos++
		return token{kind: tokLParen, pos: start, text: "("}, nil
	case c == ')':
		lx.pos++
		return token{kind: tokRParen, pos: start, text: ")"}, nil
	case c == '\'':
		return lx.stringLit()
	case c == '"':
		return token{}, invalidAt(start, lx.snippet(start), "double-quoted strings are not supported: write a string as 'text' with '' for a quote")
	case c == '-' || (c >= '0' && c <= '9'):
		if c == '-' && (start+1 >= len(lx.src) || lx.src[start+1] < '0' || lx.src[start+1] > '9') {
			return token{}, invalidAt(start, lx.snippet(start), "arithmetic (negation) is not supported: a comparison is property op literal")
		}
		return lx.number()
	}
	r, size := utf8.DecodeRuneInString(lx.src[start:])
	if r == utf8.RuneError && size <= 1 {
		return token{}, invalidAt(start, lx.snippet(start), "the filter is not valid UTF-8")
	}
	if !isIdentStart(r) {
		switch c {
		case '+', '*', '/', '%':
			return token{}, invalidAt(start, string(c), "arithmetic operator %q is not supported", string(c))
		case '=', '<', '>', '!', '&', '|':
			return token{}, invalidAt(start, lx.snippet(start), "symbolic operators are not supported: use eq ne gt ge lt le, and, or, not")
		}
		return token{}, invalidAt(start, string(r), "unexpected character %q", r)
	}
	lx.pos += size
	for lx.pos < len(lx.src) {
		r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
		if !isIdentPart(r) {
			break
		}
		lx.pos += size
	}
	word := lx.src[start:lx.pos]
	if lx.pos < len(lx.src) && lx.src[lx.pos] == '\'' {
		return lx.typedLit(start, word)
	}
	switch word {
	case "datetime", "guid", "X", "binary":
		j := lx.pos
		for j < len(lx.src) && isSpace(lx.src[j]) {
			j++
		}
		if j > lx.pos && j < len(lx.src) && lx.src[j] == '\'' {
			return token{}, invalidAt(start, lx.src[start:j+1], "no blank is allowed between %s and its quoted value", word)
		}
	case "true", "false":
		l := literal{typ: store.EdmBoolean}
		if word == "true" {
			l.i = 1
		}
		return token{kind: tokLiteral, pos: start, text: word, lit: l}, nil
	}
	return token{kind: tokIdent, pos: start, text: word}, nil
}

// snippet returns a short piece of the input from pos, for messages.
func (lx *lexer) snippet(pos int) string {
	end := pos
	for end < len(lx.src) && end-pos < 24 && !isSpace(lx.src[end]) {
		end++
	}
	for end < len(lx.src) && !utf8.RuneStart(lx.src[end]) {
		end++
	}
	if end == pos {
		return "end of filter"
	}
	return lx.src[pos:end]
}

// quoted scans a '...' body starting at the quote at lx.pos, undoubling
// ”. It returns the body and leaves lx.pos after the closing quote.
func (lx *lexer) quoted(tokStart int) (string, error) {
	open := lx.pos
	var b strings.Builder
	i := open + 1
	from := i
	for {
		j := strings.IndexByte(lx.src[i:], '\'')
		if j < 0 {
			return "", invalidAt(tokStart, lx.snippet(tokStart), "unterminated quoted literal: no closing quote")
		}
		i += j
		if i+1 < len(lx.src) && lx.src[i+1] == '\'' {
			b.WriteString(lx.src[from : i+1])
			i += 2
			from = i
			continue
		}
		b.WriteString(lx.src[from:i])
		lx.pos = i + 1
		return b.String(), nil
	}
}

func (lx *lexer) stringLit() (token, error) {
	start := lx.pos
	s, err := lx.quoted(start)
	if err != nil {
		return token{}, err
	}
	if !utf8.ValidString(s) {
		return token{}, invalidAt(start, lx.src[start:lx.pos], "the string literal is not valid UTF-8")
	}
	return token{kind: tokLiteral, pos: start, text: lx.src[start:lx.pos], lit: literal{typ: store.EdmString, s: s}}, nil
}

// typedLit reads prefix'...' literals: datetime, guid, X and binary. The
// prefixes are case-sensitive, as the service requires.
func (lx *lexer) typedLit(start int, prefix string) (token, error) {
	body, err := lx.quoted(start)
	if err != nil {
		return token{}, err
	}
	text := lx.src[start:lx.pos]
	tok := token{kind: tokLiteral, pos: start, text: text}
	switch prefix {
	case "datetime":
		t, ok := parseDateTime(body)
		if !ok {
			return token{}, invalidAt(start, text, "malformed datetime literal: want datetime'YYYY-MM-DDThh:mm:ss[.fffffff]Z' (at most 7 fraction digits)")
		}
		tok.lit = literal{typ: store.EdmDateTime, t: t}
	case "guid":
		g, err := store.ParseGUID(body)
		if err != nil {
			return token{}, invalidAt(start, text, "malformed guid literal: want guid'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'")
		}
		tok.lit = literal{typ: store.EdmGuid, g: g}
	case "X", "binary":
		if len(body)%2 != 0 {
			return token{}, invalidAt(start, text, "malformed binary literal: an odd number of hex digits")
		}
		b, err := hex.DecodeString(body)
		if err != nil {
			return token{}, invalidAt(start, text, "malformed binary literal: only hex digits are allowed")
		}
		if b == nil {
			b = []byte{}
		}
		tok.lit = literal{typ: store.EdmBinary, b: b}
	default:
		return token{}, invalidAt(start, text, "unknown literal prefix %q: the typed literals are datetime'...', guid'...', X'...' and binary'...'", prefix)
	}
	return tok, nil
}

// number reads an Int32 (42, -7), an Int64 (42L) or a Double (1.5, 1e10,
// 2.0, optionally with a D suffix).
func (lx *lexer) number() (token, error) {
	start := lx.pos
	i := start
	if lx.src[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(lx.src) && lx.src[i] >= '0' && lx.src[i] <= '9' {
			i++
			n++
		}
		return n
	}
	digits()
	isDouble := false
	if i < len(lx.src) && lx.src[i] == '.' {
		i++
		isDouble = true
		if digits() == 0 {
			lx.pos = i
			return token{}, invalidAt(start, lx.src[start:i], "malformed number: digits must follow the decimal point")
		}
	}
	if i < len(lx.src) && (lx.src[i] == 'e' || lx.src[i] == 'E') {
		i++
		isDouble = true
		if i < len(lx.src) && (lx.src[i] == '+' || lx.src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return token{}, invalidAt(start, lx.src[start:i], "malformed number: digits must follow the exponent")
		}
	}
	numEnd := i
	suffix := byte(0)
	if i < len(lx.src) {
		switch lx.src[i] {
		case 'L', 'l', 'D', 'd', 'M', 'm', 'F', 'f':
			suffix = lx.src[i]
			i++
		}
	}
	if i < len(lx.src) {
		if r, _ := utf8.DecodeRuneInString(lx.src[i:]); isIdentPart(r) || r == '.' || r == '\'' {
			end := i + 1
			for end < len(lx.src) && !isSpace(lx.src[end]) && lx.src[end] != ')' {
				end++
			}
			return token{}, invalidAt(start, lx.src[start:end], "malformed number")
		}
	}
	lx.pos = i
	text := lx.src[start:i]
	num := lx.src[start:numEnd]
	switch suffix {
	case 'M', 'm', 'F', 'f':
		return token{}, invalidAt(start, text, "decimal (M) and single (f) literals are not supported: the service stores Int32, Int64 and Double")
	case 'L', 'l':
		if isDouble {
			return token{}, invalidAt(start, text, "malformed number: an Int64 literal (L suffix) has no decimal point or exponent")
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return token{}, invalidAt(start, text, "integer literal does not fit Int64 (%d to %d)", int64(math.MinInt64), int64(math.MaxInt64))
		}
		return token{kind: tokLiteral, pos: start, text: text, lit: literal{typ: store.EdmInt64, i: v}}, nil
	case 'D', 'd':
		isDouble = true
	}
	if isDouble {
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsInf(v, 0) {
			return token{}, invalidAt(start, text, "double literal is out of range")
		}
		return token{kind: tokLiteral, pos: start, text: text, lit: literal{typ: store.EdmDouble, f: v}}, nil
	}
	v, err := strconv.ParseInt(num, 10, 32)
	if err != nil {
		return token{}, invalidAt(start, text, "integer literal does not fit Int32 (%d to %d): write %sL for an Int64", math.MinInt32, math.MaxInt32, num)
	}
	return token{kind: tokLiteral, pos: start, text: text, lit: literal{typ: store.EdmInt32, i: v}}, nil
}
