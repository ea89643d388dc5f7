package textindex

import (
	"runtime"
	"sync"
	"unsafe"
)

// blocks hands out the pointer-free blocks of a Builder's tables (pool
// pages, chunks of terms and documents, hash slots) and takes them back
// when a table has been written out, for the next table. Where the
// platform allows, they are mapped outside the Go heap (mapMem): the
// tables are most of a build's memory, and on the heap the garbage
// collector lets the heap grow to twice what is live, so a build's peak
// would be about twice the tables. They are unmapped when the blocks and
// every table of them are garbage. A nil *blocks allocates on the heap.
type blocks struct {
	mu   sync.Mutex
	free map[int][][]byte // by size
	m    *mapped
}

// mapped is the memory mapped for a blocks, apart from it so that its
// cleanup can unmap it.
type mapped struct {
	mu    sync.Mutex
	slabs [][]byte
	left  []byte // of the last slab, not yet handed out
}

// slabSize is how much is mapped at once for blocks smaller than it.
const slabSize = 1 << 20

func newBlocks() *blocks {
	if !canMap {
		return nil
	}
	p := &blocks{free: map[int][][]byte{}, m: &mapped{}}
	runtime.AddCleanup(p, func(m *mapped) { m.unmap() }, p.m)
	return p
}

// get returns n zeroed bytes, 8-aligned.
func (p *blocks) get(n int) []byte {
	if p == nil {
		return make([]byte, n)
	}
	p.mu.Lock()
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		p.mu.Unlock()
		clear(b)
		return b
	}
	p.mu.Unlock()
	return p.m.alloc(n)
}

// put takes back a block get returned; it must not be used after.
func (p *blocks) put(b []byte) {
	if p == nil || b == nil {
		return
	}
	p.mu.Lock()
	p.free[len(b)] = append(p.free[len(b)], b)
	p.mu.Unlock()
}

// close unmaps every block, handed out or given back: none may be used
// after (get maps new ones).
func (p *blocks) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	clear(p.free)
	p.mu.Unlock()
	p.m.unmap()
}

func (m *mapped) alloc(n int) []byte {
	size := (n + 7) &^ 7
	m.mu.Lock()
	defer m.mu.Unlock()
	if size >= slabSize/4 {
		b := mapMem(size)
		if b == nil {
			return make([]byte, n)
		}
		m.slabs = append(m.slabs, b)
		return b[:n:n]
	}
	if len(m.left) < size {
		s := mapMem(slabSize)
		if s == nil {
			return make([]byte, n)
		}
		m.slabs = append(m.slabs, s)
		m.left = s
	}
	b := m.left[:n:n]
	m.left = m.left[size:]
	return b
}

func (m *mapped) unmap() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.slabs {
		unmapMem(s)
	}
	m.slabs, m.left = nil, nil
}

// asTerms, asDocs and asSlots view a block as the table's arrays (none
// holds a pointer, and a block is 8-aligned).
func asTerms(b []byte) []memTerm {
	return unsafe.Slice((*memTerm)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(memTerm{})))
}

func asDocs(b []byte) []docMeta {
	return unsafe.Slice((*docMeta)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(docMeta{})))
}

func asSlots(b []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

// bytesOf is the block an array of asTerms, asDocs or asSlots views.
func bytesOf[T any](s []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(z))
}
