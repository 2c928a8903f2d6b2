package filter

import (
	"strconv"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// maxDepth bounds the nesting of parentheses and not, so that a hostile
// filter cannot exhaust the stack.
const maxDepth = 64

// parser is a recursive-descent parser over the lexer's tokens, with one
// token of lookahead.
type parser struct {
	lx    lexer
	tok   token
	count int
	depth int
}

// parse parses s into a checked tree and counts its comparisons.
func parse(s string) (*node, int, error) {
	p := &parser{lx: lexer{src: s}}
	if err := p.advance(); err != nil {
		return nil, 0, err
	}
	if p.tok.kind == tokEOF {
		return &node{kind: kindAll}, 0, nil
	}
	n, err := p.orExpr()
	if err != nil {
		return nil, 0, err
	}
	if p.tok.kind != tokEOF {
		return nil, 0, p.unexpected("expected and, or or the end of the filter")
	}
	return n, p.count, nil
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// tokText names the current token for an error message.
func (p *parser) tokText() string {
	if p.tok.kind == tokEOF {
		return "end of filter"
	}
	return p.tok.text
}

func (p *parser) unexpected(want string) error {
	if p.tok.kind == tokIdent && !isKeyword(p.tok.text) && isKeyword(lower(p.tok.text)) {
		want += " (keywords and operators are lower case: " + lower(p.tok.text) + ")"
	}
	return invalidAt(p.tok.pos, p.tokText(), "unexpected %s: %s", describe(p.tok), want)
}

// describe names a token's kind for messages.
func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "end of filter"
	case tokIdent:
		if isKeyword(t.text) {
			return "keyword " + t.text
		}
		return "name " + t.text
	case tokLiteral:
		return string(t.lit.typ) + " literal " + t.text
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	}
	return "token"
}

func (p *parser) isWord(w string) bool { return p.tok.kind == tokIdent && p.tok.text == w }

// orExpr := andExpr { "or" andExpr }
func (p *parser) orExpr() (*node, error) {
	first, err := p.andExpr()
	if err != nil {
		return nil, err
	}
	if !p.isWord("or") {
		return first, nil
	}
	n := &node{kind: kindOr}
	n.kids = appendFlat(n.kids, kindOr, first)
	for p.isWord("or") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		next, err := p.andExpr()
		if err != nil {
			return nil, err
		}
		n.kids = appendFlat(n.kids, kindOr, next)
	}
	return n, nil
}

// andExpr := unary { "and" unary }
func (p *parser) andExpr() (*node, error) {
	first, err := p.unary()
	if err != nil {
		return nil, err
	}
	if !p.isWord("and") {
		return first, nil
	}
	n := &node{kind: kindAnd}
	n.kids = appendFlat(n.kids, kindAnd, first)
	for p.isWord("and") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		next, err := p.unary()
		if err != nil {
			return nil, err
		}
		n.kids = appendFlat(n.kids, kindAnd, next)
	}
	return n, nil
}

// appendFlat adds n to an and (or or) node's children, lifting the
// children of a nested node of the same kind: a and (b and c) is the
// n-ary a and b and c, which means the same.
func appendFlat(kids []*node, k kind, n *node) []*node {
	if n.kind == k {
		return append(kids, n.kids...)
	}
	return append(kids, n)
}

// enter and leave track nesting depth.
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return invalidAt(p.tok.pos, p.tokText(), "the filter nests more than %d levels of parentheses and not", maxDepth)
	}
	return nil
}

// unary := "not" "(" orExpr ")" | "not" unary-starting-with-not | primary
//
// The operand of not must be parenthesized (or be another not): in OData
// not binds tighter than eq, so "not A eq 1" would negate the property A,
// which the service cannot evaluate.
func (p *parser) unary() (*node, error) {
	if !p.isWord("not") {
		return p.primary()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	notTok := p.tok
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind != tokLParen && !p.isWord("not") {
		return nil, invalidAt(notTok.pos, "not "+p.tokText(),
			"not must be followed by a parenthesized expression, as in not (%s ...)", p.tokText())
	}
	kid, err := p.unary()
	if err != nil {
		return nil, err
	}
	return &node{kind: kindNot, kids: []*node{kid}}, nil
}

// primary := "(" orExpr ")" | comparison
func (p *parser) primary() (*node, error) {
	if p.tok.kind == tokLParen {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == tokRParen {
			return nil, p.unexpected("empty parentheses")
		}
		n, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tokRParen {
			return nil, p.unexpected("expected and, or or ')'")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		return n, nil
	}
	return p.comparison()
}

// comparison := property op literal
func (p *parser) comparison() (*node, error) {
	start := p.tok
	switch {
	case start.kind == tokLiteral:
		return nil, invalidAt(start.pos, start.text,
			"a comparison starts with a property name: write property op literal (the service compares a property with a constant)")
	case start.kind != tokIdent:
		return nil, p.unexpected("expected a comparison (property op literal), not or '('")
	case isKeyword(start.text):
		return nil, p.unexpected("expected a property name")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokLParen {
		return nil, invalidAt(start.pos, start.text+"(",
			"function calls such as %s(...) are not supported by the Table service: use comparisons (a prefix is PartitionKey ge 'p' and PartitionKey lt 'q')", start.text)
	}
	if p.tok.kind != tokIdent {
		return nil, p.unexpected("expected a comparison operator (eq ne gt ge lt le) after " + start.text)
	}
	op, ok := opOf(p.tok.text)
	if !ok {
		if isArith(p.tok.text) {
			return nil, invalidAt(p.tok.pos, p.tok.text, "arithmetic operator %s is not supported", p.tok.text)
		}
		return nil, p.unexpected("expected a comparison operator (eq ne gt ge lt le) after " + start.text)
	}
	opTok := p.tok
	if err := p.advance(); err != nil {
		return nil, err
	}
	switch {
	case p.tok.kind == tokIdent && p.tok.text == "null":
		return nil, invalidAt(p.tok.pos, "null", "null is not supported in a $filter: the service answers InvalidInput")
	case p.tok.kind == tokIdent && !isKeyword(p.tok.text):
		return nil, invalidAt(p.tok.pos, p.tok.text,
			"comparing property %s with property %s is not supported: one side must be a literal", start.text, p.tok.text)
	case p.tok.kind != tokLiteral:
		return nil, p.unexpected("expected a literal after " + start.text + " " + opTok.text)
	}
	p.count++
	if p.count > store.MaxFilterComparisons {
		return nil, invalidAt(start.pos, start.text,
			"more than %d comparisons: the service allows at most %d discrete comparisons in a $filter", store.MaxFilterComparisons, store.MaxFilterComparisons)
	}
	n := &node{kind: kindCmp, op: op, prop: start.text, lit: p.tok.lit}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokIdent && isArith(p.tok.text) {
		return nil, invalidAt(p.tok.pos, p.tok.text, "arithmetic operator %s is not supported", p.tok.text)
	}
	return n, nil
}

func opOf(w string) (Op, bool) {
	switch w {
	case "eq":
		return Eq, true
	case "ne":
		return Ne, true
	case "gt":
		return Gt, true
	case "ge":
		return Ge, true
	case "lt":
		return Lt, true
	case "le":
		return Le, true
	}
	return 0, false
}

func isArith(w string) bool {
	switch w {
	case "add", "sub", "mul", "div", "mod":
		return true
	}
	return false
}

// isKeyword reports the words that cannot be property names in a filter.
func isKeyword(w string) bool {
	if _, ok := opOf(w); ok {
		return true
	}
	switch w {
	case "and", "or", "not", "true", "false", "null":
		return true
	}
	return isArith(w)
}

// lower lower-cases ASCII letters.
func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }

// quoteTok quotes a token for a message, cutting long ones.
func quoteTok(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }
