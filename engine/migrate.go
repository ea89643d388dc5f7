package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// MigrateOptions configure MigrateFile.
type MigrateOptions struct {
	// DryRun reports what would happen and writes nothing (no lock is
	// taken either).
	DryRun bool
	// NoBackup skips keeping the original as <file>.v<N>.bak.
	NoBackup bool
	// Wait and Command are as in Options. With Wait, a held session is
	// waited for until ctx is done, or for at most WaitFor when it is
	// above zero. WaitFor bounds only the wait for the lock, not the
	// migration, and starts only when the session is found held.
	Wait    bool
	WaitFor time.Duration
	Command string
	// FS is the filesystem; nil means vfs.OS().
	FS vfs.FS
}

// MigrateFile upgrades one version 1 or 2 session file to version 3 in
// place, streaming it (memory is bounded by its longest line), under the
// session's writer lock: see migrate.File for the atomic replacement, the
// backup and the original's mode, owner and group, which the new file
// keeps. The header is read first, without the lock: version 3 files are
// left alone and never locked (no lock file is created for them); newer
// versions are refused with a *VersionError; a file without a valid
// header is refused with a *CorruptError; a file that may not be
// rewritten (read-only, or not writable by the caller) is refused before
// the lock is taken. All of these leave the file untouched. Every error
// names the file. Temporary files an interrupted earlier run left (see
// TempFiles) are removed once the lock is held.
func MigrateFile(ctx context.Context, path string, o MigrateOptions) (migrate.FileResult, error) {
	res := migrate.FileResult{Path: path}
	v, err := migrate.FileVersion(ctx, o.FS, path)
	res.From, res.To = v, int(v)
	if err != nil || !migrate.Needed(v) {
		return res, err
	}
	if o.DryRun {
		return migrate.File(ctx, path, migrate.FileOptions{FS: o.FS, DryRun: true, NoBackup: o.NoBackup})
	}
	if _, err := vfs.CheckReplace(orOS(o.FS), path); err != nil {
		return res, err
	}
	opts := Options{FS: o.FS, Command: o.Command, LockMode: "migrate"}
	rel, err := acquireLock(ctx, path, opts)
	if errors.Is(err, ErrLocked) && o.Wait {
		held := err
		wctx, cancel := ctx, func() {}
		if o.WaitFor > 0 {
			wctx, cancel = context.WithTimeout(ctx, o.WaitFor)
		}
		opts.Wait = true
		rel, err = acquireLock(wctx, path, opts)
		if err != nil && !errors.Is(err, ErrLocked) && wctx.Err() != nil {
			// The wait ended before another try: still held.
			err = fmt.Errorf("%w: gave up waiting: %w", held, wctx.Err())
		}
		cancel()
	}
	if err != nil {
		return res, err
	}
	defer rel()
	// What an interrupted migration (or other write) of this session left
	// is stale now that the lock is held.
	if abs, err := filepath.Abs(path); err == nil {
		if temps, err := tempFiles(opts.fs(), abs); err == nil {
			for _, tmp := range temps {
				_ = opts.fs().Remove(tmp)
			}
		}
	}
	return migrate.File(ctx, path, migrate.FileOptions{FS: o.FS, NoBackup: o.NoBackup})
}
