package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/layout"
)

// TrashedFile is one file Trash moved.
type TrashedFile struct {
	From string
	To   string
}

// Trash moves the session file at path into dir, together with the files
// sessctl keeps beside it for that session: migration backups
// (<file>.v<N>.bak) and quarantined torn tails (<file>.torn-<ms>). It holds
// the session's writer lock while it moves them, so it fails with
// ErrLocked while another writer has the session open (opts.Wait waits
// for the lock until ctx is done).
//
// The lock file and owner record stay where they are: lock files are
// never moved or removed, so every writer keeps locking the same inode.
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
			return nil, fmt.Errorf("trash: %w", &notFoundError{"session file " + path})
		}
		return nil, fmt.Errorf("trash %s: %w", path, err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("trash %s: not a regular file", path)
	}
	if !opts.NoLock {
		release, err := acquireLock(ctx, abs, opts)
		if err != nil {
			return nil, err
		}
		defer release()
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
	if err := layout.MkdirAllSync(fsys, dir, layout.DirMode); err != nil {
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
	return moved, nil
}

// isSessionSidecar reports whether name is a backup or quarantine file of
// the session file base: base.v<N>.bak or base.torn-<digits>.
func isSessionSidecar(base, name string) bool {
	rest, ok := strings.CutPrefix(name, base+".")
	if !ok {
		return false
	}
	if v, ok := strings.CutPrefix(rest, "torn-"); ok {
		return v != "" && strings.Trim(v, "0123456789") == ""
	}
	if v, ok := strings.CutPrefix(rest, "v"); ok {
		num, ok := strings.CutSuffix(v, ".bak")
		return ok && num != "" && strings.Trim(num, "0123456789.") == ""
	}
	return false
}
