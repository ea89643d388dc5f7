package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/errs"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

// TrashedFile is one file Store.Trash moved.
type TrashedFile struct {
	From string
	To   string
}

// trash moves the session file at path into dir, with its sidecars (see
// Store.Trash). With opts.noLock, where the caller holds the lock, the
// lock file and owner record are left to it.
func trash(ctx context.Context, path, dir string, opts options) ([]TrashedFile, error) {
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
	if !opts.noLock {
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
		if d.Type().IsRegular() && sessionfile.IsSidecar(base, d.Name()) {
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
