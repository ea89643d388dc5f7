package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/sessctl/sessctl/internal/cacheindex"
	"github.com/sessctl/sessctl/layout/vfs"
)

// ListTexts returns an iterator over infos, in their order, each given
// with its AllMessagesText: the texts of a listing, which are most of its
// bytes, one session at a time. A program that shows every text of a
// large store lists it with ListOptions.NoText, sorts or filters the
// infos as it likes, and takes the texts from here, holding one at a time
// instead of all of them (Store.List without NoText holds every text
// until the listing is sorted). The infos given are copies; infos is not
// changed. An info's text is dropped when the loop body returns (its
// AllMessagesText is "" from then on): the memory is reused for the next.
//
// A text comes from the list index's text file where its entry is still
// valid for the file as it was listed, otherwise from the session file
// (o.NoIndex: always from the file); the texts read from files are
// written to the index, as a listing that shows texts writes them.
// Options other than NoIndex are ignored.
//
// A file that changed after it was listed gives the text of what was
// listed when the listed state is still its start (pi only appends: the
// lines added since are left out, as they are out of the rest of the
// info); a file rewritten since is given as it is now, every field and
// the text read together, in the same place; a file that is no longer a
// session is left out, as listing leaves such files out; and a file that
// cannot be read any more (deleted, say) gives its error, and the
// iteration goes on. ctx done gives its error and ends the iteration.
func (st *Store) ListTexts(ctx context.Context, infos []Info, o ListOptions) iter.Seq2[*Info, error] {
	lo := st.listing(o).withCache()
	return func(yield func(*Info, error) bool) {
		t := newTextFetcher(lo, infos)
		defer t.abandon()
		t.start()
		for i := range infos {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			in, err := t.fetch(&infos[i])
			t.done(&infos[i])
			if in == nil && err == nil {
				continue // no longer a session
			}
			ok := yield(in, err)
			if in != nil {
				in.allTextJSON = nil // its buffer is reused
			}
			if !ok {
				return
			}
		}
	}
}

// maxOpenTexts is how many text index files a textFetcher keeps open
// (for reading, and as many for writing); with more directories than
// that it opens them for each use.
const maxOpenTexts = 64

// textFetcher gets the texts of listed infos one at a time (ListTexts).
type textFetcher struct {
	o        listing
	fsys     vfs.FS
	infos    []Info
	started  time.Time
	dirs     map[string]*textDir
	keepOpen bool
	line     []byte // the text index line read last
	reader   fileReader
	ahead    *readAhead // nil: every file is read when its turn comes
}

// fileReader reads texts from session files, with buffers kept from
// file to file.
type fileReader struct {
	buf []byte // the session file read last
	b   infoBuilder
}

// fileText is what fromFile gives.
type fileText struct {
	out   *Info
	cache bool
	err   error
}

// textDir is the text index of one directory of the listing.
type textDir struct {
	dir     string
	path    string // the text index
	members []int  // the infos of the directory
	left    int    // members not fetched yet
	scanned bool
	offs    map[string]textRef // nil when the index is missing or unusable
	rf      vfs.File           // the index open for reading, when kept open
	// The new text index, when the old one must be rewritten (entries
	// stale, missing, damaged or for files gone): written as the texts go
	// by, and renamed into place once the directory's last text has.
	dirty bool
	tmp   string
	wf    vfs.File
	werr  bool
}

// textRef is where one entry's line is in a text index file (without its
// newline).
type textRef struct {
	stamp
	off, n int64
}

func newTextFetcher(o listing, infos []Info) *textFetcher {
	t := &textFetcher{o: o, fsys: o.fs(), infos: infos, started: time.Now(), dirs: map[string]*textDir{}}
	if o.NoIndex {
		return t
	}
	for i := range infos {
		dir := filepath.Dir(infos[i].Path)
		d := t.dirs[dir]
		if d == nil {
			d = &textDir{dir: dir, path: listTextPath(o.CacheDir, dir)}
			t.dirs[dir] = d
		}
		d.members = append(d.members, i)
		d.left++
	}
	t.keepOpen = len(t.dirs) <= maxOpenTexts
	return t
}

// start scans the text indexes and starts reading ahead the files whose
// texts they do not hold, when there is more than one CPU.
func (t *textFetcher) start() {
	var jobs []int
	for i := range t.infos {
		in := &t.infos[i]
		d := t.dirs[filepath.Dir(in.Path)]
		if d != nil {
			t.scan(d)
			if ref, ok := d.offs[filepath.Base(in.Path)]; ok && ref.stamp == in.stamp {
				continue
			}
		}
		jobs = append(jobs, i)
	}
	if n := runtime.GOMAXPROCS(0); n > 1 && len(jobs) > 1 {
		t.ahead = &readAhead{t: t, jobs: jobs, pending: map[*Info]chan fileText{}, readers: make(chan *fileReader, n)}
		for range n {
			t.ahead.readers <- &fileReader{}
		}
	}
}

// readAhead reads the files of the texts to come on every CPU, in
// order, a few files or aheadBytes ahead of the one being taken, so
// that it holds a few texts at most.
type readAhead struct {
	t       *textFetcher
	jobs    []int // the infos whose texts come from their files, in order
	next    int   // the next job to start
	pending map[*Info]chan fileText
	bytes   int64            // the size of the files pending
	readers chan *fileReader // one for each CPU
}

// aheadBytes bounds the size of the files read ahead (but one, however
// large).
const aheadBytes = 64 << 20

// take returns the text of in read ahead; ok is false when it was not.
func (a *readAhead) take(in *Info) (r fileText, ok bool) {
	if a == nil {
		return r, false
	}
	a.fill()
	ch, ok := a.pending[in]
	if !ok {
		return r, false
	}
	delete(a.pending, in)
	r = <-ch
	a.bytes -= in.Size
	a.fill()
	return r, true
}

// fill starts reading the next files, up to twice as many as there are
// readers and aheadBytes.
func (a *readAhead) fill() {
	for a.next < len(a.jobs) && len(a.pending) < 2*cap(a.readers) {
		in := &a.t.infos[a.jobs[a.next]]
		if len(a.pending) > 0 && a.bytes+in.Size > aheadBytes {
			return
		}
		a.next++
		a.bytes += in.Size
		ch := make(chan fileText, 1)
		a.pending[in] = ch
		go func() {
			r := <-a.readers
			out, cache, err := a.t.fromFile(r, in)
			a.readers <- r
			ch <- fileText{out, cache, err}
		}()
	}
}

// fetch returns in with its text (or the file as it is now, see
// ListTexts); nil and no error when the file is no longer a session.
func (t *textFetcher) fetch(in *Info) (*Info, error) {
	d := t.dirs[filepath.Dir(in.Path)]
	name := filepath.Base(in.Path)
	if d != nil {
		t.scan(d)
		if ref, ok := d.offs[name]; ok && ref.stamp == in.stamp {
			if line, text, ok := t.readRef(d, name, ref); ok {
				if d.dirty {
					t.write(d, append(line, '\n'))
				}
				c := *in
				c.allTextJSON = text
				return &c, nil
			}
			// Changed under us (another listing replaced the index):
			// the file is read, and the index rewritten.
			t.makeDirty(d)
		}
	}
	var out *Info
	var cache bool
	var err error
	if r, ok := t.ahead.take(in); ok {
		out, cache, err = r.out, r.cache, r.err
	} else {
		out, cache, err = t.fromFile(&t.reader, in)
	}
	if cache && d != nil && d.dirty {
		t.write(d, encodeTextLine(nil, name, textEntry{in.stamp, out.allTextJSON}))
	}
	return out, err
}

// readRef reads and checks one line of d's text index.
func (t *textFetcher) readRef(d *textDir, name string, ref textRef) (line, text []byte, ok bool) {
	f := d.rf
	if f == nil {
		var err error
		if f, err = t.fsys.OpenFile(d.path, os.O_RDONLY|vfs.NoFollow, 0); err != nil {
			return nil, nil, false
		}
		defer f.Close()
	}
	if int64(cap(t.line)) < ref.n+1 {
		t.line = make([]byte, ref.n+1)
	}
	line = t.line[:ref.n]
	if _, err := f.ReadAt(line, ref.off); err != nil {
		return nil, nil, false
	}
	got, ent, ok := decodeTextLine(line)
	if !ok || got != name || ent.stamp != ref.stamp {
		return nil, nil, false
	}
	return line, ent.text, true
}

// done notes that in's text has gone by: after the last of its
// directory, the directory's new text index is put in place.
func (t *textFetcher) done(in *Info) {
	d := t.dirs[filepath.Dir(in.Path)]
	if d == nil {
		return
	}
	if d.left--; d.left > 0 {
		return
	}
	if d.rf != nil {
		d.rf.Close()
		d.rf = nil
	}
	d.offs = nil
	if !d.dirty || d.werr || d.tmp == "" {
		t.drop(d)
		return
	}
	if d.wf != nil {
		if err := d.wf.Close(); err != nil {
			d.werr = true
		}
		d.wf = nil
	}
	if !d.werr {
		if st, err := t.fsys.Lstat(d.path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			d.werr = true
		}
	}
	if d.werr || t.fsys.Rename(d.tmp, d.path) != nil {
		t.drop(d)
		return
	}
	d.tmp = ""
}

// abandon drops the new text indexes not completed (the iteration was
// left early) and closes what is open.
func (t *textFetcher) abandon() {
	for _, d := range t.dirs {
		if d.rf != nil {
			d.rf.Close()
			d.rf = nil
		}
		t.drop(d)
	}
}

// drop removes d's new text index, if any.
func (t *textFetcher) drop(d *textDir) {
	if d.wf != nil {
		d.wf.Close()
		d.wf = nil
	}
	if d.tmp != "" {
		_ = t.fsys.Remove(d.tmp)
		d.tmp = ""
	}
}

// makeDirty has d's text index rewritten after a line the scan found
// valid failed when read (the index was replaced meanwhile). The lines
// of the texts that went by before were not kept: when there were any,
// the index is left as it is, and the next listing finds it stale.
func (t *textFetcher) makeDirty(d *textDir) {
	if d.dirty {
		return
	}
	d.dirty = true
	if d.left < len(d.members) {
		d.werr = true
	}
}

// write adds a line to d's new text index, creating it with its header
// first. Best effort: a failure drops the new index.
func (t *textFetcher) write(d *textDir, line []byte) {
	if d.werr {
		return
	}
	if d.tmp == "" {
		if err := t.fsys.MkdirAll(filepath.Dir(d.path), vfs.DirMode); err != nil {
			d.werr = true
			return
		}
		tmp := vfs.TempName(d.path)
		f, err := t.fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
		if err != nil {
			d.werr = true
			return
		}
		d.tmp, d.wf = tmp, f
		if _, err := f.Write(append(textHeader(d.dir), '\n')); err != nil {
			d.werr = true
			return
		}
	}
	if d.wf == nil {
		f, err := t.fsys.OpenFile(d.tmp, os.O_WRONLY|os.O_APPEND|vfs.NoFollow, 0)
		if err != nil {
			d.werr = true
			return
		}
		d.wf = f
	}
	if _, err := d.wf.Write(line); err != nil {
		d.werr = true
	}
	if !t.keepOpen {
		if err := d.wf.Close(); err != nil {
			d.werr = true
		}
		d.wf = nil
	}
}

// fromFile reads in's text from its file; cache says the text is that of
// the file as listed, for the text index.
func (t *textFetcher) fromFile(r *fileReader, in *Info) (out *Info, cache bool, err error) {
	data, st, err := readPrefix(t.fsys, in.Path, in.Size, r.buf)
	r.buf = data
	if err != nil {
		return nil, false, err
	}
	now := cacheindex.StampOf(st)
	// The listed state, from the file's first in.Size bytes and the
	// modification time it was listed with.
	got, berr := r.b.build(in.Path, data, in.ModTime, in.Size, false)
	if berr == nil && (now == in.stamp || bytes.Equal(headJSON(got), headOf(in))) {
		c := *in
		c.allTextJSON = got.allTextJSON
		cache = now == in.stamp && !t.o.NoIndex && cacheindex.Cacheable(time.Unix(0, now.MtimeNs), t.started) && !isLink(t.fsys, in.Path)
		return &c, cache, nil
	}
	// Rewritten since it was listed: the file as it is now.
	got, err = readInfoBuf(t.fsys, in.Path, &r.buf, &r.b, false)
	if errors.Is(err, errNotSession) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return got, false, nil
}

// headOf is the encoding of every field of in but the path and the text.
func headOf(in *Info) []byte {
	if h := in.cachedHead(); h != nil {
		return h
	}
	return headJSON(in)
}

func isLink(fsys vfs.FS, path string) bool {
	st, err := fsys.Lstat(path)
	return err != nil || st.Mode()&fs.ModeSymlink != 0
}

// readPrefix reads the first size bytes of the file at path (fewer when
// it is shorter now) into buf, with the stat of the open file.
func readPrefix(fsys vfs.FS, path string, size int64, buf []byte) ([]byte, fs.FileInfo, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return buf, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return buf, nil, err
	}
	if !st.Mode().IsRegular() {
		return buf, nil, &fs.PathError{Op: "open", Path: path, Err: vfs.ErrNotRegular}
	}
	size = max(min(size, st.Size()), 0)
	data := buf[:0]
	if int64(cap(data)) < size {
		data = make([]byte, 0, size)
	}
	n, err := io.ReadFull(f, data[:size])
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil // shorter now
	}
	if err != nil {
		return buf, nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return data[:n], st, nil
}

// scan finds the lines of d's text index, once, and decides whether it
// is to be rewritten: when it is missing or damaged, when an entry is
// missing or stale for a listed file, or when it holds entries for files
// not listed.
func (t *textFetcher) scan(d *textDir) {
	if d.scanned {
		return
	}
	d.scanned = true
	damaged := true
	if f, err := t.fsys.OpenFile(d.path, os.O_RDONLY|vfs.NoFollow, 0); err == nil {
		d.offs, damaged = scanTexts(f, textHeader(d.dir))
		if t.keepOpen && d.offs != nil {
			d.rf = f
		} else {
			f.Close()
		}
	}
	fresh := 0
	for _, i := range d.members {
		in := &t.infos[i]
		if ref, ok := d.offs[filepath.Base(in.Path)]; ok && ref.stamp == in.stamp {
			fresh++
		}
	}
	d.dirty = damaged || fresh != len(d.members) || len(d.offs) != fresh
}

// textKey ends the key members of a text index line.
var textKey = []byte(`,"text":`)

// scanTexts reads a text index whose first line is header, returning
// where each name's last valid line is, and whether lines were damaged.
func scanTexts(f io.Reader, header []byte) (map[string]textRef, bool) {
	r := bufio.NewReaderSize(f, 64<<10)
	first, err := r.ReadSlice('\n')
	if err != nil || !bytes.Equal(first[:len(first)-1], header) {
		return nil, true
	}
	offs := map[string]textRef{}
	damaged := false
	off := int64(len(first))
	for {
		chunk, err := r.ReadSlice('\n')
		start, n := off, int64(len(chunk))
		if n == 0 && err != nil {
			break
		}
		var name, crc string
		var st stamp
		ok := false
		crcv := uint32(0)
		var hold []byte // the last two bytes seen, not yet hashed: "}\n" at the end
		if k := bytes.Index(chunk, textKey); k >= 0 {
			name, st, crc, ok = cacheindex.DecodeKey(chunk[:k])
			rest := chunk[k+len(textKey):]
			ok = ok && len(rest) > 0 && rest[0] == '"'
			hold, crcv = hashHeld(hold, rest, crcv)
		}
		for err == bufio.ErrBufferFull {
			chunk, err = r.ReadSlice('\n')
			n += int64(len(chunk))
			if ok {
				hold, crcv = hashHeld(hold, chunk, crcv)
			}
		}
		off += n
		ok = ok && err == nil && string(hold) == "}\n" && cacheindex.CRCHex(crcv) == crc
		if ok {
			offs[name] = textRef{st, start, n - 1}
		} else {
			damaged = true
		}
		if err != nil {
			break
		}
	}
	return offs, damaged
}

// hashHeld adds p to the checksum, holding back its last two bytes (with
// those held before).
func hashHeld(hold, p []byte, crc uint32) ([]byte, uint32) {
	if len(hold)+len(p) <= 2 {
		return append(hold, p...), crc
	}
	if len(p) >= 2 {
		crc = crc32.Update(crc, cacheindex.CRC, hold)
		crc = crc32.Update(crc, cacheindex.CRC, p[:len(p)-2])
		return append(hold[:0], p[len(p)-2:]...), crc
	}
	// One byte: the first held one goes.
	crc = crc32.Update(crc, cacheindex.CRC, hold[:1])
	return append(hold[1:2:2], p...), crc
}
