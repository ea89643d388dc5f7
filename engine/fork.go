package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/migrate"
)

// ForkFrom copies every entry of the session file at sourcePath (all
// branches, labels and names, in file order) into a new session for
// targetCwd, whose header names the source as parentSession exactly as
// passed (pi's forkFrom). The new file goes into opts.Dir, default the
// per-cwd directory of targetCwd, and is written at once. The returned
// session is open for writing on it, with cwd targetCwd.
//
// Unlike pi, a version 1 or 2 source is migrated (in memory, the source is
// not touched) before it is copied, so the fork is a valid version 3 file
// instead of id-less entries under a version 3 header. A source of a newer
// version than layout.CurrentVersion is refused with a *layout.VersionError
// (ErrUnsupportedVersion).
func ForkFrom(ctx context.Context, sourcePath, targetCwd string, opts Options) (*Session, error) {
	fsys := opts.fs()
	data, err := fsys.ReadFile(sourcePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, &notFoundError{"session file " + sourcePath})
	}
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, err)
	}
	p := layout.ParseFile(data)
	if len(p.Entries) == 0 {
		return nil, &layout.CorruptError{Path: sourcePath, Err: errors.New("cannot fork: source session file is empty or invalid")}
	}
	if err := checkHeader(sourcePath, p); err != nil {
		return nil, err
	}
	entries := p.Entries
	v := migrate.VersionOf(&entries[0])
	if v > layout.CurrentVersion {
		// Copying entries of a format this code does not know under a
		// version 3 header would silently change their meaning.
		return nil, &layout.VersionError{Path: sourcePath, Found: v, Max: layout.CurrentVersion}
	}
	if migrate.Needed(v) {
		if entries, _, err = migrate.Entries(entries); err != nil {
			return nil, &layout.CorruptError{Path: sourcePath, Err: err}
		}
	}
	dir, err := opts.sessionDir(targetCwd)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, err)
	}
	s := &Session{opts: opts, cwd: targetCwd, dir: dir, persist: true}
	id := opts.sessionID()
	if err := layout.CheckName(id); err != nil {
		return nil, fmt.Errorf("fork %s: %w", sourcePath, err)
	}
	now := opts.now()
	parent := sourcePath
	header := layout.NewHeaderLine(id, now, targetCwd, &parent)
	file := filepath.Join(dir, layout.SessionFileName(now, id))
	if err := s.switchFile(ctx, file); err != nil {
		return nil, err
	}
	h, _ := layout.ParseEntry(header)
	body := make([]layout.Entry, 0, len(entries))
	body = append(body, h)
	for _, e := range entries[1:] {
		if !e.IsHeader() {
			body = append(body, e)
		}
	}
	s.index(body)
	if err := s.writeNewFile(); err != nil {
		_ = s.closeFile()
		return nil, err
	}
	return s, nil
}

// writeNewFile writes a new session file atomically, as createFile does
// (header and every entry not yet on disk, into a temporary file that is
// synced and renamed into place, the directory synced after), but streams
// the lines through a small buffer instead of building the whole file in
// memory first: a fork of a 165 MB session does not hold its bytes twice.
// The file must not exist yet; an existing file is never overwritten.
func (s *Session) writeNewFile() (err error) {
	fsys := s.opts.fs()
	if _, err := fsys.Lstat(s.file); err == nil {
		return s.fail(fmt.Errorf("create session file %s: %w", s.file, fs.ErrExist))
	}
	dir := filepath.Dir(s.file)
	if err := layout.MkdirAllSync(fsys, dir, layout.DirMode); err != nil {
		return s.fail(fmt.Errorf("create session file %s: %w", s.file, err))
	}
	tmp := layout.TempName(s.file)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|layout.NoFollow, layout.FileMode)
	if err != nil {
		return s.fail(fmt.Errorf("create temporary file for %s: %w", s.file, err))
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<16)
	w.Write(s.header.Raw)
	w.WriteByte('\n')
	for _, e := range s.ix.Entries()[s.unwritten:] {
		w.Write(e.Raw)
		w.WriteByte('\n')
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
	s.wrote = true
	s.onDisk = true
	s.unwritten = s.ix.Len()
	return nil
}
