package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
)

// append is the one path every new entry takes: check the session can
// take it, write it (or keep it pending while a new file waits for its
// first user or assistant message), then index it. An entry that could not be
// written is not indexed, so readers never see an unacknowledged entry.
func (s *Session) appendLine(line []byte, meta jsonl.Built) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	if s.opts.ReadOnly {
		return "", ErrReadOnly
	}
	if err := s.checkParent(meta); err != nil {
		return "", err
	}
	e := jsonl.NewEntry(line, meta)
	assistant := isConversation(&e)
	if err := s.persistWith(e.Raw, assistant); err != nil {
		return "", err
	}
	s.ix.Add(s.newEntry(e))
	// The new entry's id is new, so its chain is its parent's plus itself.
	s.chainOK = e.ID
	s.leafMoved = false
	if assistant {
		s.hasConversation = true
	}
	if s.onDisk {
		s.unwritten = s.ix.Len()
	}
	return e.ID, nil
}

// checkParent refuses an entry whose parent chain runs into a loop.
func (s *Session) checkParent(meta jsonl.Built) error {
	if meta.ParentKind == KindNull || meta.ParentKind == KindAbsent {
		return nil
	}
	return s.checkChain(meta.ParentID)
}

// write builds an entry line and appends it. build checks the call's
// arguments and encodes the line on the current state; only then does the
// session get its file ready (begin), so a call with bad arguments
// changes nothing. When getting ready changed the state (lines another
// process appended, a reload), the line is built again on top of it.
func (s *Session) write(build func() (*pending, error)) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	for tries := 0; ; tries++ {
		gen := s.gen
		p, err := build()
		if err != nil {
			return "", err
		}
		if err := s.checkParent(p.meta); err != nil {
			return "", err
		}
		if err := s.begin(); err != nil {
			return "", err
		}
		// Another process appending without pause could keep changing
		// the state; after a few rounds the entry goes under the entry it
		// was built on, which exists too.
		if s.gen == gen || tries >= 10 {
			return s.commit(p)
		}
	}
}

// newEntry stores e for the index, taking it from a slab so that a long
// session is not one heap object per entry.
func (s *Session) newEntry(e Entry) *Entry {
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]Entry, 0, 256)
	}
	s.slab = append(s.slab, e)
	return &s.slab[len(s.slab)-1]
}

// persistWith writes the pending entries plus line, following pi's rule
// for new files: nothing is written until the session holds an assistant
// message. A file that is already on disk is appended to at once.
func (s *Session) persistWith(line []byte, assistant bool) error {
	if !s.persist || s.file == "" {
		return nil
	}
	if s.writeEr != nil {
		return s.writeEr
	}
	if !s.onDisk {
		if !s.hasConversation && !assistant && !s.opts.writeAtOnce {
			return nil
		}
		return s.createFile(line)
	}
	if s.unwritten == s.ix.Len() {
		// The usual case: only this line. Its newline goes into the spare
		// capacity the builder left, so the line is not copied.
		return s.writeAppend(append(line, '\n'))
	}
	buf := s.pendingLines(nil)
	buf = append(buf, line...)
	buf = append(buf, '\n')
	return s.writeAppend(buf)
}

// pendingLines appends the lines of entries not yet on disk.
func (s *Session) pendingLines(buf []byte) []byte {
	for _, e := range s.ix.Entries()[s.unwritten:] {
		buf = append(buf, e.Raw...)
		buf = append(buf, '\n')
	}
	return buf
}

// createFile writes a new session file atomically: header, the pending
// entries and line, into a temporary file that is synced and renamed into
// place, the directory synced after. The lines are streamed through a small
// buffer rather than built in memory first, so a fork of a 165 MB session
// does not hold its bytes twice. The file must not exist yet; an existing
// file is never overwritten.
func (s *Session) createFile(line []byte) (err error) {
	fsys := s.opts.fs()
	if _, err := fsys.Lstat(s.file); err == nil {
		return s.fail(fmt.Errorf("create session file %s: %w", s.file, fs.ErrExist))
	}
	dir := filepath.Dir(s.file)
	if err := vfs.MkdirAllSync(fsys, dir, vfs.DirMode); err != nil {
		return s.fail(fmt.Errorf("create session file %s: %w", s.file, err))
	}
	tmp := vfs.TempName(s.file)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return s.fail(fmt.Errorf("create temporary file for %s: %w", s.file, err))
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	if d, derr := fsys.Stat(dir); derr == nil {
		// Owned like its directory (when root writes in a user's store).
		if err = vfs.OwnLike(f, d); err != nil {
			_ = f.Close()
			return s.fail(fmt.Errorf("create session file %s: %w", s.file, err))
		}
	}
	cw := &countWriter{w: f}
	w := bufio.NewWriterSize(cw, 1<<16)
	writeLine := func(b []byte) {
		w.Write(b)
		w.WriteByte('\n')
	}
	writeLine(s.header.Raw)
	for _, e := range s.ix.Entries()[s.unwritten:] {
		writeLine(e.Raw)
	}
	if line != nil {
		writeLine(line)
	}
	if err = w.Flush(); err != nil {
		_ = f.Close()
		return s.fail(fmt.Errorf("write %s: %w", tmp, err))
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return s.fail(fmt.Errorf("sync %s: %w", tmp, err))
	}
	if err = f.Close(); err != nil {
		return s.fail(fmt.Errorf("close %s: %w", tmp, err))
	}
	if err = fsys.Rename(tmp, s.file); err != nil {
		return s.fail(fmt.Errorf("rename %s: %w", tmp, err))
	}
	if err = fsys.SyncDir(dir); err != nil {
		return s.fail(fmt.Errorf("sync directory %s: %w", dir, err))
	}
	st, err := fsys.Lstat(s.file)
	if err != nil {
		return s.fail(fmt.Errorf("create session file %s: %w", s.file, err))
	}
	s.wrote = true
	s.onDisk = true
	s.unwritten = s.ix.Len()
	s.disk = diskState{prepared: true, loaded: true, ident: st, size: cw.n, end: cw.n, lines: cw.lines}
	s.replicated()
	return nil
}

// countWriter counts the bytes and newlines written through it.
type countWriter struct {
	w     io.Writer
	n     int64
	lines int
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.lines += bytes.Count(p[:n], []byte{'\n'})
	return n, err
}

// writeAppend writes buf (whole lines) with one write call on the
// O_APPEND handle and, under SyncEach, syncs it. The file must still be
// the one we opened. catchUp has run just before.
func (s *Session) writeAppend(buf []byte) error {
	if s.f == nil {
		if err := s.openAppend(); err != nil {
			if errors.Is(err, errGrew) {
				return s.fail(fmt.Errorf("append to %s: the file was replaced behind this writer: %w", s.file, ErrVanished))
			}
			return err
		}
	}
	// Appends go to the file descriptor, so a file removed or replaced
	// behind our back would silently swallow them. Under SyncEach every
	// append checks (an fsync costs far more); under SyncNone the check
	// runs at most every identityInterval and on Close.
	if now := time.Now(); s.opts.Sync == SyncEach || now.Sub(s.checkedAt) >= identityInterval {
		if err := s.checkIdentity(); err != nil {
			return s.fail(err)
		}
		s.checkedAt = now
	}
	n, err := s.f.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return s.fail(s.undoAppend(fmt.Errorf("append to %s: %w", s.file, err), buf[:max(n, 0)]))
	}
	if s.opts.Sync == SyncEach {
		if err := s.f.Sync(); err != nil {
			return s.fail(s.undoAppend(fmt.Errorf("sync %s: %w", s.file, err), buf))
		}
	}
	for line := range bytes.SplitSeq(buf[:len(buf)-1], []byte{'\n'}) {
		s.disk.own = append(s.disk.own, line)
	}
	s.disk.ownBytes += int64(len(buf))
	s.wrote = true
	s.replicated()
	return nil
}

// undoAppend cuts off the bytes wrote that a failed append (a write that
// stored part of its lines, or a sync that failed) left at the end of the
// file, so that the file is as it was before the call and the next
// writer's line (pi's, which takes no lock) is not glued onto a fragment.
// pi may have appended after them, so they are cut only when the file
// ends with exactly those bytes, checked on the descriptor, and its size
// is unchanged on a second look just before the truncate (the window
// that remains is cutTail's). It returns cause, with what became of the
// bytes when they could not be cut.
func (s *Session) undoAppend(cause error, wrote []byte) error {
	if len(wrote) == 0 {
		return cause
	}
	kept := func(why string, err error) error {
		if err != nil {
			why = fmt.Sprintf("%s: %v", why, err)
		}
		return fmt.Errorf("%w; the %d bytes it wrote are still at the end of the file, unfinished (%s)", cause, len(wrote), why)
	}
	size, err := fileSize(s.f)
	if err != nil {
		return kept("the file's size could not be read", err)
	}
	at := size - int64(len(wrote))
	if at < 0 {
		return kept("the file is shorter than them", nil)
	}
	got := make([]byte, len(wrote))
	if n, err := s.f.ReadAt(got, at); n < len(got) {
		return kept("they could not be read back", err)
	}
	if !bytes.Equal(got, wrote) {
		return kept(fmt.Sprintf("another process appended after them, at offset %d or later, so they were not cut", at), nil)
	}
	if again, err := fileSize(s.f); err != nil || again != size {
		return kept("another process appended after them, so they were not cut", err)
	}
	if err := s.f.Truncate(at); err != nil {
		return kept("they could not be cut", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("%w; the %d bytes it wrote were cut off, but the cut could not be synced: %v", cause, len(wrote), err)
	}
	return fmt.Errorf("%w; the %d bytes it wrote were cut off: the file is as it was", cause, len(wrote))
}

// identityInterval is how often, at most, a SyncNone writer checks that
// its file is still the one at its path.
const identityInterval = 100 * time.Millisecond

// checkIdentity returns ErrVanished (wrapped) unless the path still names
// the file we append to.
func (s *Session) checkIdentity() error {
	if st, err := s.opts.fs().Lstat(s.file); err != nil || !vfs.SameFile(st, s.fileID) {
		return fmt.Errorf("append to %s: %w", s.file, ErrVanished)
	}
	return nil
}

// fail makes a write error sticky: the session refuses further writes
// until it is reopened, because the file's state is no longer known.
func (s *Session) fail(err error) error {
	s.writeEr = fmt.Errorf("%w (the session refuses writes until it is reopened)", err)
	return s.writeEr
}

func errorsIsNotExist(err error) bool { return os.IsNotExist(err) }

// Flush brings the file up to date with the session now, without
// appending: a new session's file is written even before its first
// assistant message (pi waits for one), and a loaded file gets what its
// write-mode open deferred to the first write (migration, an empty file's
// header, a final newline, cutting an abandoned torn line, removing stale
// temporary files; see Open). It does nothing for sessions in memory or
// opened read-only.
func (s *Session) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if !s.persist || s.opts.ReadOnly {
		return nil
	}
	if err := s.begin(); err != nil {
		return err
	}
	if s.onDisk {
		return nil
	}
	return s.createFile(nil)
}
