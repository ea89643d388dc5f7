package textindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// ErrCorrupt is matched (errors.Is) by the error of every call that finds
// a segment or the manifest damaged or doubtful: a checksum that does not
// match, a size or structure that does not add up, a segment that is not
// the one the manifest names. The index is never the source of truth:
// the caller answers it by deleting the index and building it again.
var ErrCorrupt = errors.New("text index is damaged")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func corruptf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, a...)...)
}

// Segment files are a header, then the logical bytes of the segment cut
// into pages of pageSize bytes, each followed by its CRC32C (the last
// page may be short), then the footer.
const (
	pageSize   = 32 << 10
	headerSize = 16
	segMagic   = "TIXSEG\x00\x01"
)

// physOff returns where logical page p starts in the file.
func physOff(p int64) int64 { return headerSize + p*(pageSize+4) }

// pageWriter writes logical bytes as checksummed pages.
type pageWriter struct {
	w    io.Writer
	page []byte
	n    int64 // logical bytes written
	err  error
}

func newPageWriter(w io.Writer) *pageWriter {
	return &pageWriter{w: w, page: make([]byte, 0, pageSize+4)}
}

func (pw *pageWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 && pw.err == nil {
		k := min(len(p), pageSize-len(pw.page))
		pw.page = append(pw.page, p[:k]...)
		p = p[k:]
		pw.n += int64(k)
		if len(pw.page) == pageSize {
			pw.flushPage()
		}
	}
	if pw.err != nil {
		return 0, pw.err
	}
	return total, nil
}

func (pw *pageWriter) flushPage() {
	if len(pw.page) == 0 || pw.err != nil {
		return
	}
	pw.page = binary.LittleEndian.AppendUint32(pw.page, crc32.Checksum(pw.page, castagnoli))
	_, pw.err = pw.w.Write(pw.page)
	pw.page = pw.page[:0]
}

// close writes the last, short page.
func (pw *pageWriter) close() error {
	pw.flushPage()
	return pw.err
}

// pageReader reads logical bytes of a segment file, checking each page's
// checksum. It keeps the pages it read last (a query reads few, a merge
// reads sequentially).
type pageReader struct {
	r       io.ReaderAt
	name    string
	logical int64
	cache   [4]cachedPage
	slots   int // of cache used: 0 means all (a merge's readers, one each, read on)
	next    int
	buf     []byte
}

type cachedPage struct {
	p    int64
	data []byte
}

// readers keeps page readers (and their 128 KiB of page buffers) for
// the next query.
var readers = sync.Pool{New: func() any { return new(pageReader) }}

func newPageReader(r io.ReaderAt, name string, logical int64) *pageReader {
	pr := readers.Get().(*pageReader)
	pr.r, pr.name, pr.logical = r, name, logical
	for i := range pr.cache {
		pr.cache[i].p = -1
	}
	return pr
}

// sequential makes pr a reader that reads on, as a merge's are: it keeps
// one page, not a query's four, and lets go of the buffers a reader from
// the pool may hold (a merge of many segments holds a reader of each).
func (pr *pageReader) sequential() *pageReader {
	pr.slots = 1
	for i := 1; i < len(pr.cache); i++ {
		pr.cache[i] = cachedPage{p: -1}
	}
	pr.buf = nil
	return pr
}

// put gives the reader back to the pool; it must not be used after.
func (pr *pageReader) put() {
	pr.r, pr.slots = nil, 0
	if cap(pr.buf) > 1<<20 {
		pr.buf = nil
	}
	readers.Put(pr)
}

// page returns the payload of logical page p, checked.
func (pr *pageReader) page(p int64) ([]byte, error) {
	cache := pr.cache[:]
	if pr.slots > 0 {
		cache = cache[:pr.slots]
	}
	n := min(int64(pageSize), pr.logical-p*pageSize)
	for i := range cache {
		if cache[i].p == p {
			return cache[i].data[:n], nil
		}
	}
	if n <= 0 {
		return nil, corruptf("%s: read past the end of the segment", pr.name)
	}
	c := &cache[pr.next%len(cache)]
	pr.next = (pr.next + 1) % len(cache)
	if cap(c.data) < pageSize+4 {
		c.data = make([]byte, pageSize+4)
	}
	buf := c.data[:n+4]
	c.p = -1
	if _, err := pr.r.ReadAt(buf, physOff(p)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, corruptf("%s: page %d is cut short", pr.name, p)
		}
		return nil, fmt.Errorf("read %s: %w", pr.name, err)
	}
	if crc32.Checksum(buf[:n], castagnoli) != binary.LittleEndian.Uint32(buf[n:]) {
		return nil, corruptf("%s: checksum mismatch in page %d", pr.name, p)
	}
	c.p, c.data = p, buf[:cap(buf)]
	return buf[:n], nil
}

// readCopy appends n logical bytes at off to dst[:0] and returns it,
// reading them page by page through the page cache.
func (pr *pageReader) readCopy(dst []byte, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > pr.logical {
		return nil, corruptf("%s: range %d+%d is outside the segment (%d bytes)", pr.name, off, n, pr.logical)
	}
	dst = dst[:0]
	for n > 0 {
		p := off / pageSize
		pg, err := pr.page(p)
		if err != nil {
			return nil, err
		}
		s := off - p*pageSize
		k := min(n, int64(len(pg))-s)
		dst = append(dst, pg[s:s+k]...)
		off, n = off+k, n-k
	}
	return dst, nil
}

// read returns n logical bytes at off. The slice is valid until the next
// call. Reads of more than one page are done with one ReadAt.
func (pr *pageReader) read(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > pr.logical {
		return nil, corruptf("%s: range %d+%d is outside the segment (%d bytes)", pr.name, off, n, pr.logical)
	}
	if n == 0 {
		return nil, nil
	}
	p0, p1 := off/pageSize, (off+n-1)/pageSize
	if p0 == p1 {
		pg, err := pr.page(p0)
		if err != nil {
			return nil, err
		}
		s := off - p0*pageSize
		return pg[s : s+n], nil
	}
	// Several pages: read them at once, check each, keep the payload.
	end := min(pr.logical, (p1+1)*pageSize)
	phys := physOff(p1) + (end - p1*pageSize) + 4 - physOff(p0)
	if int64(cap(pr.buf)) < phys {
		pr.buf = make([]byte, phys)
	}
	raw := pr.buf[:phys]
	if _, err := pr.r.ReadAt(raw, physOff(p0)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, corruptf("%s: pages %d-%d are cut short", pr.name, p0, p1)
		}
		return nil, fmt.Errorf("read %s: %w", pr.name, err)
	}
	out := raw[:0]
	for p := p0; p <= p1; p++ {
		k := min(int64(pageSize), pr.logical-p*pageSize)
		pg := raw[(p-p0)*(pageSize+4):][:k+4]
		if crc32.Checksum(pg[:k], castagnoli) != binary.LittleEndian.Uint32(pg[k:]) {
			return nil, corruptf("%s: checksum mismatch in page %d", pr.name, p)
		}
		out = append(out, pg[:k]...) // moves down in place: out never overtakes pg
	}
	s := off - p0*pageSize
	return out[s : s+n], nil
}
