package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

// TrashedFile is one file Trash moved.
type TrashedFile struct {
	From string
	To   string
}

// Trash moves the session file at path into dir, together with the files
// sessctl keeps beside it for that session: migration backups
// (<file>.v<N>.bak, and <file>.v<N>.bak.<k> when an older backup had the
// name), quarantined torn tails (<file>.torn-<ms>) and the temporary files
// an interrupted write left (see TempFiles). It holds the session's writer
// lock while it moves them, so it fails with ErrLocked while another
// sessctl writer has the session open (opts.Wait waits for the lock until
// ctx is done). pi takes no lock: a pi process working on the session is
// not detected, and keeps appending to the moved file (or, when it
// starts, creates a new one at the old path).
//
// After the move the lock file (<file>.lock) and the owner record are
// removed while the lock is still held, which is safe (see lock.Remove).
// With opts.NoLock, where the caller holds the lock, they are left to it.
// dir is created (0700) if needed; a file already in dir is never
// replaced. The session file is moved first, so an error part-way leaves
// the session deleted and only some of its backups behind.
func Trash(ctx context.Context, path, dir string, opts Options) ([]TrashedFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("trash %s: %w", path, err)
	}
	fsys := opts.fs()
	if st, err := fsys.Lstat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("trash: %w", errs.NotFound("session file "+path))
		}
		return nil, fmt.Errorf("trash %s: %w", path, err)
	} else if err := checkKind(st); err != nil {
		return nil, fmt.Errorf("trash %s: %w", path, err)
	}
	var lk *lock.Lock
	if !opts.NoLock {
		if lk, err = acquire(ctx, abs, opts); err != nil {
			return nil, err
		}
		defer func() {
			if lk != nil {
				_ = lk.Close()
			}
		}()
	}
	srcDir, base := filepath.Split(abs)
	names := []string{base}
	ents, err := fsys.ReadDir(srcDir)
	if err != nil {
		return nil, fmt.Errorf("trash %s: %w", path, err)
	}
	for _, d := range ents {
		if d.Type().IsRegular() && isSessionSidecar(base, d.Name()) {
			names = append(names, d.Name())
		}
	}
	if err := vfs.MkdirAllSync(fsys, dir, vfs.DirMode); err != nil {
		return nil, fmt.Errorf("trash %s: create %s: %w", path, dir, err)
	}
	var moved []TrashedFile
	for _, n := range names {
		from, to := filepath.Join(srcDir, n), filepath.Join(dir, n)
		if _, err := fsys.Lstat(to); err == nil {
			return moved, fmt.Errorf("trash %s: %s: %w", path, to, fs.ErrExist)
		}
		if err := fsys.Rename(from, to); err != nil {
			return moved, fmt.Errorf("trash %s: %w", path, err)
		}
		moved = append(moved, TrashedFile{From: from, To: to})
	}
	for _, d := range []string{srcDir, dir} {
		if err := fsys.SyncDir(d); err != nil {
			return moved, fmt.Errorf("trash %s: sync %s: %w", path, d, err)
		}
	}
	if lk != nil {
		_, err := lk.Remove()
		lk = nil
		if err != nil {
			return moved, fmt.Errorf("trash %s: %w", path, err)
		}
	}
	return moved, nil
}

// isSessionSidecar reports whether name is a backup, quarantine or
// temporary file of the session file base: base.v<N>.bak,
// base.v<N>.bak.<k>, base.torn-<digits>, or one of TempFiles' names.
func isSessionSidecar(base, name string) bool {
	if isSessionTemp(base, name) {
		return true
	}
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return false
	}
	if v, ok := strings.CutPrefix(rest, "torn-"); ok {
		return isDigits(v)
	}
	if v, ok := strings.CutPrefix(rest, "v"); ok {
		num, k, numbered := strings.Cut(v, ".bak")
		if numbered && k != "" {
			// A backup whose name was taken: base.v<N>.bak.<k>.
			kk, ok := strings.CutPrefix(k, ".")
			if !ok || !isDigits(kk) {
				return false
			}
		} else if !numbered {
			return false
		}
		return num != "" && strings.Trim(num, "0123456789.") == ""
	}
	return false
}
