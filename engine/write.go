package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
)

// append is the one path every new entry takes: check the session can
// take it, write it (or keep it pending while a new file waits for its
// first assistant message), then index it. An entry that could not be
// written is not indexed, so readers never see an unacknowledged entry.
func (s *Session) appendLine(line []byte, meta layout.Built) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	if s.opts.ReadOnly {
		return "", ErrReadOnly
	}
	e := layout.NewEntry(line, meta)
	assistant := isAssistant(&e)
	if err := s.persistWith(e.Raw, assistant); err != nil {
		return "", err
	}
	s.ix.Add(s.newEntry(e))
	if assistant {
		s.hasAssistant = true
	}
	if s.onDisk {
		s.unwritten = s.ix.Len()
	}
	return e.ID, nil
}

// newEntry stores e for the index, taking it from a slab so that a long
// session is not one heap object per entry.
func (s *Session) newEntry(e layout.Entry) *layout.Entry {
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]layout.Entry, 0, 256)
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
		if !s.hasAssistant && !assistant {
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
// entries and line. The file must not exist yet; an existing file is never
// overwritten.
func (s *Session) createFile(line []byte) error {
	fsys := s.opts.fs()
	if _, err := fsys.Lstat(s.file); err == nil {
		return s.fail(fmt.Errorf("create session file %s: %w", s.file, fs.ErrExist))
	}
	buf := append(append([]byte(nil), s.header.Raw...), '\n')
	buf = s.pendingLines(buf)
	if line != nil {
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	if err := layout.WriteFileAtomic(fsys, s.file, buf, layout.FileMode); err != nil {
		return s.fail(err)
	}
	s.wrote = true
	s.onDisk = true
	s.unwritten = s.ix.Len()
	return nil
}

// writeAppend writes buf with one write call on the O_APPEND handle and,
// under SyncEach, syncs it. The file must still be the one we opened.
func (s *Session) writeAppend(buf []byte) error {
	fsys := s.opts.fs()
	if s.f == nil {
		f, err := fsys.OpenFile(s.file, os.O_WRONLY|os.O_APPEND|layout.NoFollow, layout.FileMode)
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
		s.f, s.fileID = f, st
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
	if _, err := s.f.Write(buf); err != nil {
		return s.fail(fmt.Errorf("append to %s: %w", s.file, err))
	}
	s.wrote = true
	if s.opts.Sync == SyncEach {
		if err := s.f.Sync(); err != nil {
			return s.fail(fmt.Errorf("sync %s: %w", s.file, err))
		}
	}
	return nil
}

// identityInterval is how often, at most, a SyncNone writer checks that
// its file is still the one at its path.
const identityInterval = 100 * time.Millisecond

// checkIdentity returns ErrVanished (wrapped) unless the path still names
// the file we append to.
func (s *Session) checkIdentity() error {
	if st, err := s.opts.fs().Lstat(s.file); err != nil || !layout.SameFile(st, s.fileID) {
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

// Flush writes a new session's file now, even before its first assistant
// message (pi waits for one). It does nothing for sessions already on disk
// or in memory.
func (s *Session) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if !s.persist || s.onDisk || s.opts.ReadOnly {
		return nil
	}
	if s.writeEr != nil {
		return s.writeEr
	}
	return s.createFile(nil)
}

// repairTail prepares a loaded v3 file for appending: a complete last line
// without '\n' gets its newline; an unfinished last line (a torn write) is
// copied to <file>.torn-<unix ms> and cut off; whitespace after the last
// newline is cut off. The lock is held.
func (s *Session) repairTail(p *layout.Parsed, data []byte) error {
	fsys := s.opts.fs()
	switch p.Tail {
	case layout.TailClean:
		return nil
	case layout.TailNoNewline:
		f, err := fsys.OpenFile(s.file, os.O_WRONLY|os.O_APPEND|layout.NoFollow, 0)
		if err != nil {
			return fmt.Errorf("repair %s: %w", s.file, err)
		}
		_, err = f.Write([]byte{'\n'})
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("repair %s: add final newline: %w", s.file, err)
		}
		s.recovery.NewlineAdded = true
		return nil
	}
	frag := data[p.TailOffset:]
	if p.Tail == layout.TailTorn {
		q := s.file + ".torn-" + strconv.FormatInt(s.opts.now().UnixMilli(), 10)
		if err := layout.WriteFileAtomic(fsys, q, frag, layout.FileMode); err != nil {
			return fmt.Errorf("repair %s: quarantine torn tail: %w", s.file, err)
		}
		s.recovery.TornBytes = len(frag)
		s.recovery.Quarantine = q
	}
	f, err := fsys.OpenFile(s.file, os.O_WRONLY|layout.NoFollow, 0)
	if err != nil {
		return fmt.Errorf("repair %s: %w", s.file, err)
	}
	err = f.Truncate(p.TailOffset)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("repair %s: cut torn tail: %w", s.file, err)
	}
	return nil
}

// migrateFile upgrades the locked file on disk and returns its new
// entries.
func (s *Session) migrateFile(ctx context.Context, from float64) ([]layout.Entry, error) {
	res, err := migrate.File(ctx, s.file, migrate.FileOptions{FS: s.opts.fs(), NoBackup: s.opts.NoBackup})
	if err != nil {
		return nil, err
	}
	s.recovery.Migrated = res.Migrated
	s.recovery.FromVersion = from
	s.recovery.Backup = res.Backup
	data, err := s.opts.fs().ReadFile(s.file)
	if err != nil {
		return nil, fmt.Errorf("reopen migrated %s: %w", s.file, err)
	}
	p := layout.ParseFile(data)
	if err := checkHeader(s.file, p); err != nil {
		return nil, err
	}
	return p.Entries, nil
}
