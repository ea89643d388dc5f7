package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
	"github.com/sessctl/sessctl/migrate"
	"github.com/sessctl/sessctl/tree"
)

// This file keeps a write-mode session and its file in step. Two rules
// shape it:
//
//   - A write-mode open changes nothing. What the file needs before it can
//     be appended to (migration, a header, a final newline, cutting a torn
//     line, removing stale temporary files) is done by prepare at the first
//     write, after the method checked its arguments: a call that fails
//     leaves the file byte for byte as it was.
//   - pi takes no lock and appends beside sessctl, so before every write
//     (under SyncNone: the first, then at most every identityInterval)
//     catchUp compares the file with what the session has read (one lseek
//     when nothing changed). Lines another process appended are read and
//     indexed as a reload would, and an unfinished last line is cut only
//     when no process holds the file open for writing, after checking size
//     and bytes again on the descriptor.

// diskState is what a write-mode session knows of its file's bytes.
type diskState struct {
	prepared bool // the work the open deferred is done

	loaded bool        // the file existed when it was read
	ident  fs.FileInfo // the file as it was when read: identity, mtime
	size   int64       // the bytes read

	empty       bool    // an empty (or blank) file: its header is in memory only
	migrateFrom float64 // a version 1 or 2 file, migrated in memory only
	// migrated is that migration, with the bytes of the rewrite (nil
	// once the migration is written, or when it must be made again).
	migrated *migrate.Memory

	// end is the offset just after the last complete line the session
	// has accounted for (indexed, skipped or written); tail holds the
	// bytes after it when they were last read: nothing, whitespace, a torn
	// line, or (tailEntry) a complete entry without its '\n', which is
	// indexed. lines counts the lines before end.
	end       int64
	tail      []byte
	tailEntry bool
	lines     int

	// own holds the lines this session wrote after end (without '\n'),
	// ownBytes their size with newlines: the next catchUp finds them,
	// normally as the only bytes after end.
	own      [][]byte
	ownBytes int64
}

// loadedState describes a file just read and parsed.
func loadedState(data []byte, p *jsonl.Parsed, ident fs.FileInfo) diskState {
	d := diskState{loaded: true, ident: ident, size: p.Size, end: p.Size}
	d.lines = p.Lines
	if p.Tail != jsonl.TailClean {
		d.end = p.TailOffset
		d.tail = data[p.TailOffset:]
		d.tailEntry = p.Tail == jsonl.TailNoNewline
		d.lines--
	}
	return d
}

// errGrew steers catchUp: the file changed while a last line was being
// judged; read it again.
var errGrew = errors.New("the session file grew")

// maxReloads bounds how often in a row a write reads the whole file again
// because it keeps being replaced or rewritten.
const maxReloads = 10

// begin readies the session for a write of a call whose arguments have
// been checked: the deferred work of the open, then catching up with the
// file. The caller must check its arguments again afterwards when it
// depends on entries: a reload may have changed them.
func (s *Session) begin() error {
	if err := s.check(); err != nil {
		return err
	}
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if !s.persist || s.file == "" {
		return nil
	}
	if s.writeEr != nil {
		return s.writeEr
	}
	if s.lease != nil {
		// Another machine may write the session once the lease is not
		// held: nothing is written (not sticky: it may be held again).
		if err := s.lease.Valid(); err != nil {
			return fmt.Errorf("write %s: %w", s.file, err)
		}
	}
	if !s.disk.prepared {
		if err := s.prepare(); err != nil {
			return s.sticky(err)
		}
	}
	if !s.onDisk {
		return nil
	}
	// Under SyncNone, where an append costs a write and nothing else, the
	// check (a system call) runs at the first write and then at most every
	// identityInterval, like the identity check; under SyncEach, before
	// every write.
	if now := time.Now(); s.f == nil || s.opts.Sync == SyncEach || now.Sub(s.caughtUpAt) >= identityInterval {
		if err := s.catchUp(); err != nil {
			return s.sticky(err)
		}
		s.caughtUpAt = now
	}
	return nil
}

// sticky makes an error of getting the file ready refuse later writes, as
// a failed write does: a migration, newline, quarantine or cut that
// failed leaves the file in a state the session no longer knows. ErrBusy
// is not sticky: nothing was written, and the write may be tried again.
func (s *Session) sticky(err error) error {
	if s.writeEr != nil {
		return s.writeEr
	}
	if errors.Is(err, ErrBusy) {
		return err
	}
	return s.fail(err)
}

// prepare does what a write-mode open deferred. The lock is held.
func (s *Session) prepare() error {
	fsys := s.opts.fs()
	if s.disk.loaded {
		for tries := 0; ; tries++ {
			if tries >= maxReloads {
				return fmt.Errorf("write %s: the file keeps being replaced or rewritten", s.file)
			}
			st, err := fsys.Lstat(s.file)
			if errors.Is(err, fs.ErrNotExist) {
				return s.fail(fmt.Errorf("write %s: %w", s.file, ErrVanished))
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", s.file, err)
			}
			if st.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("write %s: %w", s.file, vfs.ErrSymlink)
			}
			d := &s.disk
			same := vfs.SameFile(st, d.ident)
			// A rewrite (migration, header) needs the very bytes that
			// were read; an append-only file only needs to be the same
			// file (catchUp reads what was appended).
			unchanged := same && st.Size() == d.size && d.ident.Size() == d.size && st.ModTime().Equal(d.ident.ModTime())
			if same && (unchanged || (!d.empty && d.migrateFrom == 0)) {
				break
			}
			if err := s.reload(); err != nil {
				return err
			}
		}
	}
	// Only holders of the lock create the session's temporary files, so
	// any there now were left by an interrupted write.
	s.removeTemps()
	switch {
	case s.disk.empty:
		hdr := append(append([]byte(nil), s.header.Raw...), '\n')
		if err := vfs.WriteFileAtomic(fsys, s.file, hdr, vfs.FileMode); err != nil {
			return s.fail(fmt.Errorf("initialise empty session %s: %w", s.file, err))
		}
		st, err := fsys.Lstat(s.file)
		if err != nil {
			return s.fail(fmt.Errorf("initialise empty session %s: %w", s.file, err))
		}
		s.recovery.Initialized = true
		s.disk = diskState{loaded: true, ident: st, size: int64(len(hdr)), end: int64(len(hdr)), lines: 1}
	case s.disk.migrateFrom != 0:
		if err := s.migrateFile(); err != nil {
			return err
		}
	case s.disk.loaded:
		// Appends sync only the file, so make its name durable too: its
		// writer (pi, which never syncs, or a create whose directory sync
		// failed) may have left it in the directory's unsynced state, and
		// a power cut would then take every acknowledged append with it.
		if err := fsys.SyncDir(filepath.Dir(s.file)); err != nil {
			return fmt.Errorf("write %s: sync directory: %w", s.file, err)
		}
	}
	s.disk.prepared = true
	return nil
}

// migrateFile rewrites the loaded version 1 or 2 file as version 3 and
// indexes the result, which holds the entries the session migrated in
// memory when it was opened (the migration's ids are derived from the
// session id and the line, not drawn).
//
// prepare found the file as it was read, so the bytes of the migration
// made in memory at the open are written as they are: nothing is read
// or migrated again. Should another process change the file after all
// (pi takes no lock), seen just before the rename, nothing is replaced,
// and the file is migrated from disk (migrate.File) and read back.
func (s *Session) migrateFile() error {
	fsys := s.opts.fs()
	from := s.disk.migrateFrom
	if m := s.disk.migrated; m != nil {
		res, err := migrate.WriteFile(context.Background(), s.file, m,
			migrate.WriteOptions{FS: fsys, NoBackup: s.opts.NoBackup, Read: s.disk.ident})
		if err == nil {
			s.recovery.Migrated = res.Migrated
			s.recovery.FromVersion = from
			s.recovery.Backup = res.Backup
			return s.loadWritten(m)
		}
		if !errors.Is(err, migrate.ErrChanged) {
			return err
		}
	}
	res, err := migrate.File(context.Background(), s.file, migrate.FileOptions{FS: fsys, NoBackup: s.opts.NoBackup})
	if err != nil {
		return err
	}
	s.recovery.Migrated = res.Migrated
	s.recovery.FromVersion = from
	s.recovery.Backup = res.Backup
	if err := s.reload(); err != nil {
		return err
	}
	if s.disk.migrateFrom != 0 {
		return fmt.Errorf("migrate %s: the file is still version %s after its migration", s.file, jsonl.AppendNumber(nil, s.disk.migrateFrom))
	}
	return nil
}

// loadWritten brings the session to the file migrateFile has just
// written from m. The index holds m's entries already (the open indexed
// them), so nothing is read or indexed again: the entries get the
// offsets and line numbers of the new file, which holds them and nothing
// else.
func (s *Session) loadWritten(m *migrate.Memory) error {
	ident, err := s.opts.fs().Lstat(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return s.fail(fmt.Errorf("write %s: %w", s.file, ErrVanished))
	}
	if err != nil {
		return s.fail(fmt.Errorf("write %s: %w", s.file, err))
	}
	if s.f != nil {
		// A handle of the file that was replaced.
		_ = s.f.Close()
		s.f, s.fileID = nil, nil
	}
	var off int64
	for i := range m.Entries {
		e := &m.Entries[i]
		e.Offset, e.Line = off, i+1
		off += int64(len(e.Raw)) + 1
	}
	s.header.Offset, s.header.Line = m.Entries[0].Offset, m.Entries[0].Line
	s.gen++
	s.recovery.Malformed = 0 // the rewrite kept only the entries
	s.disk = diskState{loaded: true, ident: ident, size: off, end: off, lines: len(m.Entries), prepared: s.disk.prepared}
	return nil
}

// reload reads the whole file again, as a fresh open would, keeping a
// leaf that Branch or ResetLeaf moved when that entry still exists.
func (s *Session) reload() error {
	if s.f != nil {
		_ = s.f.Close()
		s.f, s.fileID = nil, nil
	}
	leaf, kind, moved := "", KindNull, s.leafMoved
	if moved {
		leaf, kind = s.ix.Leaf()
	}
	prepared := s.disk.prepared
	s.gen++
	if err := s.load(context.Background()); err != nil {
		return s.fail(err)
	}
	if !s.disk.loaded {
		return s.fail(fmt.Errorf("write %s: %w", s.file, ErrVanished))
	}
	s.disk.prepared = prepared && !s.disk.empty && s.disk.migrateFrom == 0
	s.chainOK = ""
	if moved && (kind != KindString || s.ix.Has(leaf)) {
		s.ix.SetLeaf(leaf, kind)
	} else {
		s.leafMoved = false
	}
	return nil
}

// catchUp brings the session up to date with its file before a write:
// lines other processes appended are indexed, a complete last line gets
// its newline, an unfinished one is waited for, or cut when it is
// abandoned. When nothing changed it costs one lseek.
func (s *Session) catchUp() error {
	start := time.Now()
	for tries := 0; ; tries++ {
		if tries >= 3 && time.Since(start) > 10*s.opts.tornWait() {
			// Another process keeps appending, and every look finds a
			// line in the middle of being written.
			ws, _ := s.otherWriters()
			return &BusyError{Path: s.file, Writers: ws, Bytes: len(s.disk.tail)}
		}
		if !s.disk.prepared {
			if err := s.prepare(); err != nil {
				return err
			}
		}
		if s.f == nil {
			if err := s.openAppend(); err != nil {
				if errors.Is(err, errGrew) {
					continue
				}
				return err
			}
		}
		size, err := fileSize(s.f)
		if err != nil {
			return s.fail(fmt.Errorf("append to %s: %w", s.file, err))
		}
		d := &s.disk
		known := d.end + int64(len(d.tail)) + d.ownBytes
		switch {
		case size == known && len(d.tail) == 0:
			d.end, d.own, d.ownBytes = size, d.own[:0], 0
			return nil
		case size < known:
			// Someone cut the file. Before this session wrote, reading it
			// again is enough; after, entries it acknowledged are gone.
			if s.wrote {
				return s.fail(fmt.Errorf("append to %s: the file shrank from %d to %d bytes behind this writer: %w", s.file, known, size, ErrVanished))
			}
			if err := s.reload(); err != nil {
				return err
			}
			continue
		case size > known:
			if err := s.readAppended(size); err != nil {
				if errors.Is(err, errGrew) {
					continue
				}
				return err
			}
			continue
		}
		// Nothing new; a last line without '\n' remains.
		if d.tailEntry {
			if err := s.addNewline(); err != nil {
				return err
			}
			continue
		}
		if err := s.resolveTail(); err != nil {
			if errors.Is(err, errGrew) {
				continue
			}
			return err
		}
	}
}

// fileSize returns the size of an open file: its end, from lseek, which
// costs one system call and no allocation (appends are O_APPEND and reads
// are positioned, so the offset does not matter), or from Stat.
func fileSize(f vfs.File) (int64, error) {
	if sk, ok := f.(io.Seeker); ok {
		return sk.Seek(0, io.SeekEnd)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// openAppend opens the read-write append handle. A path that now names
// another file than the one read is read again (before this session wrote
// to it) or reported.
func (s *Session) openAppend() error {
	f, err := s.opts.fs().OpenFile(s.file, os.O_RDWR|os.O_APPEND|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		if errorsIsNotExist(err) {
			return s.fail(fmt.Errorf("append to %s: %w", s.file, ErrVanished))
		}
		return s.fail(fmt.Errorf("append to %s: %w", s.file, err))
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return s.fail(fmt.Errorf("append to %s: %w", s.file, err))
	}
	if s.disk.ident != nil && !vfs.SameFile(st, s.disk.ident) {
		_ = f.Close()
		if s.wrote {
			return s.fail(fmt.Errorf("append to %s: %w", s.file, ErrVanished))
		}
		if err := s.reload(); err != nil {
			return err
		}
		return errGrew
	}
	s.f, s.fileID = f, st
	if s.disk.ident == nil {
		s.disk.ident = st
	}
	return nil
}

// readAppended reads the file from the end of the last complete line the
// session accounted for up to size, finds its own lines there, indexes
// the others as a reload would (the leaf moves to the file's last entry
// unless Branch or ResetLeaf moved it) and keeps what follows the last
// '\n' as the new tail.
//
// The session's own lines are indexed when they are written. A line
// another process appends in the instant between catchUp's fstat and the
// session's write lands before the session's line but is indexed after
// it; the index then names it as the leaf, while a reload would name the
// session's line. Both are in the file and in the index.
func (s *Session) readAppended(size int64) error {
	d := &s.disk
	buf := make([]byte, size-d.end)
	n, err := s.f.ReadAt(buf, d.end)
	if err != nil && !errors.Is(err, io.EOF) {
		return s.fail(fmt.Errorf("read %s: %w", s.file, err))
	}
	buf = buf[:n]
	if !bytes.HasPrefix(buf, d.tail) {
		// The bytes the session read last are not there any more: the
		// file was rewritten in place.
		return s.rewritten()
	}
	complete := bytes.LastIndexByte(buf, '\n') + 1
	if d.tailEntry && complete == 0 {
		// The indexed last line grew without ending: not an entry after
		// all. Read the file again.
		return s.rewritten()
	}
	leaf, kind := s.ix.Leaf()
	added := false
	seg, segLines := 0, d.lines // the foreign lines not yet indexed start at seg
	lines := d.lines
	skipTail := d.tailEntry
	flush := func(to int) {
		if to > seg {
			added = s.indexLines(buf[seg:to], d.end+int64(seg), segLines) || added
		}
	}
	for off := 0; off < complete; {
		i := bytes.IndexByte(buf[off:], '\n')
		line := buf[off : off+i]
		next := off + i + 1
		switch {
		case skipTail:
			// The complete last line the session already indexed, now
			// with its newline.
			skipTail = false
			if !bytes.HasPrefix(line, d.tail) || !jsonl.JSBlank(line[len(d.tail):]) {
				return s.rewritten()
			}
			seg, segLines = next, lines+1
		case len(d.own) > 0 && bytes.Equal(line, d.own[0]):
			flush(off)
			d.own = d.own[1:]
			seg, segLines = next, lines+1
		}
		lines++
		off = next
	}
	flush(complete)
	if len(d.own) > 0 {
		return s.fail(fmt.Errorf("append to %s: lines this session wrote are not in the file where they were written; it was changed behind this writer: %w", s.file, ErrVanished))
	}
	d.end += int64(complete)
	d.lines = lines
	d.own, d.ownBytes = nil, 0
	d.tail = buf[complete:]
	d.tailEntry = false
	if len(d.tail) > 0 && !jsonl.JSBlank(d.tail) {
		if e, err := jsonl.ParseEntry(d.tail); err == nil {
			// A complete entry without its '\n': read like a reload would
			// (pi reads it too).
			e.Offset, e.Line = d.end, d.lines+1
			if !e.IsHeader() {
				s.addEntry(e)
				added = true
			}
			d.tailEntry = true
		}
	}
	if added {
		s.gen++
		s.chainOK = ""
		if s.leafMoved {
			s.ix.SetLeaf(leaf, kind)
		}
		s.unwritten = s.ix.Len()
	}
	return nil
}

// rewritten handles a file whose bytes before its end changed: read it
// again before this session wrote, report it after.
func (s *Session) rewritten() error {
	if s.wrote {
		return s.fail(fmt.Errorf("append to %s: the file was rewritten behind this writer: %w", s.file, ErrVanished))
	}
	if err := s.reload(); err != nil {
		return err
	}
	return errGrew
}

// indexLines indexes the complete lines in chunk, which starts at offset
// off of the file after lines lines, as a reload would: blank lines and
// lines that are not JSON objects are skipped (and counted), later
// headers are skipped. It reports whether an entry was added.
func (s *Session) indexLines(chunk []byte, off int64, lines int) bool {
	p := jsonl.ParseFile(chunk)
	s.recovery.Malformed += len(p.Malformed)
	added := false
	for i := range p.Entries {
		e := p.Entries[i]
		if e.IsHeader() {
			continue
		}
		e.Offset += off
		e.Line += lines
		s.addEntry(e)
		added = true
	}
	return added
}

// addEntry indexes an entry read from the file.
func (s *Session) addEntry(e Entry) {
	s.ix.Add(s.newEntry(e))
	if isConversation(&e) {
		s.hasConversation = true
	}
}

// addNewline ends a complete last line with its '\n'. pi writes a line
// and its newline in one call, so the line is complete: if its writer is
// still in that call, the kernel orders this write after it, and the
// result is a blank line, which every reader skips.
func (s *Session) addNewline() error {
	if _, err := s.f.Write([]byte{'\n'}); err != nil {
		return s.fail(fmt.Errorf("repair %s: add final newline: %w", s.file, err))
	}
	if err := s.f.Sync(); err != nil {
		return s.fail(fmt.Errorf("repair %s: add final newline: %w", s.file, err))
	}
	d := &s.disk
	d.own = append(d.own, d.tail)
	d.ownBytes += int64(len(d.tail)) + 1
	d.tail, d.tailEntry = nil, false
	s.recovery.NewlineAdded = true
	return nil
}

// tornPoll is how often a write looks at an unfinished last line while it
// waits for it.
const tornPoll = 20 * time.Millisecond

// resolveTail deals with an unfinished last line (or whitespace) after
// the last complete line, which nothing has changed since it was read.
// While some process holds the file open for writing, the line may be an
// entry being written: the write waits for it, up to StoreOptions.TornWait
// after it last grew, and then fails with a *BusyError. A line no process
// holds open is abandoned (its writer was killed) and is cut off.
func (s *Session) resolveTail() error {
	d := &s.disk
	size := d.end + int64(len(d.tail))
	wait := s.opts.tornWait()
	start := time.Now()
	for {
		writers, known := s.otherWriters()
		if known && len(writers) == 0 {
			break
		}
		if time.Since(start) >= wait {
			if known {
				return &BusyError{Path: s.file, Writers: writers, Bytes: len(d.tail)}
			}
			break // nobody to ask, and it did not change: abandoned
		}
		time.Sleep(min(tornPoll, wait))
		st, err := s.f.Stat()
		if err != nil {
			return s.fail(fmt.Errorf("append to %s: %w", s.file, err))
		}
		if st.Size() != size {
			return errGrew
		}
	}
	return s.cutTail(size)
}

// otherWriters lists the processes other than this session that hold the
// file open for writing. known is false where that cannot be told. A
// filesystem other than the operating system's (a test's) has no other
// processes.
func (s *Session) otherWriters() (ws []lock.Writer, known bool) {
	if s.opts.fs() != vfs.OS() {
		return nil, true
	}
	var skip []int
	if f, ok := s.f.(interface{ Fd() uintptr }); ok {
		skip = append(skip, int(f.Fd()))
	}
	return lock.FileWriters(s.fileID, skip...)
}

// cutTail quarantines an abandoned last line and cuts it off. The file's
// size and the line's bytes are checked again on the descriptor just
// before the cut; if they changed, nothing is cut and errGrew says to
// look again.
//
// What remains is a window of the checks' duration: a process that
// opens the file and starts writing after the last check and before the
// truncate loses its line. It needs a writer that did not hold the file
// open a moment earlier, when no process did, and that writes at the
// end of an abandoned line, which gluing its entry to the fragment would
// spoil anyway.
func (s *Session) cutTail(size int64) error {
	d := &s.disk
	fsys := s.opts.fs()
	torn := !jsonl.JSBlank(d.tail)
	q := ""
	if torn {
		q = s.file + ".torn-" + strconv.FormatInt(s.opts.now().UnixMilli(), 10)
		if err := vfs.WriteFileAtomic(fsys, q, d.tail, vfs.FileMode); err != nil {
			return fmt.Errorf("repair %s: quarantine torn tail: %w", s.file, err)
		}
		if err := vfs.ChownLike(fsys, q, d.ident); err != nil {
			return fmt.Errorf("repair %s: quarantine torn tail: %w", s.file, err)
		}
	}
	st, err := s.f.Stat()
	if err != nil {
		return s.fail(fmt.Errorf("repair %s: %w", s.file, err))
	}
	same := st.Size() == size
	if same {
		now := make([]byte, len(d.tail))
		n, _ := s.f.ReadAt(now, d.end)
		same = n == len(now) && bytes.Equal(now, d.tail)
	}
	if !same {
		if q != "" {
			_ = fsys.Remove(q)
		}
		return errGrew
	}
	err = s.f.Truncate(d.end)
	if err == nil {
		err = s.f.Sync()
	}
	if err != nil {
		return s.fail(fmt.Errorf("repair %s: cut torn tail: %w", s.file, err))
	}
	if torn {
		s.recovery.TornBytes = len(d.tail)
		s.recovery.Quarantine = q
	}
	d.tail = nil
	return nil
}

// checkChain returns a *LoopError when the walk from the entry with key
// parent to its root runs into a parent-id loop. The last entry found
// loop-free is remembered: an entry this session appended under it has a
// new id, so its chain ends too.
func (s *Session) checkChain(parent string) error {
	if parent == "" || parent == s.chainOK {
		return nil
	}
	if at, loop := s.ix.Loop(parent); loop {
		return &LoopError{Path: s.file, Entry: parent, At: tree.Key(at), Line: at.Line}
	}
	s.chainOK = parent
	return nil
}

// removeTemps removes the temporary files that sessctl's own writes of
// this session left behind when they were interrupted. The lock is held,
// and only holders of the lock create them, so they are stale. A file that
// cannot be removed stays; it does no harm.
func (s *Session) removeTemps() {
	if s.lk == nil && !s.opts.noLock {
		return
	}
	fsys := s.opts.fs()
	names, err := sessionfile.TempFiles(fsys, s.file)
	if err != nil || len(names) == 0 {
		return
	}
	for _, n := range names {
		_ = fsys.Remove(n)
	}
	_ = fsys.SyncDir(filepath.Dir(s.file))
}
