package textindex

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Doc is a document to index: a piece of text and what the caller needs
// to show a hit (the index keeps it as Meta).
type Doc struct {
	// ID identifies the document; IDs must grow with time (each Add's
	// greater than any in the index), so that the newest hits, which a
	// search returns first, are the highest IDs.
	ID uint64
	// Text is indexed (see Tokenize) and not kept.
	Text string
	// Role is a small code of the caller's (package search: the kind of
	// text: user, assistant, thinking, tool result, ...).
	Role uint8
	// Tool is the tool of a tool call or result, "" for none.
	Tool string
	// Ref is the caller's reference to where the text is (a session and
	// file, an offset).
	Ref uint64
	// Time is the caller's time (package search: Unix milliseconds).
	Time int64
}

// DefaultBudget is BuildOptions.Budget's default, and MinBudget the
// smallest budget a Builder takes.
const (
	DefaultBudget = 64 << 20
	MinBudget     = 256 << 10
)

// BuildOptions configure a Builder.
type BuildOptions struct {
	// Budget bounds the memory of the in-memory tables, in bytes. A
	// Builder has two of Budget/2 each: one takes documents while the
	// other is written out as a segment by another goroutine (so a build
	// uses two CPUs). When the one that takes documents holds Budget/2
	// bytes or more after a document, it is handed over to be written
	// out, once the other is done. Together they may exceed Budget by
	// what one document adds. Writing a segment out takes transient
	// memory of about 20 bytes per term and the postings of one term.
	// Zero means DefaultBudget; the smallest is MinBudget.
	Budget int64
}

// Builder adds documents to an index in a streaming pass: documents go
// into an in-memory table, which is written out as a segment file each
// time it reaches its memory budget; Commit makes the segments part of
// the index. A Builder is not safe for concurrent use. After a failure
// to write a segment, every call but Abort returns that error.
type Builder struct {
	ix      *Index
	blk     *blocks
	budget  int64 // of each table: half the whole
	mem     *memTable
	out     *memTable  // the table being written out, or nil
	done    chan error // its result
	err     error      // a failure to write out a table: the Builder is done
	lastID  uint64
	started bool
	pending []segInfo
	scratch textScratch
	peak    int64
	onAdd   func(*Builder) // tests: called after each document
}

// NewBuilder returns a Builder that adds to the index.
func (ix *Index) NewBuilder(o BuildOptions) *Builder {
	b := o.Budget
	if b == 0 {
		b = DefaultBudget
	}
	b = max(b, MinBudget) / 2
	st := ix.Stats()
	blk := newBlocks()
	return &Builder{ix: ix, blk: blk, budget: b, mem: newMemTable(b, blk), lastID: st.MaxID, started: st.Docs > 0}
}

// MemBytes returns the bytes the in-memory tables hold now.
func (b *Builder) MemBytes() int64 {
	n := b.mem.memBytes()
	if b.out != nil {
		n += b.out.memBytes()
	}
	return n
}

// PeakMemBytes returns the most MemBytes has been.
func (b *Builder) PeakMemBytes() int64 { return b.peak }

// Add indexes a document. Its ID must be greater than every ID added
// before.
func (b *Builder) Add(d Doc) error {
	if b.err != nil {
		return b.err
	}
	if b.started && d.ID <= b.lastID {
		return fmt.Errorf("add document %d to text index: ids must grow (last %d)", d.ID, b.lastID)
	}
	// The table is less than half full of its planned slots here (full()
	// flushes it after a document); it grows to them as terms come, and
	// only a document with more new terms than 3/8 of them (megabytes of
	// distinct words) makes it grow beyond.
	m := b.mem
	ord := m.addDoc(&d)
	m.doc(int(ord)).tokens = m.addText(d.Text, ord, &b.scratch)
	b.started, b.lastID = true, d.ID
	b.peak = max(b.peak, b.MemBytes())
	if b.onAdd != nil {
		b.onAdd(b)
	}
	if m.memBytes() >= b.budget || m.full() {
		return b.handOver()
	}
	return nil
}

// wait waits for the table being written out, if any.
func (b *Builder) wait() error {
	if b.out == nil {
		return b.err
	}
	err := <-b.done
	b.out.release() // its blocks serve the next table
	b.out = nil
	if err != nil && b.err == nil {
		b.err = err
	}
	return b.err
}

// handOver has the table written out as a segment by another goroutine,
// once the one before is done, and starts a new table.
func (b *Builder) handOver() error {
	if err := b.wait(); err != nil {
		return err
	}
	if b.mem.ndocs == 0 {
		return nil
	}
	if err := vfs.MkdirAllSync(b.ix.fsys, b.ix.dir, vfs.DirMode); err != nil {
		return fmt.Errorf("create text index %s: %w", b.ix.dir, err)
	}
	name := b.ix.allocName()
	m := b.mem
	b.out, b.done = m, make(chan error, 1)
	b.mem = newMemTable(b.budget, b.blk)
	go func() {
		si, err := writeMemSegment(b.ix.fsys, filepath.Join(b.ix.dir, name), m)
		if err == nil {
			si.name = name
			b.pending = append(b.pending, si) // read only after wait
		}
		b.done <- err
	}()
	return nil
}

// Flush writes the in-memory tables out as segment files, which Commit
// will add to the index.
func (b *Builder) Flush() error {
	if err := b.handOver(); err != nil {
		return err
	}
	return b.wait()
}

// Commit flushes the table and adds every segment written since the
// last Commit to the index, with one atomic manifest write: after a
// crash the index has all of them or none.
func (b *Builder) Commit() error {
	if err := b.Flush(); err != nil {
		return err
	}
	if len(b.pending) == 0 {
		return nil
	}
	if err := b.ix.commit(b.pending, nil); err != nil {
		return err
	}
	b.pending = nil
	return nil
}

// Abort drops the documents added since the last Commit and removes the
// segment files written for them.
func (b *Builder) Abort() error {
	_ = b.wait()
	b.err = nil
	var errs []error
	for _, si := range b.pending {
		errs = append(errs, b.ix.fsys.Remove(filepath.Join(b.ix.dir, si.name)))
	}
	b.pending = nil
	b.mem.release()
	b.mem = newMemTable(b.budget, b.blk)
	return errors.Join(errs...)
}

// Close lets go of the Builder's memory at once, rather than when it is
// garbage: documents added since the last Commit are dropped (the
// segment files written for them stay until Abort or the index's next
// cleanup removes them). The Builder must not be used after, but for
// Close again.
func (b *Builder) Close() {
	_ = b.wait()
	b.mem.release()
	b.blk.close()
	b.err = errClosed
}

var errClosed = errors.New("text index builder is closed")

// grow doubles the hash table: while it is below its planned size, or
// for a document with more distinct terms than it was made for. The
// slots hold the terms' hashes, so the terms themselves are not read.
func (m *memTable) grow() {
	old := m.slots
	n := uint32(len(old)) * 2
	m.slots, m.mask = asSlots(m.blk.get(int(n)*8)), n-1
	defer m.blk.put(bytesOf(old))
	for _, s := range old {
		if s == 0 {
			continue
		}
		j := uint32(s>>32) & m.mask
		for m.slots[j] != 0 {
			j = (j + 1) & m.mask
		}
		m.slots[j] = s
	}
}

// writeMemSegment writes the table as a segment at path.
func writeMemSegment(fsys vfs.FS, path string, m *memTable) (segInfo, error) {
	w, err := createSegment(fsys, path)
	if err != nil {
		return segInfo{}, err
	}
	fail := func(err error) (segInfo, error) {
		w.abort()
		return segInfo{}, fmt.Errorf("write segment %s: %w", path, err)
	}
	// Documents.
	start := w.beginRegion()
	rec := make([]byte, 0, docRecSize*256)
	for i := range m.ndocs {
		rec = appendDocRecord(rec, m.doc(i))
		if len(rec) >= docRecSize*255 || i == m.ndocs-1 {
			if _, err := w.pw.Write(rec); err != nil {
				return fail(err)
			}
			rec = rec[:0]
		}
	}
	w.foot.docs = w.endRegion(start)
	w.foot.ndocs = int64(m.ndocs)
	w.foot.minID, w.foot.maxID = m.doc(0).id, m.doc(m.ndocs-1).id
	// Postings and dictionary.
	start = w.beginRegion()
	pw := &postingsWriter{w: w.pw}
	dw := &dictWriter{out: &spill{fsys: fsys, path: vfs.TempName(path + ".dict"), limit: 1 << 62}}
	defer dw.out.close()
	var ords []int32
	var posAt []int
	var pos []uint32
	for _, n := range m.sortedTerms() {
		t := m.term(int(n))
		ords, posAt, pos = ords[:0], posAt[:0], pos[:0]
		r := m.postings(t)
		var ord int32 = -1
		var p uint32
		for !r.done() {
			v := r.uvarint()
			if v&1 == 1 {
				ord += int32(v >> 1)
				p = uint32(r.uvarint())
				ords, posAt = append(ords, ord), append(posAt, len(pos))
			} else {
				p += uint32(v >> 1)
			}
			pos = append(pos, p)
		}
		posAt = append(posAt, len(pos))
		for i := len(ords) - 1; i >= 0; i-- {
			if err := pw.add(ords[i], pos[posAt[i]:posAt[i+1]]); err != nil {
				return fail(err)
			}
		}
		ti, err := pw.end()
		if err != nil {
			return fail(err)
		}
		if err := dw.add(m.termText(t), ti); err != nil {
			return fail(err)
		}
	}
	w.foot.post = w.endRegion(start)
	w.foot.nterms = int64(m.nterms)
	if err := w.finishDict(dw); err != nil {
		return fail(err)
	}
	start = w.beginRegion()
	if _, err := w.pw.Write(encodeTools(m.toolv)); err != nil {
		return fail(err)
	}
	w.foot.tools = w.endRegion(start)
	size, sum, err := w.finish()
	if err != nil {
		return segInfo{}, err
	}
	return segInfo{size: size, sum: sum, docs: w.foot.ndocs, minID: w.foot.minID, maxID: w.foot.maxID}, nil
}

// finishDict writes the dictionary and its index regions.
func (w *segWriter) finishDict(dw *dictWriter) error {
	if err := dw.flush(); err != nil {
		return err
	}
	start := w.beginRegion()
	if err := dw.out.copyTo(w.pw); err != nil {
		return err
	}
	w.foot.dict = w.endRegion(start)
	start = w.beginRegion()
	if _, err := w.pw.Write(dw.index()); err != nil {
		return err
	}
	w.foot.index = w.endRegion(start)
	return nil
}
