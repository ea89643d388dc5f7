package textindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/sessctl/sessctl/layout/vfs"
)

// The logical bytes of a segment are five regions, in this order:
//
//   - docs: one docRecord (docRecSize bytes) per document, by ordinal;
//   - postings: each term's postings (see postingsWriter), in term order;
//   - dict: the term dictionary in blocks (see dictWriter);
//   - index: the first term and offset of each dictionary block;
//   - tools: the tool names the documents refer to.
//
// The footer (footerSize bytes, after the last page) says where each
// region is and ends with its own CRC32C.
const (
	docRecSize   = 8 + 8 + 8 + 4 + 4 + 1
	footerSize   = 8 + 4 + 4 + 8*5 + 8*10 + 4
	footMagic    = "TIXFOOT1"
	formatVer    = 3   // 3: block sizes in the skip table; 2 and 1 (uvarints) are refused
	postingBlock = 128 // documents per postings block
	dictBlock    = 4 << 10
	dictTerms    = 128
)

type region struct{ off, len int64 }

type footer struct {
	logical          int64
	ndocs, nterms    int64
	minID, maxID     uint64
	docs, post, dict region
	index, tools     region
}

func (f *footer) encode() []byte {
	b := make([]byte, 0, footerSize)
	b = append(b, footMagic...)
	b = binary.LittleEndian.AppendUint32(b, formatVer)
	b = binary.LittleEndian.AppendUint32(b, pageSize)
	for _, v := range []uint64{uint64(f.logical), uint64(f.ndocs), uint64(f.nterms), f.minID, f.maxID,
		uint64(f.docs.off), uint64(f.docs.len), uint64(f.post.off), uint64(f.post.len),
		uint64(f.dict.off), uint64(f.dict.len), uint64(f.index.off), uint64(f.index.len),
		uint64(f.tools.off), uint64(f.tools.len)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return binary.LittleEndian.AppendUint32(b, crc32c(b))
}

func decodeFooter(b []byte) (footer, uint32, error) {
	var f footer
	if len(b) != footerSize || string(b[:8]) != footMagic {
		return f, 0, corruptf("no segment footer")
	}
	sum := binary.LittleEndian.Uint32(b[footerSize-4:])
	if crc32c(b[:footerSize-4]) != sum {
		return f, 0, corruptf("footer checksum mismatch")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVer {
		return f, 0, corruptf("segment format %d, want %d", v, formatVer)
	}
	if ps := binary.LittleEndian.Uint32(b[12:]); ps != pageSize {
		return f, 0, corruptf("page size %d, want %d", ps, pageSize)
	}
	u := func(i int) int64 { return int64(binary.LittleEndian.Uint64(b[16+8*i:])) }
	f.logical, f.ndocs, f.nterms = u(0), u(1), u(2)
	f.minID, f.maxID = uint64(u(3)), uint64(u(4))
	f.docs, f.post, f.dict = region{u(5), u(6)}, region{u(7), u(8)}, region{u(9), u(10)}
	f.index, f.tools = region{u(11), u(12)}, region{u(13), u(14)}
	end := int64(0)
	for _, r := range []region{f.docs, f.post, f.dict, f.index, f.tools} {
		if r.off != end || r.len < 0 {
			return f, 0, corruptf("footer regions do not add up")
		}
		end += r.len
	}
	if end != f.logical || f.docs.len != f.ndocs*docRecSize || f.ndocs < 0 {
		return f, 0, corruptf("footer sizes do not add up")
	}
	return f, sum, nil
}

func crc32c(b []byte) uint32 {
	return crc32.Checksum(b, castagnoli)
}

// segmentSize returns the file size of a segment of logical bytes.
func segmentSize(logical int64) int64 {
	pages := (logical + pageSize - 1) / pageSize
	return headerSize + logical + 4*pages + footerSize
}

// segWriter writes one segment file under a temporary name.
type segWriter struct {
	fsys vfs.FS
	path string // final name
	tmp  string
	f    vfs.File
	bw   *bufio.Writer
	pw   *pageWriter
	foot footer
}

func createSegment(fsys vfs.FS, path string) (*segWriter, error) {
	tmp := vfs.TempName(path)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return nil, fmt.Errorf("create segment %s: %w", path, err)
	}
	w := &segWriter{fsys: fsys, path: path, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	var h [headerSize]byte
	copy(h[:], segMagic)
	binary.LittleEndian.PutUint32(h[8:], pageSize)
	if _, err := w.bw.Write(h[:]); err != nil {
		w.abort()
		return nil, fmt.Errorf("write segment %s: %w", tmp, err)
	}
	w.pw = newPageWriter(w.bw)
	return w, nil
}

func (w *segWriter) abort() {
	_ = w.f.Close()
	_ = w.fsys.Remove(w.tmp)
}

// finish writes the footer, syncs the file and renames it to its name.
// It returns the file's size and the footer's checksum.
func (w *segWriter) finish() (int64, uint32, error) {
	w.foot.logical = w.pw.n
	if err := w.pw.close(); err != nil {
		w.abort()
		return 0, 0, fmt.Errorf("write segment %s: %w", w.tmp, err)
	}
	fb := w.foot.encode()
	if _, err := w.bw.Write(fb); err != nil {
		w.abort()
		return 0, 0, fmt.Errorf("write segment %s: %w", w.tmp, err)
	}
	if err := w.bw.Flush(); err != nil {
		w.abort()
		return 0, 0, fmt.Errorf("write segment %s: %w", w.tmp, err)
	}
	if err := w.f.Sync(); err != nil {
		w.abort()
		return 0, 0, fmt.Errorf("sync segment %s: %w", w.tmp, err)
	}
	if err := w.f.Close(); err != nil {
		_ = w.fsys.Remove(w.tmp)
		return 0, 0, fmt.Errorf("close segment %s: %w", w.tmp, err)
	}
	if err := w.fsys.Rename(w.tmp, w.path); err != nil {
		_ = w.fsys.Remove(w.tmp)
		return 0, 0, fmt.Errorf("rename segment %s: %w", w.tmp, err)
	}
	return segmentSize(w.foot.logical), binary.LittleEndian.Uint32(fb[footerSize-4:]), nil
}

// beginRegion marks the start of the next region.
func (w *segWriter) beginRegion() int64 { return w.pw.n }

func (w *segWriter) endRegion(start int64) region { return region{start, w.pw.n - start} }

func appendDocRecord(b []byte, d *docMeta) []byte {
	b = binary.LittleEndian.AppendUint64(b, d.id)
	b = binary.LittleEndian.AppendUint64(b, d.ref)
	b = binary.LittleEndian.AppendUint64(b, uint64(d.time))
	b = binary.LittleEndian.AppendUint32(b, d.tool)
	b = binary.LittleEndian.AppendUint32(b, d.tokens)
	return append(b, d.role)
}

func decodeDocRecord(b []byte) docMeta {
	return docMeta{
		id: binary.LittleEndian.Uint64(b), ref: binary.LittleEndian.Uint64(b[8:]),
		time: int64(binary.LittleEndian.Uint64(b[16:])), tool: binary.LittleEndian.Uint32(b[24:]),
		tokens: binary.LittleEndian.Uint32(b[28:]), role: b[32],
	}
}

// postingsWriter writes the postings of one term after another into the
// postings region. A term's postings are its documents from the newest
// (highest ordinal) down, in blocks of up to postingBlock documents. A block
// is the ordinal of its first document (a uvarint), then a bit stream
// (see bitWriter) of four runs of Rice codes, each with its own
// parameter: for each later document the difference from the one before
// minus one (no run when the block has one document); each document's
// frequency minus one; each document's first position; and the
// differences between each document's later positions minus one (no run
// when there are none). The positions are a stream of their own after
// the documents and frequencies, so a search that needs no positions
// decodes none, and each run adapts to its values (first positions are
// spread over the document, later gaps are small). A document where
// the term occurs once keeps its position too: a phrase needs the
// position of each of its terms, and the index keeps no text to check a
// phrase against. A term with more than one block has a skip table
// after its blocks: the number of blocks, then for each its first
// (highest) ordinal (the first as it is, the others as differences), its
// length in bytes and its number of documents. Blocks hold postingBlock
// documents but where a merge copied a full block of an input as it is
// (see addRaw): the documents before it are then a shorter block.
type postingsWriter struct {
	w       io.Writer
	start   int64 // region-relative offset of the term's postings
	n       int64 // bytes written in the region
	block   []byte
	ords    []int32
	freqs   []uint32
	pos     []uint32 // the block's positions, document after document
	vals    []uint32
	bw      bitWriter
	skips   []byte
	nblocks int
	lastMax int32
	df      int64
}

type termInfo struct {
	df      int64
	off     int64 // region-relative
	len     int64
	skipLen int64
}

// add adds a document with its positions (ascending).
func (p *postingsWriter) add(ord int32, pos []uint32) error {
	if len(p.ords) == postingBlock {
		if err := p.flushBlock(); err != nil {
			return err
		}
	}
	p.ords = append(p.ords, ord)
	p.freqs = append(p.freqs, uint32(len(pos)))
	p.pos = append(p.pos, pos...)
	p.df++
	return nil
}

// encodeBlock encodes the block's documents into p.block.
func (p *postingsWriter) encodeBlock() {
	p.block = binary.AppendUvarint(p.block[:0], uint64(p.ords[0]))
	p.bw.b = p.block
	v := p.vals[:0]
	for i := 1; i < len(p.ords); i++ {
		v = append(v, uint32(p.ords[i-1]-p.ords[i]-1))
	}
	if len(v) > 0 {
		p.bw.run(v)
	}
	v = v[:0]
	for _, f := range p.freqs {
		v = append(v, f-1)
	}
	p.bw.run(v)
	v = v[:0]
	at := 0
	for _, f := range p.freqs {
		v = append(v, p.pos[at])
		at += int(f)
	}
	p.bw.run(v)
	v = v[:0]
	at = 0
	for _, f := range p.freqs {
		for j := at + 1; j < at+int(f); j++ {
			v = append(v, p.pos[j]-p.pos[j-1]-1)
		}
		at += int(f)
	}
	if len(v) > 0 {
		p.bw.run(v)
	}
	p.block = p.bw.flush()
	p.bw.b = nil
	p.vals = v
}

func (p *postingsWriter) flushBlock() error {
	first := p.ords[0]
	p.encodeBlock()
	if p.nblocks == 0 {
		p.skips = binary.AppendUvarint(p.skips, uint64(first))
	} else {
		p.skips = binary.AppendUvarint(p.skips, uint64(p.lastMax-first))
	}
	p.skips = binary.AppendUvarint(p.skips, uint64(len(p.block)))
	p.skips = binary.AppendUvarint(p.skips, uint64(len(p.ords)))
	p.lastMax = first
	p.nblocks++
	if _, err := p.w.Write(p.block); err != nil {
		return err
	}
	p.n += int64(len(p.block))
	p.ords, p.freqs, p.pos = p.ords[:0], p.freqs[:0], p.pos[:0]
	return nil
}

// addRaw adds a full block (postingBlock documents) of another segment
// as it is: its first ordinal, now first, and the bit stream after it,
// which holds only differences and so is the same in any segment. The
// documents added before it that do not fill a block become a shorter
// block of their own. first must be below the documents added before.
func (p *postingsWriter) addRaw(first int32, bits []byte) error {
	if len(p.ords) > 0 {
		if err := p.flushBlock(); err != nil {
			return err
		}
	}
	p.block = binary.AppendUvarint(p.block[:0], uint64(first))
	if p.nblocks == 0 {
		p.skips = binary.AppendUvarint(p.skips, uint64(first))
	} else {
		p.skips = binary.AppendUvarint(p.skips, uint64(p.lastMax-first))
	}
	p.skips = binary.AppendUvarint(p.skips, uint64(len(p.block)+len(bits)))
	p.skips = binary.AppendUvarint(p.skips, postingBlock)
	p.lastMax = first
	p.nblocks++
	p.df += postingBlock
	for _, b := range [][]byte{p.block, bits} {
		if _, err := p.w.Write(b); err != nil {
			return err
		}
		p.n += int64(len(b))
	}
	return nil
}

// end finishes the term's postings.
func (p *postingsWriter) end() (termInfo, error) {
	ti := termInfo{df: p.df, off: p.start}
	switch {
	case p.nblocks == 1 && len(p.ords) == 0:
		// One block copied as it is: a term of one block has no table.
	case p.nblocks == 0:
		p.encodeBlock()
		if _, err := p.w.Write(p.block); err != nil {
			return ti, err
		}
		p.n += int64(len(p.block))
	default:
		if len(p.ords) > 0 {
			if err := p.flushBlock(); err != nil {
				return ti, err
			}
		}
		tab := binary.AppendUvarint(nil, uint64(p.nblocks))
		tab = append(tab, p.skips...)
		if _, err := p.w.Write(tab); err != nil {
			return ti, err
		}
		p.n += int64(len(tab))
		ti.skipLen = int64(len(tab))
	}
	ti.len = p.n - p.start
	p.start = p.n
	p.ords, p.freqs, p.pos = p.ords[:0], p.freqs[:0], p.pos[:0]
	p.skips, p.nblocks, p.df = p.skips[:0], 0, 0
	return ti, nil
}

// dictWriter writes the dictionary: blocks of up to dictTerms terms and
// about dictBlock bytes. A block is the number of its terms and the
// postings offset of its first term, then for each term the length of
// the prefix it shares with the term before (0 for the first), the
// length and bytes of the rest, its document frequency, and the lengths
// of its postings and of their skip table, all uvarints. Offsets of
// later terms follow from the lengths. The index region lists each
// block's first term and offset: the number of blocks (uint32), the
// offsets of the keys in the key area (count+1 uint32s), the offsets of
// the blocks (count+1 uint64s, the last the dictionary's length), then
// the key area.
type dictWriter struct {
	out      *spill
	n        int64
	block    []byte
	nterms   int
	prevTerm []byte
	base     int64
	keys     []byte
	keyOffs  []uint32
	blkOffs  []uint64
	total    int64
}

func (d *dictWriter) add(term []byte, ti termInfo) error {
	if d.nterms == 0 {
		d.base = ti.off
		d.keyOffs = append(d.keyOffs, uint32(len(d.keys)))
		d.keys = append(d.keys, term...)
		d.blkOffs = append(d.blkOffs, uint64(d.n))
		d.prevTerm = d.prevTerm[:0]
	}
	shared := 0
	for shared < len(term) && shared < len(d.prevTerm) && term[shared] == d.prevTerm[shared] {
		shared++
	}
	d.block = binary.AppendUvarint(d.block, uint64(shared))
	d.block = binary.AppendUvarint(d.block, uint64(len(term)-shared))
	d.block = append(d.block, term[shared:]...)
	d.block = binary.AppendUvarint(d.block, uint64(ti.df))
	d.block = binary.AppendUvarint(d.block, uint64(ti.len))
	d.block = binary.AppendUvarint(d.block, uint64(ti.skipLen))
	d.prevTerm = append(d.prevTerm[:0], term...)
	d.nterms++
	d.total++
	if d.nterms >= dictTerms || len(d.block) >= dictBlock {
		return d.flush()
	}
	return nil
}

func (d *dictWriter) flush() error {
	if d.nterms == 0 {
		return nil
	}
	h := binary.AppendUvarint(nil, uint64(d.nterms))
	h = binary.AppendUvarint(h, uint64(d.base))
	if _, err := d.out.Write(h); err != nil {
		return err
	}
	if _, err := d.out.Write(d.block); err != nil {
		return err
	}
	d.n += int64(len(h) + len(d.block))
	d.block, d.nterms = d.block[:0], 0
	return nil
}

func (d *dictWriter) index() []byte {
	count := len(d.keyOffs)
	b := binary.LittleEndian.AppendUint32(nil, uint32(count))
	for _, o := range d.keyOffs {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(d.keys)))
	for _, o := range d.blkOffs {
		b = binary.LittleEndian.AppendUint64(b, o)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(d.n))
	return append(b, d.keys...)
}

func encodeTools(tools []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(tools)))
	for _, t := range tools {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	return b
}

// spill holds bytes in memory up to a limit, then in a temporary file.
type spill struct {
	fsys  vfs.FS
	path  string // the temporary file's name, once made
	limit int
	mem   bytes.Buffer
	f     vfs.File
	bw    *bufio.Writer
	n     int64
}

func (s *spill) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	if s.f == nil && s.mem.Len()+len(p) <= s.limit {
		return s.mem.Write(p)
	}
	if s.f == nil {
		f, err := s.fsys.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
		if err != nil {
			return 0, fmt.Errorf("create %s: %w", s.path, err)
		}
		s.f, s.bw = f, bufio.NewWriterSize(f, 256<<10)
		if _, err := s.bw.Write(s.mem.Bytes()); err != nil {
			return 0, err
		}
		s.mem = bytes.Buffer{}
	}
	return s.bw.Write(p)
}

// copyTo writes the bytes held to w.
func (s *spill) copyTo(w io.Writer) error {
	if s.f == nil {
		_, err := w.Write(s.mem.Bytes())
		return err
	}
	if err := s.bw.Flush(); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for off := int64(0); off < s.n; {
		k := min(int64(len(buf)), s.n-off)
		if _, err := s.f.ReadAt(buf[:k], off); err != nil {
			return fmt.Errorf("read %s: %w", s.path, err)
		}
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		off += k
	}
	return nil
}

func (s *spill) close() {
	if s.f != nil {
		_ = s.f.Close()
		_ = s.fsys.Remove(s.path)
		s.f = nil
	}
}
