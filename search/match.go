package search

import (
	"math"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/search/internal/textindex"
)

// This file matches a text against a query parsed by parseMatch, as an
// FTS5 table with the index's tokenizer would (textindex's tokenizer is
// FTS5's unicode61 with remove_diacritics), and marks the matches as
// FTS5's highlight() does: every instance of the phrases that take part
// in the match, overlapping instances as one.
//
// Where it differs from FTS5: a term longer than textindex.MaxTermLen
// bytes is cut there, in the text and in the query alike (FTS5 keeps up
// to 32 KiB), so a query for a very long word also matches the words
// that share its first MaxTermLen bytes; and FTS5's special queries
// (*reads, *id) are refused.

// mQuery is a parsed query.
type mQuery struct {
	root  *mNode // nil: the query has no term (only empty phrases)
	terms []mTerm
	// nears are the leaves, numbered (mNear.n).
	nears []*mNear
}

// mNode is an expression: a leaf (one near set), or AND, OR or NOT of
// its kids (NOT: the first without the others).
type mNode struct {
	op   ftsOp
	kids []*mNode
	near *mNear
}

// mNear is a phrase, or phrases within dist of each other (NEAR).
type mNear struct {
	phrases []*mPhrase
	dist    int  // -1: one phrase, no NEAR
	none    bool // a column filter leaves out the only column
	n       int
}

// mPhrase is terms at consecutive positions; ids are the terms'
// indexes in mQuery.terms. With first (^) it must start the text.
type mPhrase struct {
	terms []mTerm
	ids   []int
	first bool
}

// mLeaf makes a leaf of a near set, without its empty phrases (FTS5
// drops them); nil when none is left.
func mLeaf(n *mNear) *mNode {
	n.phrases = slices.DeleteFunc(n.phrases, func(p *mPhrase) bool { return len(p.terms) == 0 })
	if len(n.phrases) == 0 {
		return nil
	}
	return &mNode{op: opLeaf, near: n}
}

// mJoin combines a and b with op. A nil side (an expression of empty
// phrases) is left out, as FTS5 does: "a AND ”" is a, "” NOT a" nil.
func mJoin(op ftsOp, a, b *mNode) *mNode {
	switch {
	case a == nil && op == opNot:
		return nil
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if a.op == op {
		a.kids = append(a.kids, b)
		return a
	}
	return &mNode{op: op, kids: []*mNode{a, b}}
}

// mColset applies a column filter to e: with none (-text, -{text}) no
// leaf of e can match.
func mColset(e *mNode, none bool) *mNode {
	if none && e != nil {
		e.walk(func(n *mNear) { n.none = true })
	}
	return e
}

func (e *mNode) walk(fn func(*mNear)) {
	if e.op == opLeaf {
		fn(e.near)
		return
	}
	for _, k := range e.kids {
		k.walk(fn)
	}
}

// matcher matches texts against one query; it keeps its buffers from
// text to text and is not safe for concurrent use.
type matcher struct {
	q     *mQuery
	pos   [][]int32   // by term: the positions where it occurs
	inst  [][][]int32 // by near set, by phrase: the instances' positions
	ok    []bool      // by near set: it matches
	spans [][2]int32  // the instances to mark: first and last position
}

func newMatcher(q *mQuery) *matcher {
	if q.nears == nil && q.root != nil {
		q.root.walk(func(n *mNear) {
			n.n = len(q.nears)
			q.nears = append(q.nears, n)
		})
	}
	return &matcher{q: q, pos: make([][]int32, len(q.terms)), inst: make([][][]int32, len(q.nears)), ok: make([]bool, len(q.nears))}
}

// match reports whether text matches the query.
func (m *matcher) match(text string) bool {
	q := m.q
	if q.root == nil {
		return false
	}
	for i := range m.pos {
		m.pos[i] = m.pos[i][:0]
	}
	var at int32
	any := false
	textindex.Tokenize(text, func(term []byte) {
		for i, t := range q.terms {
			if string(term) == t.text || t.prefix && len(term) >= len(t.text) && string(term[:len(t.text)]) == t.text {
				m.pos[i] = append(m.pos[i], at)
				any = true
			}
		}
		at++
	})
	if !any {
		return false
	}
	for _, n := range q.nears {
		m.ok[n.n] = m.nearMatch(n)
	}
	return m.eval(q.root)
}

func (m *matcher) eval(e *mNode) bool {
	switch e.op {
	case opLeaf:
		return m.ok[e.near.n]
	case opAnd:
		for _, k := range e.kids {
			if !m.eval(k) {
				return false
			}
		}
		return true
	case opOr:
		for _, k := range e.kids {
			if m.eval(k) {
				return true
			}
		}
		return false
	}
	if !m.eval(e.kids[0]) {
		return false
	}
	for _, k := range e.kids[1:] {
		if m.eval(k) {
			return false
		}
	}
	return true
}

// nearMatch finds the instances of a near set's phrases (m.inst) and
// reports whether it matches.
func (m *matcher) nearMatch(n *mNear) bool {
	if n.none {
		return false
	}
	lists := m.inst[n.n]
	if len(lists) != len(n.phrases) {
		lists = make([][]int32, len(n.phrases))
		m.inst[n.n] = lists
	}
	for i, ph := range n.phrases {
		lists[i] = m.phrasePositions(ph, lists[i][:0])
		if len(lists[i]) == 0 {
			return false
		}
	}
	if len(n.phrases) == 1 {
		return true
	}
	return nearTrim(lists, n.phrases, n.dist)
}

// phrasePositions appends to out the positions where ph starts.
func (m *matcher) phrasePositions(ph *mPhrase, out []int32) []int32 {
	first := m.pos[ph.ids[0]]
	next := make([]int, len(ph.ids)) // a cursor in each later term's list
	for _, p := range first {
		if ph.first && p != 0 {
			break
		}
		ok := true
		for j := 1; j < len(ph.ids) && ok; j++ {
			l := m.pos[ph.ids[j]]
			for next[j] < len(l) && l[next[j]] < p+int32(j) {
				next[j]++
			}
			ok = next[j] < len(l) && l[next[j]] == p+int32(j)
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// nearTrim keeps, of each phrase's instances, those FTS5 keeps for a
// NEAR group: it steps through them in order and records each set of
// instances, one per phrase, in which every phrase starts at most its
// length plus dist before the last one starts. It reports whether there
// was one. FTS5 marks the instances it keeps (not every instance that
// is in some such set), and so does the matcher.
func nearTrim(lists [][]int32, phrases []*mPhrase, dist int) bool {
	n := len(lists)
	idx := make([]int, n)
	outs := make([][]int32, n)
	for i := range outs {
		outs[i] = lists[i][:0:0]
	}
	cur := func(i int) int64 { return int64(lists[i][idx[i]]) }
	ahead := func(i int) int64 {
		if idx[i]+1 < len(lists[i]) {
			return int64(lists[i][idx[i]+1])
		}
		return math.MaxInt64
	}
	for {
		top := cur(0)
		for done := false; !done; {
			done = true
			for i := range n {
				lo := top - int64(len(phrases[i].terms)) - int64(dist)
				if c := cur(i); c >= lo && c <= top {
					continue
				}
				done = false
				for cur(i) < lo {
					if idx[i]++; idx[i] == len(lists[i]) {
						return finishTrim(lists, outs)
					}
				}
				top = max(top, cur(i))
			}
		}
		for i := range n {
			if c := int32(cur(i)); len(outs[i]) == 0 || outs[i][len(outs[i])-1] != c {
				outs[i] = append(outs[i], c)
			}
		}
		adv := 0
		for i := 1; i < n; i++ {
			if ahead(i) < ahead(adv) {
				adv = i
			}
		}
		if idx[adv]++; idx[adv] == len(lists[adv]) {
			return finishTrim(lists, outs)
		}
	}
}

func finishTrim(lists, outs [][]int32) bool {
	for i := range lists {
		lists[i] = outs[i]
	}
	return len(outs[0]) > 0
}

// highlight returns text with the matches between \x01 and \x02, and
// whether text matches.
func (m *matcher) highlight(text string) (string, bool) {
	if !m.match(text) {
		return "", false
	}
	m.spans = m.spans[:0]
	m.collect(m.q.root)
	slices.SortFunc(m.spans, func(a, b [2]int32) int { return int(a[0]) - int(b[0]) })
	// Overlapping instances are one.
	merged := m.spans[:0]
	for _, s := range m.spans {
		if k := len(merged) - 1; k >= 0 && s[0] <= merged[k][1] {
			merged[k][1] = max(merged[k][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	var sb strings.Builder
	sb.Grow(len(text) + 2*len(merged))
	copied, at, k := 0, int32(0), 0
	textindex.TokenizeSpans(text, func(_ []byte, start, end int) {
		if k < len(merged) {
			if at == merged[k][0] {
				sb.WriteString(text[copied:start])
				sb.WriteByte(1)
				copied = start
			}
			if at == merged[k][1] {
				sb.WriteString(text[copied:end])
				sb.WriteByte(2)
				copied = end
				k++
			}
		}
		at++
	})
	sb.WriteString(text[copied:])
	return sb.String(), true
}

// collect adds to m.spans the instances of the phrases that take part
// in the match of e: of every kid of an AND, of the kids of an OR that
// match, of the first kid of a NOT.
func (m *matcher) collect(e *mNode) {
	switch e.op {
	case opLeaf:
		for i, ph := range e.near.phrases {
			for _, p := range m.inst[e.near.n][i] {
				m.spans = append(m.spans, [2]int32{p, p + int32(len(ph.terms)) - 1})
			}
		}
	case opAnd:
		for _, k := range e.kids {
			m.collect(k)
		}
	case opOr:
		for _, k := range e.kids {
			if m.eval(k) {
				m.collect(k)
			}
		}
	case opNot:
		m.collect(e.kids[0])
	}
}
