package search

import (
	"strings"
	"unicode/utf8"

	"github.com/sessctl/sessctl/search/internal/textindex"
)

// ftsOp is the operator of an ftsExpr.
type ftsOp uint8

const (
	opLeaf ftsOp = iota // every clause (term, phrase, prefix) matches
	opAnd
	opOr
	opNot // the first kid, without the documents of the others
)

// ftsExpr is an FTS5 query as the own engine evaluates it. exact is
// false when it may match more than FTS5 does (NEAR is evaluated as the
// conjunction of its phrases; the snippet's FTS5 match drops the rest).
type ftsExpr struct {
	op      ftsOp
	clauses []textindex.Clause
	kids    []*ftsExpr
	exact   bool
}

// parseFTS parses an FTS5 query (one FTS5 accepted: snipper.check runs
// first) into an expression of the own engine, following FTS5's grammar:
// OR binds loosest, then AND, then NOT, then the implicit AND of
// adjacent phrases. It returns false for what it does not evaluate
// exactly enough: column filters, ^, +, -, {...}, an empty phrase, and
// NEAR under NOT (a superset under NOT would lose hits).
func parseFTS(s string) (*ftsExpr, bool) {
	p := &ftsParser{s: s}
	e, ok := p.or()
	if !ok || p.peek().kind != tkEnd {
		return nil, false
	}
	return e, true
}

type tkKind uint8

const (
	tkEnd tkKind = iota
	tkWord
	tkString
	tkLP
	tkRP
	tkStar
	tkComma
	tkOther
)

type token struct {
	kind tkKind
	text string
}

type ftsParser struct {
	s   string
	tok *token
}

// barewordChar is FTS5's: non-ASCII, alphanumeric, '_' or 0x1a.
func barewordChar(c byte) bool {
	return c >= 0x80 || c == '_' || c == 0x1a || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *ftsParser) peek() token {
	if p.tok != nil {
		return *p.tok
	}
	s := strings.TrimLeft(p.s, " \t\n\r\f\v")
	var t token
	switch {
	case s == "":
		t = token{kind: tkEnd}
	case s[0] == '"':
		var sb strings.Builder
		i := 1
		closed := false
		for i < len(s) {
			if s[i] == '"' {
				if i+1 < len(s) && s[i+1] == '"' {
					sb.WriteByte('"')
					i += 2
					continue
				}
				i++
				closed = true
				break
			}
			sb.WriteByte(s[i])
			i++
		}
		if !closed {
			t = token{kind: tkOther}
			s = ""
			break
		}
		t, s = token{kind: tkString, text: sb.String()}, s[i:]
	case barewordChar(s[0]):
		i := 0
		for i < len(s) && barewordChar(s[i]) {
			if s[i] >= 0x80 {
				_, n := utf8.DecodeRuneInString(s[i:])
				i += n
				continue
			}
			i++
		}
		t, s = token{kind: tkWord, text: s[:i]}, s[i:]
	case s[0] == '(':
		t, s = token{kind: tkLP}, s[1:]
	case s[0] == ')':
		t, s = token{kind: tkRP}, s[1:]
	case s[0] == '*':
		t, s = token{kind: tkStar}, s[1:]
	case s[0] == ',':
		t, s = token{kind: tkComma}, s[1:]
	default:
		t, s = token{kind: tkOther}, ""
	}
	p.s = s
	p.tok = &t
	return t
}

func (p *ftsParser) next() token {
	t := p.peek()
	p.tok = nil
	return t
}

func isKeyword(t token, k string) bool { return t.kind == tkWord && t.text == k }

func (p *ftsParser) or() (*ftsExpr, bool) {
	e, ok := p.and()
	if !ok {
		return nil, false
	}
	for isKeyword(p.peek(), "OR") {
		p.next()
		k, ok := p.and()
		if !ok {
			return nil, false
		}
		e = join(opOr, e, k)
	}
	return e, true
}

func (p *ftsParser) and() (*ftsExpr, bool) {
	e, ok := p.not()
	if !ok {
		return nil, false
	}
	for isKeyword(p.peek(), "AND") {
		p.next()
		k, ok := p.not()
		if !ok {
			return nil, false
		}
		e = join(opAnd, e, k)
	}
	return e, true
}

func (p *ftsParser) not() (*ftsExpr, bool) {
	e, ok := p.list()
	if !ok {
		return nil, false
	}
	for isKeyword(p.peek(), "NOT") {
		p.next()
		k, ok := p.list()
		if !ok || !k.exact {
			return nil, false
		}
		if e.op == opNot {
			e.kids = append(e.kids, k)
		} else {
			e = &ftsExpr{op: opNot, kids: []*ftsExpr{e, k}, exact: e.exact}
		}
	}
	return e, true
}

// list is adjacent units, implicitly ANDed.
func (p *ftsParser) list() (*ftsExpr, bool) {
	var e *ftsExpr
	for {
		t := p.peek()
		if t.kind == tkEnd || t.kind == tkRP || isKeyword(t, "AND") || isKeyword(t, "OR") || isKeyword(t, "NOT") {
			break
		}
		u, ok := p.unit()
		if !ok {
			return nil, false
		}
		if e == nil {
			e = u
		} else {
			e = join(opAnd, e, u)
		}
	}
	return e, e != nil
}

func (p *ftsParser) unit() (*ftsExpr, bool) {
	t := p.next()
	switch t.kind {
	case tkLP:
		e, ok := p.or()
		if !ok || p.next().kind != tkRP {
			return nil, false
		}
		return e, true
	case tkWord:
		if t.text == "NEAR" && p.peek().kind == tkLP {
			return p.near()
		}
		return p.phrase(t.text)
	case tkString:
		return p.phrase(t.text)
	}
	return nil, false
}

func (p *ftsParser) phrase(text string) (*ftsExpr, bool) {
	prefix := false
	if p.peek().kind == tkStar {
		p.next()
		prefix = true
	}
	terms := textindex.Terms(text)
	if len(terms) == 0 {
		return nil, false
	}
	return &ftsExpr{op: opLeaf, clauses: []textindex.Clause{{Terms: terms, Prefix: prefix}}, exact: true}, true
}

// near parses NEAR(phrase phrase ..., N) as the AND of the phrases.
func (p *ftsParser) near() (*ftsExpr, bool) {
	p.next() // (
	var e *ftsExpr
	for {
		t := p.next()
		switch t.kind {
		case tkRP:
			if e == nil {
				return nil, false
			}
			e.exact = false
			return e, true
		case tkComma:
			if n := p.next(); n.kind != tkWord || p.next().kind != tkRP || e == nil {
				return nil, false
			}
			e.exact = false
			return e, true
		case tkWord, tkString:
			u, ok := p.phrase(t.text)
			if !ok {
				return nil, false
			}
			if e == nil {
				e = u
			} else {
				e = join(opAnd, e, u)
			}
		default:
			return nil, false
		}
	}
}

// join combines a and b with op; an AND of leaves is one leaf (the
// textindex intersects its clauses itself).
func join(op ftsOp, a, b *ftsExpr) *ftsExpr {
	exact := a.exact && b.exact
	if op == opAnd && a.op == opLeaf && b.op == opLeaf {
		return &ftsExpr{op: opLeaf, clauses: append(append([]textindex.Clause(nil), a.clauses...), b.clauses...), exact: exact}
	}
	if a.op == op && op != opNot {
		a.kids = append(a.kids, b)
		a.exact = exact
		return a
	}
	return &ftsExpr{op: op, kids: []*ftsExpr{a, b}, exact: exact}
}
