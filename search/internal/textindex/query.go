package textindex

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
)

// ErrQuery is matched by the error of a query with nothing to look for.
var ErrQuery = errors.New("empty text query")

// Clause is one condition of a Query: a term (one element of Terms), a
// phrase (several, at consecutive positions), and, with Prefix, the last
// term stands for every term that starts with it. Terms must be as
// Terms returns them (folded); ParseQuery makes clauses from text.
type Clause struct {
	Terms  []string
	Prefix bool
}

// Query asks for the documents that match every clause.
type Query struct {
	Clauses []Clause
	// Limit is the most hits returned; 0 means all.
	Limit int
	// Filter, when not nil, keeps only the documents it accepts (roles,
	// tools, refs, time ranges).
	Filter func(Meta) bool
	// Stop, when not nil, is asked of each document that matches the
	// clauses, newest (highest ID) first, before Filter: when it returns
	// true the search ends there, that document and every older one left
	// out (the caller knows none of them can matter). Not with Rank.
	Stop func(Meta) bool
	// Rank, when not nil, orders the hits by its score, highest first
	// (ties newest first), instead of newest first: every match is then
	// scored before the first Limit are returned. TermFrequency is one.
	Rank func(Hit) float64
}

// Meta is what the index keeps of a document besides its terms.
type Meta struct {
	ID     uint64
	Ref    uint64
	Time   int64
	Role   uint8
	Tool   string
	Tokens uint32 // the number of terms of its text
}

// Hit is a matching document: its metadata and how often the clauses
// matched in it (the sum over clauses of their term or phrase counts).
type Hit struct {
	Meta
	Freq int
}

// TermFrequency is a Rank that orders hits by Freq.
func TermFrequency(h Hit) float64 { return float64(h.Freq) }

// ParseQuery makes clauses of text: each word is a term, "words in
// double quotes" are a phrase, a word ending in * is a prefix. A word
// that folds to several terms ("foo.bar", "don't") is a phrase of them.
func ParseQuery(text string) []Clause {
	var out []Clause
	add := func(s string, prefix, phrase bool) {
		t := Terms(s)
		if len(t) == 0 {
			return
		}
		if !phrase && !prefix && len(t) > 1 {
			phrase = true
		}
		out = append(out, Clause{Terms: t, Prefix: prefix})
	}
	for text != "" {
		text = strings.TrimLeft(text, " \t\r\n")
		if text == "" {
			break
		}
		if text[0] == '"' {
			end := strings.IndexByte(text[1:], '"')
			if end < 0 {
				end = len(text) - 1
			}
			p := text[1 : 1+end]
			text = text[min(len(text), end+2):]
			prefix := strings.HasSuffix(p, "*") || strings.HasPrefix(text, "*")
			text = strings.TrimPrefix(text, "*")
			add(strings.TrimSuffix(p, "*"), prefix, true)
			continue
		}
		end := strings.IndexAny(text, " \t\r\n\"")
		if end < 0 {
			end = len(text)
		}
		w := text[:end]
		text = text[end:]
		add(strings.TrimSuffix(w, "*"), strings.HasSuffix(w, "*"), false)
	}
	return out
}

// Search returns the documents that match q, newest (highest ID) first
// unless q.Rank orders them. Without Rank it stops reading as soon as it
// has q.Limit hits. A damaged segment is an error matching ErrCorrupt.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	if len(q.Clauses) == 0 {
		return nil, ErrQuery
	}
	for _, c := range q.Clauses {
		if len(c.Terms) == 0 {
			return nil, ErrQuery
		}
	}
	segs, err := ix.snapshot()
	if err != nil {
		return nil, err
	}
	defer releaseAll(segs)
	var hits []Hit
	for i := len(segs) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var done bool
		hits, done, err = segs[i].search(ctx, q, hits)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	if q.Rank != nil {
		scores := make(map[uint64]float64, len(hits))
		for _, h := range hits {
			scores[h.ID] = q.Rank(h)
		}
		slices.SortStableFunc(hits, func(a, b Hit) int {
			sa, sb := scores[a.ID], scores[b.ID]
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0 // stable: newest first as found
		})
		if q.Limit > 0 && len(hits) > q.Limit {
			hits = hits[:q.Limit]
		}
	}
	return hits, nil
}

// search appends the segment's hits; done says the limit was reached.
func (s *segment) search(ctx context.Context, q Query, hits []Hit) ([]Hit, bool, error) {
	pr := s.reader()
	defer pr.put()
	var its []iter
	var offs []int
	phrase := false
	for _, c := range q.Clauses {
		var cit []iter
		for k, t := range c.Terms {
			var it iter
			var err error
			if c.Prefix && k == len(c.Terms)-1 {
				it, err = s.prefixIter(pr, []byte(t))
			} else {
				it, err = s.termIter(pr, []byte(t))
			}
			if err != nil {
				return hits, false, err
			}
			if it == nil {
				return hits, false, nil // a clause matches nothing here
			}
			cit = append(cit, it)
		}
		if len(cit) == 1 {
			its, offs = append(its, cit[0]), append(offs, 0)
			continue
		}
		if len(q.Clauses) == 1 {
			// One phrase: its terms are the conjunction.
			for k, it := range cit {
				its, offs = append(its, it), append(offs, k)
			}
			phrase = true
			continue
		}
		p := newAndIter(cit, seq(len(cit)), true)
		if err := p.find(); err != nil {
			return hits, false, err
		}
		its, offs = append(its, p), append(offs, 0)
	}
	a := newAndIter(its, offs, phrase)
	if err := a.find(); err != nil {
		return hits, false, err
	}
	for n := 0; a.doc() >= 0; n++ {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return hits, false, err
			}
		}
		d, err := s.readDoc(pr, a.doc())
		if err != nil {
			return hits, false, err
		}
		h := Hit{Meta: Meta{ID: d.id, Ref: d.ref, Time: d.time, Role: d.role, Tool: s.tools[d.tool], Tokens: d.tokens}, Freq: a.freq()}
		if q.Rank == nil && q.Stop != nil && q.Stop(h.Meta) {
			return hits, true, nil
		}
		if q.Filter == nil || q.Filter(h.Meta) {
			hits = append(hits, h)
			if q.Rank == nil && q.Limit > 0 && len(hits) >= q.Limit {
				return hits, true, nil
			}
		}
		if err := a.next(); err != nil {
			return hits, false, err
		}
	}
	return hits, false, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func (s *segment) termIter(pr *pageReader, term []byte) (iter, error) {
	ti, ok, err := s.lookup(pr, term)
	if err != nil || !ok {
		return nil, err
	}
	return newTermIter(s, pr, ti)
}

func (s *segment) prefixIter(pr *pageReader, prefix []byte) (iter, error) {
	b := max(s.findBlock(prefix), 0)
	c := s.cursor(pr, b)
	var its []iter
	for c.next() {
		if bytes.HasPrefix(c.term, prefix) {
			it, err := newTermIter(s, pr, c.ti)
			if err != nil {
				return nil, err
			}
			its = append(its, it)
		} else if bytes.Compare(c.term, prefix) > 0 {
			break
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	switch len(its) {
	case 0:
		return nil, nil
	case 1:
		return its[0], nil
	}
	return newUnionIter(its), nil
}

// andIter is the documents all its iterators share; as a phrase, those
// where iterator i has a position p+offs[i] for some p, and its
// positions are those p.
type andIter struct {
	its    []iter
	offs   []int
	phrase bool
	cur    int32
	fr     int
	pos    []uint32
	tmp    []uint32
}

func newAndIter(its []iter, offs []int, phrase bool) *andIter {
	a := &andIter{its: slices.Clone(its), offs: slices.Clone(offs), phrase: phrase, cur: -1}
	// The cheapest (rarest) first: it proposes, the others follow.
	idx := seq(len(its))
	slices.SortStableFunc(idx, func(x, y int) int {
		cx, cy := its[x].cost(), its[y].cost()
		switch {
		case cx < cy:
			return -1
		case cx > cy:
			return 1
		}
		return 0
	})
	for k, i := range idx {
		a.its[k], a.offs[k] = its[i], offs[i]
	}
	return a
}

func (a *andIter) doc() int32 { return a.cur }
func (a *andIter) freq() int  { return a.fr }
func (a *andIter) cost() int64 {
	return a.its[0].cost()
}

// find moves to the first document from the lead iterator's current
// one on that all share (and, as a phrase, where the phrase occurs).
func (a *andIter) find() error {
	lead := a.its[0]
	for {
		t := lead.doc()
		if t < 0 {
			a.cur = -1
			return nil
		}
		agree := true
		for _, it := range a.its[1:] {
			if err := it.seek(t); err != nil {
				return err
			}
			d := it.doc()
			if d < 0 {
				a.cur = -1
				return nil
			}
			if d < t {
				if err := lead.seek(d); err != nil {
					return err
				}
				agree = false
				break
			}
		}
		if !agree {
			continue
		}
		if !a.phrase {
			a.cur, a.fr = t, 0
			for _, it := range a.its {
				a.fr += it.freq()
			}
			return nil
		}
		n, err := a.matchPhrase()
		if err != nil {
			return err
		}
		if n > 0 {
			a.cur, a.fr = t, n
			return nil
		}
		if err := lead.next(); err != nil {
			return err
		}
	}
}

// matchPhrase computes the phrase's start positions in the current
// document.
func (a *andIter) matchPhrase() (int, error) {
	a.pos = a.pos[:0]
	for k, it := range a.its {
		p, err := it.positions()
		if err != nil {
			return 0, err
		}
		off := uint32(a.offs[k])
		if k == 0 {
			for _, x := range p {
				if x >= off {
					a.pos = append(a.pos, x-off)
				}
			}
			continue
		}
		// Keep the starts s with s+off in p (both ascending).
		a.tmp = a.tmp[:0]
		j := 0
		for _, s := range a.pos {
			for j < len(p) && p[j] < s+off {
				j++
			}
			if j < len(p) && p[j] == s+off {
				a.tmp = append(a.tmp, s)
			}
		}
		a.pos, a.tmp = a.tmp, a.pos
		if len(a.pos) == 0 {
			return 0, nil
		}
	}
	return len(a.pos), nil
}

func (a *andIter) next() error {
	if a.cur < 0 {
		return nil
	}
	if err := a.its[0].next(); err != nil {
		return err
	}
	return a.find()
}

func (a *andIter) seek(t int32) error {
	if a.cur <= t {
		return nil
	}
	if err := a.its[0].seek(t); err != nil {
		return err
	}
	return a.find()
}

func (a *andIter) positions() ([]uint32, error) { return a.pos, nil }
