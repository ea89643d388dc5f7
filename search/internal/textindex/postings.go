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

// termIter reads one term's postings from a segment.
type termIter struct {
	s  *segment
	pr *pageReader
	ti termInfo

	maxOrd []int32 // first (highest) ordinal of each block
	boff   []int64 // offset of each block in the term's postings
	blen   []int64
	blk    int

	d       decoder
	left    int // documents left in the block after the current one
	cur     int32
	fr      int
	head    []byte // the bytes from the current document's frequency on
	posRead bool
	pos     []uint32
}

func newTermIter(s *segment, pr *pageReader, ti termInfo) (*termIter, error) {
	it := &termIter{s: s, pr: pr, ti: ti, cur: -1, blk: -1}
	if ti.skipLen == 0 {
		it.maxOrd, it.boff, it.blen = []int32{-1}, []int64{0}, []int64{ti.len}
	} else {
		b, err := pr.read(s.foot.post.off+ti.off+ti.len-ti.skipLen, ti.skipLen)
		if err != nil {
			return nil, err
		}
		d := decoder{b: b}
		n := int(d.uvarint())
		if n <= 1 || int64(n) > ti.skipLen || int64(n-1)*postingBlock >= ti.df || int64(n)*postingBlock < ti.df {
			return nil, corruptf("%s: bad skip table", s.path)
		}
		it.maxOrd, it.boff, it.blen = make([]int32, n), make([]int64, n), make([]int64, n)
		var off int64
		var m int64
		for i := range n {
			if i == 0 {
				m = int64(d.uvarint())
			} else {
				m -= int64(d.uvarint())
			}
			it.maxOrd[i], it.boff[i] = int32(m), off
			it.blen[i] = int64(d.uvarint())
			off += it.blen[i]
		}
		if d.err != nil || len(d.b) != 0 || off != ti.len-ti.skipLen || m < 0 {
			return nil, corruptf("%s: bad skip table", s.path)
		}
	}
	if err := it.load(0); err != nil {
		return nil, err
	}
	return it, nil
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
	it.d = decoder{b: append(it.d.b[:0:0], raw...)}
	n := int64(postingBlock)
	if b == len(it.boff)-1 {
		n = it.ti.df - int64(b)*postingBlock
	}
	it.left = int(n) - 1
	v := it.d.uvarint()
	ord := v >> 1
	if it.maxOrd[b] >= 0 && int32(ord) != it.maxOrd[b] || ord >= uint64(it.s.foot.ndocs) {
		return it.corrupt()
	}
	it.cur = int32(ord)
	return it.readHead(v&1 == 1)
}

// readHead reads the current document's frequency (one says it is 1).
func (it *termIter) readHead(one bool) error {
	it.fr = 1
	if !one {
		it.fr = int(it.d.uvarint())
		if it.fr <= 1 {
			return it.corrupt()
		}
	}
	it.head = it.d.b
	it.posRead = false
	if it.d.err != nil {
		return it.corrupt()
	}
	return nil
}

func (it *termIter) skipPositions() error {
	if it.posRead {
		return nil
	}
	n := it.fr
	b := it.d.b
	i := 0
	for ; i < len(b) && n > 0; i++ {
		if b[i] < 0x80 {
			n--
		}
	}
	if n > 0 {
		return it.corrupt()
	}
	it.d.b = b[i:]
	it.posRead = true
	return nil
}

func (it *termIter) doc() int32  { return it.cur }
func (it *termIter) freq() int   { return it.fr }
func (it *termIter) cost() int64 { return it.ti.df }

func (it *termIter) next() error {
	if it.cur < 0 {
		return nil
	}
	if err := it.skipPositions(); err != nil {
		return err
	}
	if it.left == 0 {
		if len(it.d.b) != 0 {
			return it.corrupt()
		}
		return it.load(it.blk + 1)
	}
	v := it.d.uvarint()
	delta := v >> 1
	if delta == 0 || delta > uint64(it.cur) {
		return it.corrupt()
	}
	it.cur -= int32(delta)
	it.left--
	return it.readHead(v&1 == 1)
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
	if it.posRead {
		return it.pos, nil
	}
	it.pos = it.pos[:0]
	var p uint32
	for i := range it.fr {
		v := uint32(it.d.uvarint())
		if i == 0 {
			p = v
		} else {
			if v == 0 {
				return nil, it.corrupt()
			}
			p += v
		}
		it.pos = append(it.pos, p)
	}
	if it.d.err != nil {
		return nil, it.corrupt()
	}
	it.posRead = true
	return it.pos, nil
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

// raw returns the current document's positions as they are encoded (a
// merge copies them).
func (it *termIter) raw() ([]byte, error) {
	if it.posRead {
		// positions consumed them: re-read from head
		d := decoder{b: it.head}
		for range it.fr {
			d.uvarint()
		}
		if d.err != nil {
			return nil, it.corrupt()
		}
		return it.head[:len(it.head)-len(d.b)], nil
	}
	if err := it.skipPositions(); err != nil {
		return nil, err
	}
	return it.head[:len(it.head)-len(it.d.b)], nil
}
