package search

import (
	"fmt"
	"strings"

	"github.com/sessctl/sessctl/search/internal/textindex"
)

// This file checks and parses a query as FTS5 does (its expression
// grammar, its tokens and its error messages), for the matcher of
// match.go: the own engine and the search without an index use no
// SQLite.

// mTok is a token of FTS5's query language.
type mTok uint8

const (
	mtEOF mTok = iota
	mtString
	mtLP
	mtRP
	mtLCP
	mtRCP
	mtColon
	mtComma
	mtPlus
	mtStar
	mtMinus
	mtCaret
	mtOr
	mtAnd
	mtNot
)

// mLexeme is a token and its text as written (quotes included).
type mLexeme struct {
	tok mTok
	raw string
}

// value is a string token's text: a bareword as written, a quoted
// string without its quotes and with "" as ".
func (l mLexeme) value() string {
	if strings.HasPrefix(l.raw, `"`) {
		return strings.ReplaceAll(l.raw[1:len(l.raw)-1], `""`, `"`)
	}
	return l.raw
}

// mParser is a recursive-descent parser of FTS5's grammar that stops at
// the first error, with FTS5's message for it.
type mParser struct {
	s    string
	look *mLexeme
	err  error
	// terms are the query's distinct terms (a prefix is another term
	// than the same word whole).
	terms []mTerm
}

type mTerm struct {
	text   string
	prefix bool
}

// ftsWhitespace is what FTS5 skips between tokens.
func ftsWhitespace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *mParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: "+format, append([]any{ErrQuery}, args...)...)
	}
}

// syntax is FTS5's error at a token it did not expect, quoted as C
// quotes it (as written).
func (p *mParser) syntax(l mLexeme) { p.fail(`fts5: syntax error near "%s"`, l.raw) }

// peek returns the next token (mtEOF after an error).
func (p *mParser) peek() mLexeme {
	if p.look != nil {
		return *p.look
	}
	l := p.lex()
	p.look = &l
	return l
}

func (p *mParser) next() mLexeme {
	l := p.peek()
	p.look = nil
	return l
}

func (p *mParser) lex() mLexeme {
	if p.err != nil {
		return mLexeme{tok: mtEOF}
	}
	s := p.s
	for s != "" && ftsWhitespace(s[0]) {
		s = s[1:]
	}
	if s == "" {
		p.s = s
		return mLexeme{tok: mtEOF}
	}
	singles := map[byte]mTok{'(': mtLP, ')': mtRP, '{': mtLCP, '}': mtRCP, ':': mtColon, ',': mtComma, '+': mtPlus, '*': mtStar, '-': mtMinus, '^': mtCaret}
	if t, ok := singles[s[0]]; ok {
		p.s = s[1:]
		return mLexeme{tok: t, raw: s[:1]}
	}
	if s[0] == '"' {
		for i := 1; i < len(s); i++ {
			if s[i] != '"' {
				continue
			}
			if i+1 < len(s) && s[i+1] == '"' {
				i++
				continue
			}
			p.s = s[i+1:]
			return mLexeme{tok: mtString, raw: s[:i+1]}
		}
		p.fail("unterminated string")
		return mLexeme{tok: mtEOF}
	}
	if !barewordChar(s[0]) {
		p.fail(`fts5: syntax error near "%s"`, s[:1])
		return mLexeme{tok: mtEOF}
	}
	i := 1
	for i < len(s) && barewordChar(s[i]) {
		i++
	}
	p.s = s[i:]
	l := mLexeme{tok: mtString, raw: s[:i]}
	switch l.raw {
	case "OR":
		l.tok = mtOr
	case "AND":
		l.tok = mtAnd
	case "NOT":
		l.tok = mtNot
	}
	return l
}

// parseMatch checks an FTS5 query and parses it for the matcher. An
// error matches ErrQuery and says what FTS5 would.
func parseMatch(query string) (*mQuery, error) {
	if i := strings.IndexByte(query, 0); i >= 0 {
		query = query[:i] // FTS5 reads the query as a C string
	}
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: the query is empty", ErrQuery)
	}
	if query[0] == '*' {
		// FTS5's special queries (*reads, *id) are not searches.
		name, _, _ := strings.Cut(query[1:], " ")
		if strings.EqualFold(name, "reads") || strings.EqualFold(name, "id") {
			return nil, fmt.Errorf("%w: special query *%s is not a search", ErrQuery, name)
		}
		return nil, fmt.Errorf("%w: unknown special query: %s", ErrQuery, name)
	}
	p := &mParser{s: query}
	root := p.expr()
	if p.err == nil {
		if l := p.next(); l.tok != mtEOF {
			p.syntax(l)
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return &mQuery{root: root, terms: p.terms}, nil
}

// expr is OR of ANDs of NOTs, left to right.
func (p *mParser) expr() *mNode {
	e := p.and()
	for p.err == nil && p.peek().tok == mtOr {
		p.next()
		e = mJoin(opOr, e, p.and())
	}
	return e
}

func (p *mParser) and() *mNode {
	e := p.not()
	for p.err == nil && p.peek().tok == mtAnd {
		p.next()
		e = mJoin(opAnd, e, p.not())
	}
	return e
}

func (p *mParser) not() *mNode {
	e := p.primary()
	for p.err == nil && p.peek().tok == mtNot {
		p.next()
		e = mJoin(opNot, e, p.primary())
	}
	return e
}

// primary is (expr), colset:(expr), or adjacent near sets (implicitly
// ANDed).
func (p *mParser) primary() *mNode {
	l := p.peek()
	switch l.tok {
	case mtLP:
		p.next()
		e := p.expr()
		p.expect(mtRP)
		return e
	case mtString, mtMinus, mtLCP, mtCaret:
	default:
		p.syntax(p.next())
		return nil
	}
	e, paren := p.cnearset(true)
	if paren {
		return e
	}
	for p.err == nil {
		switch p.peek().tok {
		case mtString, mtMinus, mtLCP, mtCaret:
			k, _ := p.cnearset(false)
			e = mJoin(opAnd, e, k)
			continue
		}
		break
	}
	return e
}

func (p *mParser) expect(t mTok) {
	if p.err != nil {
		return
	}
	if l := p.next(); l.tok != t {
		p.syntax(l)
	}
}

// cnearset is [colset ':'] nearset; with first, the colset may apply to
// a parenthesized expression, and paren tells it did.
func (p *mParser) cnearset(first bool) (e *mNode, paren bool) {
	l := p.next()
	colset, none := false, false
	switch l.tok {
	case mtMinus:
		colset, none = true, true
		l = p.next()
		switch l.tok {
		case mtString:
			p.peek() // FTS5 checks the name once it sees the next token
			p.column(l)
		case mtLCP:
			p.colsetList()
		default:
			p.syntax(l)
			return nil, false
		}
		p.expect(mtColon)
	case mtLCP:
		colset = true
		p.colsetList()
		p.expect(mtColon)
	case mtString:
		if p.peek().tok == mtColon {
			colset = true
			p.column(l)
			p.next()
		}
	}
	if p.err != nil {
		return nil, false
	}
	if colset {
		if first && p.peek().tok == mtLP {
			p.next()
			e := p.expr()
			p.expect(mtRP)
			return mColset(e, none), true
		}
		l = p.next()
	}
	return mColset(p.nearset(l), none), false
}

// column checks a column name: the table has one, "text".
func (p *mParser) column(l mLexeme) {
	if v := l.value(); !asciiEqualFold(v, "text") {
		p.fail("no such column: %s", v)
	}
}

// colsetList is the names of {a b c} after '{', to the '}'.
func (p *mParser) colsetList() {
	n := 0
	for p.err == nil {
		l := p.next()
		if l.tok == mtRCP && n > 0 {
			return
		}
		if l.tok != mtString {
			p.syntax(l)
			return
		}
		p.peek() // FTS5 checks the name once it sees the next token
		p.column(l)
		n++
	}
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// nearset is ^phrase, NEAR(phrase ... [, N]) or a phrase; l is its first
// token, read.
func (p *mParser) nearset(l mLexeme) *mNode {
	switch {
	case l.tok == mtCaret:
		l = p.next()
		if l.tok != mtString {
			p.syntax(l)
			return nil
		}
		ph := p.phrase(l)
		ph.first = true
		return mLeaf(&mNear{phrases: []*mPhrase{ph}, dist: -1})
	case l.tok != mtString:
		p.syntax(l)
		return nil
	case p.peek().tok == mtLP:
		p.next()
		return p.near(l)
	}
	return mLeaf(&mNear{phrases: []*mPhrase{p.phrase(l)}, dist: -1})
}

// near is the rest of NEAR( after the '('; name is the word before it.
func (p *mParser) near(name mLexeme) *mNode {
	n := &mNear{dist: 10}
	var dist *mLexeme
	for p.err == nil {
		l := p.next()
		if l.tok == mtString {
			n.phrases = append(n.phrases, p.phrase(l))
			continue
		}
		if len(n.phrases) == 0 {
			p.syntax(l)
			return nil
		}
		if l.tok == mtComma {
			d := p.next()
			if d.tok != mtString {
				p.syntax(d)
				return nil
			}
			dist = &d
			l = p.next()
		}
		if l.tok != mtRP {
			p.syntax(l)
			return nil
		}
		break
	}
	if p.err != nil {
		return nil
	}
	if name.raw != "NEAR" {
		p.syntax(name)
		return nil
	}
	if dist != nil {
		var v int32 // as FTS5 adds it up, in a C int
		for i := range len(dist.raw) {
			c := dist.raw[i]
			if c < '0' || c > '9' {
				p.fail(`expected integer, got "%s"`, dist.raw)
				return nil
			}
			v = v*10 + int32(c-'0')
		}
		n.dist = int(v)
	}
	return mLeaf(n)
}

// phrase is STRING [*] (+ STRING [*])*; l is its first string, read.
func (p *mParser) phrase(l mLexeme) *mPhrase {
	ph := &mPhrase{}
	for {
		for _, t := range textindex.Terms(l.value()) {
			ph.terms = append(ph.terms, mTerm{text: t})
		}
		if p.peek().tok == mtStar {
			p.next()
			if len(ph.terms) > 0 {
				ph.terms[len(ph.terms)-1].prefix = true
			}
		}
		if p.err != nil || p.peek().tok != mtPlus {
			break
		}
		p.next()
		if l = p.next(); l.tok != mtString {
			p.syntax(l)
			break
		}
	}
	for _, t := range ph.terms {
		k := 0
		for k < len(p.terms) && p.terms[k] != t {
			k++
		}
		if k == len(p.terms) {
			p.terms = append(p.terms, t)
		}
		ph.ids = append(ph.ids, k)
	}
	return ph
}
