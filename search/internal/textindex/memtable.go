package textindex

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unsafe"
)

// The in-memory table of a Builder. Everything it holds is in blocks of
// fixed size that hold no pointers, so that its size is counted exactly
// (memBytes) and the garbage collector has nothing to scan:
//
//   - slots, an open-addressing hash table (linear probing) of term
//     numbers with their hashes, which starts small and doubles up to
//     its planned size as terms come (a small table of few terms stays
//     in the caches: the lookups of a build are mostly cache misses);
//   - terms, the per-term state, in chunks of termChunk entries;
//   - a byte pool in pages of poolPage bytes holding each term's bytes
//     and its postings, as chains of slices of growing size (the idea of
//     Lucene's ByteBlockPool): a slice's last 4 bytes point to the next;
//   - docs, the documents' metadata, in chunks of docChunk entries.
//
// A term's postings in memory are a stream of uvarints, one or two per
// occurrence: (delta of the doc ordinal)<<1|1 and the position for the
// first occurrence in a document, (delta of the position)<<1 for the
// others.
const (
	poolPage  = 16 << 10
	termChunk = 512
	docChunk  = 512
	maxLoad   = 2 // the table is full at one term per maxLoad slots
	shortLen  = 12
)

// sliceSizes are the sizes of a chain's slices, the last repeated.
var sliceSizes = [...]uint32{16, 32, 64, 128, 256, 512, 1024, 2048}

type memTerm struct {
	short   [shortLen]byte // the term's first bytes, compared in place
	text    uint32         // pool address of the term's bytes
	textLen uint32
	head    uint32 // first slice of the postings
	tail    uint32 // where the next byte goes
	end     uint32 // end of the current slice's payload (its pointer's address)
	level   uint8
	lastOrd int32
	lastPos uint32
	df      uint32
}

type docMeta struct {
	id, ref uint64
	time    int64
	tool    uint32
	tokens  uint32
	role    uint8
}

type memTable struct {
	blk    *blocks  // where its blocks come from and go back to
	slots  []uint64 // hash<<32 | term number + 1, 0 for empty
	mask   uint32
	nslots int // the size slots grows to (see newMemTable)
	nterms int
	terms  [][]memTerm
	pages  [][]byte
	used   uint32 // bytes used of the last page
	docs   [][]docMeta
	ndocs  int
	tools  map[string]uint32
	toolv  []string
	toolsz int64
}

func newMemTable(budget int64, blk *blocks) *memTable {
	// The slot table may grow to about 1/4 of the budget and is full at
	// one term per two slots; a term costs at least about 70 bytes (48
	// of state, 16 of postings, its bytes), so a table of only new terms
	// fills it at about the budget. It starts small and doubles at half
	// full, so that the slots of a table of fewer terms stay in the
	// processor's caches.
	n := uint32(1 << 10)
	for int64(n)*8*4 < budget && n < 1<<30 {
		n <<= 1
	}
	first := min(n, 1<<13)
	return &memTable{blk: blk, slots: asSlots(blk.get(int(first) * 8)), mask: first - 1, nslots: int(n), tools: map[string]uint32{}}
}

// release gives the table's blocks back: it must not be used after.
func (m *memTable) release() {
	m.blk.put(bytesOf(m.slots))
	for _, p := range m.pages {
		m.blk.put(p)
	}
	for _, t := range m.terms {
		m.blk.put(bytesOf(t))
	}
	for _, d := range m.docs {
		m.blk.put(bytesOf(d))
	}
	m.slots, m.pages, m.terms, m.docs = nil, nil, nil, nil
}

// memBytes is the memory the table holds, counted from its blocks.
func (m *memTable) memBytes() int64 {
	n := int64(len(m.slots)) * 8
	n += int64(len(m.terms)) * termChunk * int64(unsafe.Sizeof(memTerm{}))
	n += int64(len(m.pages)) * poolPage
	n += int64(len(m.docs)) * docChunk * int64(unsafe.Sizeof(docMeta{}))
	return n + m.toolsz
}

// full reports whether the hash table holds as many terms as it may.
func (m *memTable) full() bool { return m.nterms*maxLoad >= max(len(m.slots), m.nslots) }

// needsGrow reports whether the slot table should double before another
// term: at half full while it is below its planned size, at 7/8 beyond
// (a document with more distinct terms than the table was made for).
func (m *memTable) needsGrow() bool {
	if len(m.slots) < m.nslots {
		return (m.nterms+1)*maxLoad > len(m.slots)
	}
	return (m.nterms+1)*8 > len(m.slots)*7
}

func (m *memTable) term(i int) *memTerm { return &m.terms[i/termChunk][i%termChunk] }

func (m *memTable) doc(i int) *docMeta { return &m.docs[i/docChunk][i%docChunk] }

// alloc returns the pool address of n fresh bytes, contiguous in a page.
func (m *memTable) alloc(n uint32) uint32 {
	if len(m.pages) == 0 || m.used+n > poolPage {
		m.pages = append(m.pages, m.blk.get(poolPage))
		m.used = 0
	}
	a := uint32(len(m.pages)-1)*poolPage + m.used
	m.used += n
	return a
}

func (m *memTable) bytesAt(a, n uint32) []byte {
	return m.pages[a/poolPage][a%poolPage:][:n]
}

func (m *memTable) termText(t *memTerm) []byte { return m.bytesAt(t.text, t.textLen) }

// termKey is a term's first shortLen bytes, zero-padded, as two words
// (terms hold no NUL bytes, so with the length it names a short term).
type termKey struct {
	lo uint64
	hi uint32
}

func keyOf(b []byte) termKey {
	if cap(b) < shortLen {
		var k [shortLen]byte
		copy(k[:], b)
		return termKey{binary.LittleEndian.Uint64(k[:]), binary.LittleEndian.Uint32(k[8:])}
	}
	// The tokenizer's buffer has room: load the words and mask off what
	// lies beyond the term, without a copy.
	w := b[:shortLen]
	lo, hi := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint32(w[8:])
	switch n := uint(len(b)); {
	case n < 8:
		return termKey{lo & (1<<(8*n) - 1), 0}
	case n < shortLen:
		return termKey{lo, hi & (1<<(8*(n-8)) - 1)}
	}
	return termKey{lo, hi}
}

func (t *memTerm) key() termKey {
	return termKey{binary.LittleEndian.Uint64(t.short[:]), binary.LittleEndian.Uint32(t.short[8:])}
}

func hashTerm(b []byte) uint32 { return hashKeyed(b, keyOf(b)) }

// hashKeyed hashes a term whose key is k: a multiply-mix of the key's
// words for a short term, FNV-1a over the bytes for a longer one, then
// a finalizer so that linear probing sees mixed bits.
func hashKeyed(b []byte, k termKey) uint32 {
	var h uint32
	if len(b) <= shortLen {
		x := (k.lo ^ uint64(len(b))<<59) * 0x9e3779b97f4a7c15
		x ^= uint64(k.hi) * 0xc2b2ae3d27d4eb4f
		h = uint32(x>>32) ^ uint32(x)
	} else {
		h = 2166136261
		for _, c := range b {
			h = (h ^ uint32(c)) * 16777619
		}
	}
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	return h
}

// lookup returns the term's number, adding it when missing.
func (m *memTable) lookup(b []byte) int {
	k := keyOf(b)
	return m.lookupHashed(b, k, hashKeyed(b, k))
}

// lookupHashed is lookup of a term whose key and hash are known.
func (m *memTable) lookupHashed(b []byte, k termKey, h uint32) int {
	for i := h & m.mask; ; i = (i + 1) & m.mask {
		s := m.slots[i]
		if s == 0 {
			return m.add(i, h, b)
		}
		if uint32(s>>32) != h {
			continue
		}
		n := int(uint32(s) - 1)
		t := m.term(n)
		if int(t.textLen) != len(b) || t.key() != k {
			continue
		}
		if len(b) <= shortLen || bytes.Equal(m.termText(t), b) {
			return n
		}
	}
}

func (m *memTable) add(slot, h uint32, b []byte) int {
	n := m.nterms
	if n%termChunk == 0 {
		m.terms = append(m.terms, asTerms(m.blk.get(termChunk*int(unsafe.Sizeof(memTerm{})))))
	}
	m.nterms++
	m.slots[slot] = uint64(h)<<32 | uint64(n+1)
	a := m.alloc(uint32(len(b)))
	copy(m.bytesAt(a, uint32(len(b))), b)
	head := m.alloc(sliceSizes[0])
	t := m.term(n)
	*t = memTerm{text: a, textLen: uint32(len(b)), head: head, tail: head, end: head + sliceSizes[0] - 4, lastOrd: -1}
	copy(t.short[:], b)
	return n
}

func (m *memTable) writeByte(t *memTerm, c byte) {
	if t.tail == t.end {
		if int(t.level) < len(sliceSizes)-1 {
			t.level++
		}
		size := sliceSizes[t.level]
		next := m.alloc(size)
		binary.LittleEndian.PutUint32(m.bytesAt(t.end, 4), next)
		t.tail, t.end = next, next+size-4
	}
	m.pages[t.tail/poolPage][t.tail%poolPage] = c
	t.tail++
}

func (m *memTable) writeUvarint(t *memTerm, v uint64) {
	// The values are below 1<<35: five bytes at most. A slice never
	// crosses a page, so when they fit before its end they go in at once.
	if t.end-t.tail >= 5 && v < 1<<35 {
		p := m.pages[t.tail/poolPage][t.tail%poolPage:][:5]
		t.tail += uint32(binary.PutUvarint(p, v))
		return
	}
	for v >= 0x80 {
		m.writeByte(t, byte(v)|0x80)
		v >>= 7
	}
	m.writeByte(t, byte(v))
}

// addOccurrence records that term n occurs in document ord at pos.
func (m *memTable) addOccurrence(n int, ord int32, pos uint32) {
	t := m.term(n)
	if t.lastOrd != ord {
		m.writeUvarint(t, uint64(ord-t.lastOrd)<<1|1)
		m.writeUvarint(t, uint64(pos))
		t.lastOrd, t.lastPos = ord, pos
		t.df++
		return
	}
	m.writeUvarint(t, uint64(pos-t.lastPos)<<1)
	t.lastPos = pos
}

// addDoc adds a document's metadata and returns its ordinal.
func (m *memTable) addDoc(d *Doc) int32 {
	if m.ndocs%docChunk == 0 {
		m.docs = append(m.docs, asDocs(m.blk.get(docChunk*int(unsafe.Sizeof(docMeta{})))))
	}
	tool, ok := m.tools[d.Tool]
	if !ok {
		tool = uint32(len(m.toolv))
		m.tools[d.Tool] = tool
		m.toolv = append(m.toolv, d.Tool)
		m.toolsz += int64(len(d.Tool)) + 48
	}
	ord := m.ndocs
	m.ndocs++
	*m.doc(ord) = docMeta{id: d.ID, ref: d.Ref, time: d.Time, role: d.Role, tool: tool}
	return int32(ord)
}

// postingsReader walks a term's chain of slices.
type postingsReader struct {
	m        *memTable
	pos, end uint32
	stop     uint32
	level    uint8
}

func (m *memTable) postings(t *memTerm) postingsReader {
	return postingsReader{m: m, pos: t.head, end: t.head + sliceSizes[0] - 4, stop: t.tail}
}

func (r *postingsReader) done() bool { return r.pos == r.stop }

func (r *postingsReader) byte() byte {
	if r.pos == r.end {
		next := binary.LittleEndian.Uint32(r.m.bytesAt(r.end, 4))
		if int(r.level) < len(sliceSizes)-1 {
			r.level++
		}
		r.pos, r.end = next, next+sliceSizes[r.level]-4
	}
	c := r.m.pages[r.pos/poolPage][r.pos%poolPage]
	r.pos++
	return c
}

func (r *postingsReader) uvarint() uint64 {
	// A uvarint the writer wrote at once (writeUvarint) is in one slice;
	// when five bytes are left before the slice's end, decode in place.
	if r.end-r.pos >= 5 {
		v, n := binary.Uvarint(r.m.pages[r.pos/poolPage][r.pos%poolPage:][:5])
		if n > 0 {
			r.pos += uint32(n)
			return v
		}
	}
	var v uint64
	for s := uint(0); ; s += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v
		}
	}
}

// sortedTerms returns the term numbers in the order of their bytes.
// The terms are sorted by their first 8 bytes as a number, and by all
// of them only where those are equal (terms hold no NUL bytes, so the
// zero padding of a short term sorts as its end).
func (m *memTable) sortedTerms() []int32 {
	type keyed struct {
		key uint64
		n   int32
	}
	ks := make([]keyed, m.nterms)
	for i := range ks {
		t := m.term(i)
		var k [8]byte
		copy(k[:], t.short[:min(8, int(t.textLen))])
		ks[i] = keyed{binary.BigEndian.Uint64(k[:]), int32(i)}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return bytes.Compare(m.termText(m.term(int(a.n))), m.termText(m.term(int(b.n))))
	})
	order := make([]int32, len(ks))
	for i, k := range ks {
		order[i] = k.n
	}
	return order
}

var zeroKey [shortLen]byte

// pendingTok is a term of the text addText is adding: its bytes in the
// scratch buffer, its key and hash.
type pendingTok struct {
	off, n uint32
	k      termKey
	h      uint32
}

// textScratch is addText's buffers, kept by the caller between texts.
type textScratch struct {
	toks  []pendingTok
	bytes []byte
	tok   [MaxTermLen + 4]byte
	sink  uint64 // the touched slots, summed: kept, so that they are read
}

// prefetchAhead is how many terms ahead of the one looked up addText
// touches a slot: the lookups are mostly cache misses, and touching the
// slots of later terms first lets the processor wait for several misses
// at once instead of one after another.
const prefetchAhead = 8

// addText adds the occurrences of text's terms to document ord and
// returns how many there are. The terms are found first, then looked up
// with the slots of those prefetchAhead later touched ahead.
func (m *memTable) addText(text string, ord int32, sc *textScratch) uint32 {
	toks, buf := sc.toks[:0], sc.bytes[:0]
	tokenize(text, sc.tok[:0], func(t []byte) {
		off := len(buf)
		buf = append(buf, t...)
		toks = append(toks, pendingTok{off: uint32(off), n: uint32(len(t))})
	})
	// Room after the last term, so that keyOf loads its words in place.
	buf = append(buf, zeroKey[:]...)
	for i := range toks {
		t := &toks[i]
		b := buf[t.off : t.off+t.n : t.off+t.n+shortLen]
		t.k = keyOf(b)
		t.h = hashKeyed(b[:t.n], t.k)
	}
	var sink uint64
	for i := range toks {
		if m.needsGrow() {
			m.grow()
		}
		if j := i + prefetchAhead; j < len(toks) {
			sink += m.slots[toks[j].h&m.mask]
		}
		t := &toks[i]
		m.addOccurrence(m.lookupHashed(buf[t.off:t.off+t.n:t.off+t.n+shortLen], t.k, t.h), ord, uint32(i))
	}
	sc.sink += sink
	sc.toks, sc.bytes = toks, buf
	return uint32(len(toks))
}
