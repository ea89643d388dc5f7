package textindex

import (
	"container/heap"
	"slices"
)

// iter walks the documents of a posting list (or a combination of some)
// from the highest ordinal down. doc is -1 once exhausted.
type iter interface {
	doc() int32
	next() error
	// seek moves to the first document <= t (never back).
	seek(t int32) error
	freq() int
	// positions returns the current document's positions, ascending.
	positions() ([]uint32, error)
	cost() int64
}

// termIter reads one term's postings from a segment. It decodes a
// block's documents and frequencies when it reaches the block, and its
// positions the first time a document of it is asked for them.
type termIter struct {
	s  *segment
	pr *pageReader
	ti termInfo

	maxOrd []int32 // first (highest) ordinal of each block
	boff   []int64 // offset of each block in the term's postings
	blen   []int64
	bdocs  []int32 // documents in each block
	blk    int

	raw   []byte // the block
	br    bitReader
	ords  []int32
	freqs []uint32
	i     int // the current document's index in the block
	cur   int32
	fr    int
	posOK bool     // the block's positions are decoded
	pos   []uint32 // the block's positions, document after document
	posAt []int32  // where each document's positions start in pos
	vals  []uint32
	rests []uint32
}

func newTermIter(s *segment, pr *pageReader, ti termInfo) (*termIter, error) {
	it := &termIter{}
	if err := it.init(s, pr, ti); err != nil {
		return nil, err
	}
	return it, nil
}

// init makes it an iterator of the term's postings, reusing its buffers
// (a merge reads a term of each segment after another).
func (it *termIter) init(s *segment, pr *pageReader, ti termInfo) error {
	if err := it.blocks(s, pr, ti); err != nil {
		return err
	}
	return it.load(0)
}

// blocks makes it an iterator of the term's postings that has read the
// skip table but no block.
func (it *termIter) blocks(s *segment, pr *pageReader, ti termInfo) error {
	*it = termIter{s: s, pr: pr, ti: ti, cur: -1, blk: -1,
		maxOrd: it.maxOrd[:0], boff: it.boff[:0], blen: it.blen[:0], bdocs: it.bdocs[:0],
		raw: it.raw[:0], ords: it.ords[:0], freqs: it.freqs[:0],
		pos: it.pos[:0], posAt: it.posAt[:0], vals: it.vals[:0], rests: it.rests[:0]}
	if ti.skipLen == 0 {
		if ti.df < 1 || ti.df > postingBlock {
			return corruptf("%s: bad postings", s.path)
		}
		it.maxOrd, it.boff, it.blen = append(it.maxOrd, -1), append(it.boff, 0), append(it.blen, ti.len)
		it.bdocs = append(it.bdocs, int32(ti.df))
		return nil
	}
	b, err := pr.read(s.foot.post.off+ti.off+ti.len-ti.skipLen, ti.skipLen)
	if err != nil {
		return err
	}
	d := decoder{b: b}
	n := int(d.uvarint())
	if n <= 1 || int64(n) > ti.skipLen || int64(n) > ti.df {
		return corruptf("%s: bad skip table", s.path)
	}
	var off, m, docs int64
	for i := range n {
		if i == 0 {
			m = int64(d.uvarint())
		} else {
			m -= int64(d.uvarint())
		}
		l := int64(d.uvarint())
		c := int64(d.uvarint())
		if c < 1 || c > postingBlock {
			return corruptf("%s: bad skip table", s.path)
		}
		it.maxOrd, it.boff, it.blen = append(it.maxOrd, int32(m)), append(it.boff, off), append(it.blen, l)
		it.bdocs = append(it.bdocs, int32(c))
		off += l
		docs += c
	}
	if d.err != nil || len(d.b) != 0 || off != ti.len-ti.skipLen || m < 0 || docs != ti.df {
		return corruptf("%s: bad skip table", s.path)
	}
	return nil
}

// rawBlock returns block b's first ordinal and the bit stream after it,
// undecoded (valid until the next read).
func (it *termIter) rawBlock(b int) (int32, []byte, error) {
	raw, err := it.pr.read(it.s.foot.post.off+it.ti.off+it.boff[b], it.blen[b])
	if err != nil {
		return 0, nil, err
	}
	d := decoder{b: raw}
	first := d.uvarint()
	if d.err != nil || it.maxOrd[b] >= 0 && int64(first) != int64(it.maxOrd[b]) || first >= uint64(it.s.foot.ndocs) ||
		uint64(it.bdocs[b])*2 > uint64(len(d.b))*8 {
		return 0, nil, it.corrupt()
	}
	return int32(first), d.b, nil
}

func (it *termIter) corrupt() error { return corruptf("%s: bad postings", it.s.path) }

// load reads block b and moves to its first document.
func (it *termIter) load(b int) error {
	it.blk = b
	if b >= len(it.boff) {
		it.cur = -1
		return nil
	}
	raw, err := it.pr.read(it.s.foot.post.off+it.ti.off+it.boff[b], it.blen[b])
	if err != nil {
		return err
	}
	it.raw = append(it.raw[:0], raw...)
	n := int64(it.bdocs[b])
	d := decoder{b: it.raw}
	first := d.uvarint()
	if d.err != nil || it.maxOrd[b] >= 0 && int64(first) != int64(it.maxOrd[b]) || first >= uint64(it.s.foot.ndocs) {
		return it.corrupt()
	}
	// Every value takes a bit at least: a count beyond the bits is damage.
	it.br = bitReader{b: d.b}
	if uint64(n)*2 > uint64(len(d.b))*8 {
		return it.corrupt()
	}
	it.vals = it.vals[:0]
	if n > 1 {
		it.vals = it.br.run(it.vals, int(n-1))
	}
	it.ords = append(it.ords[:0], int32(first))
	o := int64(first)
	for _, v := range it.vals {
		o -= int64(v) + 1
		if o < 0 {
			return it.corrupt()
		}
		it.ords = append(it.ords, int32(o))
	}
	it.freqs = it.br.run(it.freqs[:0], int(n))
	for i, f := range it.freqs {
		if f == ^uint32(0) {
			return it.corrupt()
		}
		it.freqs[i] = f + 1
	}
	if it.br.bad {
		return it.corrupt()
	}
	it.posOK = false
	it.i = 0
	it.cur, it.fr = it.ords[0], int(it.freqs[0])
	return nil
}

// loadPositions decodes the block's positions.
func (it *termIter) loadPositions() error {
	n := len(it.ords)
	var total int64
	for _, f := range it.freqs {
		total += int64(f)
	}
	left := int64(len(it.br.b))*8 - int64(it.br.off)
	if total > left {
		return it.corrupt()
	}
	it.vals = it.br.run(it.vals[:0], n)
	firsts := it.vals
	var rests []uint32
	if total > int64(n) {
		it.rests = it.br.run(it.rests[:0], int(total)-n)
		rests = it.rests
	}
	// The bit stream ends here, but for the padding of its last byte.
	if it.br.bad || (it.br.off+7)/8 != uint(len(it.br.b)) {
		return it.corrupt()
	}
	it.pos, it.posAt = it.pos[:0], it.posAt[:0]
	r := 0
	for i, f := range it.freqs {
		it.posAt = append(it.posAt, int32(len(it.pos)))
		p := uint64(firsts[i])
		it.pos = append(it.pos, uint32(p))
		for range f - 1 {
			p += uint64(rests[r]) + 1
			r++
			if p > uint64(^uint32(0)) {
				return it.corrupt()
			}
			it.pos = append(it.pos, uint32(p))
		}
	}
	it.posAt = append(it.posAt, int32(len(it.pos)))
	it.posOK = true
	return nil
}

func (it *termIter) doc() int32  { return it.cur }
func (it *termIter) freq() int   { return it.fr }
func (it *termIter) cost() int64 { return it.ti.df }

func (it *termIter) next() error {
	if it.cur < 0 {
		return nil
	}
	if it.i+1 == len(it.ords) {
		return it.load(it.blk + 1)
	}
	it.i++
	it.cur, it.fr = it.ords[it.i], int(it.freqs[it.i])
	return nil
}

func (it *termIter) seek(t int32) error {
	if it.cur <= t {
		return nil
	}
	b := it.blk
	for b+1 < len(it.maxOrd) && it.maxOrd[b+1] >= t {
		b++
	}
	if b != it.blk {
		if err := it.load(b); err != nil {
			return err
		}
	}
	for it.cur > t {
		if err := it.next(); err != nil {
			return err
		}
	}
	return nil
}

func (it *termIter) positions() ([]uint32, error) {
	if !it.posOK {
		if err := it.loadPositions(); err != nil {
			return nil, err
		}
	}
	return it.pos[it.posAt[it.i]:it.posAt[it.i+1]], nil
}

// unionIter is the documents of any of several iterators (a prefix's
// terms); its positions are theirs merged.
type unionIter struct {
	h    iterHeap
	all  []iter
	cur  int32
	fr   int
	pos  []uint32
	done bool
	c    int64
}

type iterHeap []iter

func (h iterHeap) Len() int           { return len(h) }
func (h iterHeap) Less(i, j int) bool { return h[i].doc() > h[j].doc() }
func (h iterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)        { *h = append(*h, x.(iter)) }
func (h *iterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newUnionIter(its []iter) *unionIter {
	u := &unionIter{all: its}
	for _, it := range its {
		u.c += it.cost()
		if it.doc() >= 0 {
			u.h = append(u.h, it)
		}
	}
	heap.Init(&u.h)
	u.settle()
	return u
}

// settle computes the current document from the heap's top.
func (u *unionIter) settle() {
	u.done = false
	if len(u.h) == 0 {
		u.cur = -1
		return
	}
	u.cur = u.h[0].doc()
	u.fr = 0
	for _, it := range u.h {
		if it.doc() == u.cur {
			u.fr += it.freq()
		}
	}
}

func (u *unionIter) doc() int32  { return u.cur }
func (u *unionIter) freq() int   { return u.fr }
func (u *unionIter) cost() int64 { return u.c }

func (u *unionIter) advance(f func(iter) error) error {
	// Move every iterator at or above the current document.
	for len(u.h) > 0 {
		top := u.h[0]
		if top.doc() < u.cur {
			break
		}
		if err := f(top); err != nil {
			return err
		}
		if top.doc() < 0 {
			heap.Pop(&u.h)
		} else {
			heap.Fix(&u.h, 0)
		}
	}
	u.settle()
	return nil
}

func (u *unionIter) next() error {
	if u.cur < 0 {
		return nil
	}
	return u.advance(func(it iter) error { return it.next() })
}

func (u *unionIter) seek(t int32) error {
	if u.cur <= t {
		return nil
	}
	u.cur = t + 1 // every iterator above t moves
	return u.advance(func(it iter) error { return it.seek(t) })
}

func (u *unionIter) positions() ([]uint32, error) {
	u.pos = u.pos[:0]
	for _, it := range u.h {
		if it.doc() != u.cur {
			continue
		}
		p, err := it.positions()
		if err != nil {
			return nil, err
		}
		u.pos = append(u.pos, p...)
	}
	slices.Sort(u.pos)
	return u.pos, nil
}
