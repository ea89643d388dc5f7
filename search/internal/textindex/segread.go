package textindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/sessctl/sessctl/layout/vfs"
)

// segment is an open segment file.
type segment struct {
	name  string // base name, as the manifest lists it
	path  string
	f     vfs.File
	size  int64
	sum   uint32 // the footer's checksum
	foot  footer
	index []byte // the index region
	nblk  int
	tools []string

	mu       sync.Mutex
	refs     int
	obsolete bool
	fsys     vfs.FS
}

// openSegment opens a segment and checks that it is the one the
// manifest names (size and footer checksum) and that its footer, index
// and tool table are sound.
func openSegment(fsys vfs.FS, dir string, m segInfo) (*segment, error) {
	path := filepath.Join(dir, m.name)
	f, err := fsys.OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, corruptf("segment %s is missing", path)
		}
		return nil, fmt.Errorf("open segment %s: %w", path, err)
	}
	s, err := loadSegment(f, path, m)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	s.name, s.fsys = m.name, fsys
	return s, nil
}

func loadSegment(f vfs.File, path string, m segInfo) (*segment, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat segment %s: %w", path, err)
	}
	if st.Size() != m.size || m.size < headerSize+footerSize {
		return nil, corruptf("segment %s is %d bytes, the manifest says %d", path, st.Size(), m.size)
	}
	var h [headerSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("read segment %s: %w", path, err)
	}
	if string(h[:8]) != segMagic || binary.LittleEndian.Uint32(h[8:]) != pageSize || binary.LittleEndian.Uint32(h[12:]) != 0 {
		return nil, corruptf("segment %s has no segment header", path)
	}
	fb := make([]byte, footerSize)
	if _, err := f.ReadAt(fb, m.size-footerSize); err != nil {
		return nil, fmt.Errorf("read segment %s: %w", path, err)
	}
	foot, sum, err := decodeFooter(fb)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	if sum != m.sum || segmentSize(foot.logical) != m.size || foot.ndocs != m.docs || foot.minID != m.minID || foot.maxID != m.maxID {
		return nil, corruptf("segment %s is not the one the manifest names", path)
	}
	s := &segment{path: path, f: f, size: m.size, sum: sum, foot: foot}
	pr := s.reader()
	defer pr.put()
	idx, err := pr.read(foot.index.off, foot.index.len)
	if err != nil {
		return nil, err
	}
	s.index = bytes.Clone(idx)
	if len(s.index) < 4 {
		return nil, corruptf("segment %s: short dictionary index", path)
	}
	s.nblk = int(binary.LittleEndian.Uint32(s.index))
	keysAt := 4 + 4*(s.nblk+1) + 8*(s.nblk+1)
	if s.nblk < 0 || keysAt > len(s.index) || int(s.keyOff(s.nblk)) != len(s.index)-keysAt ||
		int64(s.blockOff(s.nblk)) != foot.dict.len {
		return nil, corruptf("segment %s: dictionary index does not add up", path)
	}
	for i := range s.nblk {
		if s.keyOff(i) > s.keyOff(i+1) || s.blockOff(i) >= s.blockOff(i+1) {
			return nil, corruptf("segment %s: dictionary index out of order", path)
		}
	}
	tb, err := pr.read(foot.tools.off, foot.tools.len)
	if err != nil {
		return nil, err
	}
	d := decoder{b: tb}
	if len(tb) < 4 {
		return nil, corruptf("segment %s: short tool table", path)
	}
	n := int(binary.LittleEndian.Uint32(tb))
	d.b = tb[4:]
	for range n {
		l := d.uvarint()
		s.tools = append(s.tools, string(d.bytes(int(l))))
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, corruptf("segment %s: bad tool table", path)
	}
	return s, nil
}

func (s *segment) reader() *pageReader { return newPageReader(s.f, s.path, s.foot.logical) }

func (s *segment) keyOff(i int) uint32 { return binary.LittleEndian.Uint32(s.index[4+4*i:]) }

func (s *segment) blockOff(i int) uint64 {
	return binary.LittleEndian.Uint64(s.index[4+4*(s.nblk+1)+8*i:])
}

func (s *segment) key(i int) []byte {
	base := 4 + 4*(s.nblk+1) + 8*(s.nblk+1)
	return s.index[base+int(s.keyOff(i)) : base+int(s.keyOff(i+1))]
}

// findBlock returns the last block whose first term is <= term, or -1.
func (s *segment) findBlock(term []byte) int {
	return sort.Search(s.nblk, func(i int) bool { return bytes.Compare(s.key(i), term) > 0 }) - 1
}

// acquire takes a reference for a reader; release gives it back, closing
// (and removing, once replaced by a merge) the file after the last one.
func (s *segment) acquire() {
	s.mu.Lock()
	s.refs++
	s.mu.Unlock()
}

func (s *segment) release() {
	s.mu.Lock()
	s.refs--
	done := s.refs == 0
	obsolete := s.obsolete
	s.mu.Unlock()
	if done {
		_ = s.f.Close()
		if obsolete {
			_ = s.fsys.Remove(s.path)
		}
	}
}

// decoder reads uvarints and bytes, noting when they run out.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		if d.err == nil {
			d.err = io.ErrUnexpectedEOF
		}
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n int) []byte {
	if n < 0 || n > len(d.b) {
		if d.err == nil {
			d.err = io.ErrUnexpectedEOF
		}
		d.b = nil
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

// dictCursor walks the dictionary's terms in order from a block on.
type dictCursor struct {
	s    *segment
	pr   *pageReader
	blk  int
	d    decoder
	buf  []byte // the block d decodes, the cursor's own
	left int
	off  int64
	term []byte
	ti   termInfo
	err  error
}

func (s *segment) cursor(pr *pageReader, blk int) *dictCursor {
	return &dictCursor{s: s, pr: pr, blk: blk - 1}
}

// next moves to the next term; false at the end or on an error (err).
func (c *dictCursor) next() bool {
	if c.err != nil {
		return false
	}
	for c.left == 0 {
		c.blk++
		if c.blk >= c.s.nblk {
			return false
		}
		off, end := int64(c.s.blockOff(c.blk)), int64(c.s.blockOff(c.blk+1))
		// Copied out of the reader's pages (into a buffer the cursor
		// keeps), so that the reader serves other reads meanwhile and a
		// block across two pages needs no buffer of both.
		b, err := c.pr.readCopy(c.buf[:0], c.s.foot.dict.off+off, end-off)
		if err != nil {
			c.err = err
			return false
		}
		c.buf = b
		c.d = decoder{b: b}
		c.left = int(c.d.uvarint())
		c.off = int64(c.d.uvarint())
		c.term = c.term[:0]
		if c.d.err != nil || c.left <= 0 {
			c.err = corruptf("%s: bad dictionary block %d", c.s.path, c.blk)
			return false
		}
	}
	shared := int(c.d.uvarint())
	suffix := c.d.bytes(int(c.d.uvarint()))
	if shared > len(c.term) {
		c.err = corruptf("%s: bad dictionary block %d", c.s.path, c.blk)
		return false
	}
	c.term = append(c.term[:shared], suffix...)
	c.ti = termInfo{df: int64(c.d.uvarint()), off: c.off}
	c.ti.len = int64(c.d.uvarint())
	c.ti.skipLen = int64(c.d.uvarint())
	c.off += c.ti.len
	c.left--
	if c.d.err != nil || c.left == 0 && len(c.d.b) != 0 || c.ti.df <= 0 || c.ti.skipLen > c.ti.len ||
		c.ti.off+c.ti.len > c.s.foot.post.len {
		c.err = corruptf("%s: bad dictionary block %d", c.s.path, c.blk)
		return false
	}
	return true
}

// lookup finds a term's postings.
func (s *segment) lookup(pr *pageReader, term []byte) (termInfo, bool, error) {
	b := s.findBlock(term)
	if b < 0 {
		return termInfo{}, false, nil
	}
	c := s.cursor(pr, b)
	for c.next() {
		switch k := bytes.Compare(c.term, term); {
		case k == 0:
			return c.ti, true, nil
		case k > 0:
			return termInfo{}, false, nil
		}
		if c.left == 0 {
			break // the next block starts after term
		}
	}
	return termInfo{}, false, c.err
}

// readDoc returns the metadata of the document at ordinal ord.
func (s *segment) readDoc(pr *pageReader, ord int32) (docMeta, error) {
	if ord < 0 || int64(ord) >= s.foot.ndocs {
		return docMeta{}, corruptf("%s: document %d out of range", s.path, ord)
	}
	b, err := pr.read(s.foot.docs.off+int64(ord)*docRecSize, docRecSize)
	if err != nil {
		return docMeta{}, err
	}
	d := decodeDocRecord(b)
	if int(d.tool) >= len(s.tools) {
		return d, corruptf("%s: document %d names tool %d of %d", s.path, ord, d.tool, len(s.tools))
	}
	return d, nil
}

// Verify reads every page of every segment of the index and checks it,
// and walks every dictionary block: an error matching ErrCorrupt says
// the index must be built again.
func (ix *Index) Verify(ctx context.Context) error {
	segs, err := ix.snapshot()
	if err != nil {
		return err
	}
	defer releaseAll(segs)
	for _, s := range segs {
		pr := s.reader()
		for p := int64(0); p*pageSize < s.foot.logical; p++ {
			if p%256 == 0 {
				if err := ctx.Err(); err != nil {
					pr.put()
					return err
				}
			}
			if _, err := pr.page(p); err != nil {
				pr.put()
				return err
			}
		}
		c := s.cursor(pr, 0)
		var n int64
		for c.next() {
			n++
		}
		pr.put()
		if c.err != nil {
			return c.err
		}
		if n != s.foot.nterms {
			return corruptf("%s: %d terms, the footer says %d", s.path, n, s.foot.nterms)
		}
	}
	return nil
}
